package creds

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpauth/mcpauth/keyring"
)

// Store is where credentials are kept: opaque bytes under (server,
// account) keys, a listing of what is stored, and a lock per entry that
// holds across processes (a refresh takes it, so two programs never redeem
// one refresh token twice). *keyring.Store is the implementation the CLI
// uses, and the one to choose: it shares the CLI's logins. Another
// implementation must follow keyring's contract: Load of a missing entry
// returns an error matching keyring.ErrNotFound, Save replaces, and List
// returns every entry with the meta its Save was given.
type Store interface {
	Load(server, account string) ([]byte, error)
	Save(server, account string, secret, meta []byte) error
	List() ([]keyring.EntryInfo, error)
	LockEntry(server, account string, timeout time.Duration) (unlock func() error, err error)
}

var _ Store = (*keyring.Store)(nil)

// Summary is what keyring's index lists for an entry, so status and the
// replace notice need no decryption. The member names are those the index
// held before keyring stopped knowing them: an old index lists the same.
type Summary struct {
	Kind Kind `json:"kind"`
	// Expiry is the access token's.
	Expiry time.Time `json:"expiry,omitzero"`
	// Refreshable: a refresh token and the endpoint to redeem it are
	// stored; RefreshExpiry is its expiry when the server said.
	Refreshable   bool      `json:"refreshable,omitempty"`
	RefreshExpiry time.Time `json:"refresh_expiry,omitzero"`
	UserID        string    `json:"user_id,omitempty"`
	UserName      string    `json:"user_name,omitempty"`
}

// Entry is a stored credential as listed: where it is and what it holds,
// without its secrets.
type Entry struct {
	keyring.EntryInfo
	Summary
}

// Save stores b for (server, account), replacing what was there. It
// refuses a bundle that holds no credential of its kind.
func Save(st Store, server, account string, b Bundle) error {
	b, err := b.normalize()
	if err != nil {
		return err
	}
	secret, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("creds: encode bundle: %w", err)
	}
	m, err := json.Marshal(Summary{Kind: b.Kind, Expiry: b.Expiry, Refreshable: b.Refreshable(), RefreshExpiry: b.RefreshExpiry,
		UserID: b.UserID, UserName: b.UserName})
	if err != nil {
		return fmt.Errorf("creds: encode entry metadata: %w", err)
	}
	return st.Save(server, account, secret, m)
}

// Load returns the bundle stored for (server, account), with keyring's
// errors (keyring.ErrNotFound, ErrInvalidEntry, …) as they are.
func Load(st Store, server, account string) (Bundle, error) {
	return decode(st.Load, server, account)
}

// LoadToDrop is Load for a bundle about to be revoked or moved: it reads
// plain-file entries in any storage mode (keyring.Store.LoadToDrop, which
// only the keyring store has).
func LoadToDrop(st *keyring.Store, server, account string) (Bundle, error) {
	return decode(st.LoadToDrop, server, account)
}

func decode(load func(server, account string) ([]byte, error), server, account string) (Bundle, error) {
	data, err := load(server, account)
	if err != nil {
		return Bundle{}, err
	}
	var b Bundle
	if err := json.Unmarshal(data, &b); err != nil {
		return Bundle{}, fmt.Errorf("creds: %q (%s): bundle does not decode: %w", server, account, keyring.ErrInvalidEntry)
	}
	return b, nil
}

// List returns the stored entries, sorted by server then account. It reads
// only the index: no keyring call, no decryption. Metadata that does not
// decode lists as an OAuth entry with nothing known about it.
func List(st Store) ([]Entry, error) {
	infos, err := st.List()
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(infos))
	for _, info := range infos {
		e := Entry{EntryInfo: info}
		if len(info.Meta) > 0 && json.Unmarshal(info.Meta, &e.Summary) != nil {
			e.Summary = Summary{}
		}
		if e.Kind == "" {
			e.Kind = KindOAuth
		}
		out = append(out, e)
	}
	return out, nil
}
