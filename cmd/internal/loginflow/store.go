package loginflow

import (
	"context"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// store saves a browser or device login under its StoreKey, then names the
// new account after a migration and revokes the login it replaced,
// wherever that was stored.
func store(ctx context.Context, f *cmdutil.Factory, st *keyring.Store, moved *cmdutil.Migration, disc *flows.Discovery,
	client flows.Client, tok *flows.Token, key *flows.DPoP, user creds.User) error {
	old, replacing := cmdutil.ToDrop(st, creds.StoreKey(disc), f.Globals.Account)
	if err := creds.SaveLogin(st, f.Globals.Account, disc, client, tok, key, user); err != nil {
		return err
	}
	moved.Done(f, disc, user)
	if replacing {
		f.RevokeReplaced(ctx, creds.StoreKey(disc), old)
	}
	return nil
}
