package config

import (
	"fmt"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/keyring"
)

// moveFileLogins moves the logins kept in plain files into the OS keyring
// when storage leaves file mode: a keyring store refuses plain-file
// entries, so each would otherwise be stranded (exit 7) until the user
// logged in again. Each move is named; where the keyring cannot be
// reached, what stays behind is named instead.
func moveFileLogins(f *cmdutil.Factory, dir string) {
	ui := cmdutil.NewUI(f)
	st, err := keyring.Open(keyring.Config{Storage: keyring.StorageFile, Dir: dir, Backend: f.KeyringBackend, Timeout: f.KeyringTimeout})
	if err != nil {
		ui.Warn("could not look for logins stored in plain files (%v)", err)
		return
	}
	entries, err := creds.List(st)
	if err != nil {
		ui.Warn("could not look for logins stored in plain files (%v)", err)
		return
	}
	var plain []creds.Entry
	for _, e := range entries {
		if e.Backend == keyring.StorageFile {
			plain = append(plain, e)
		}
	}
	if len(plain) == 0 {
		return
	}
	kst, err := keyring.Open(keyring.Config{Storage: keyring.StorageKeyring, Dir: dir, Backend: f.KeyringBackend, Timeout: f.KeyringTimeout})
	if err != nil {
		ui.Warn("the logins stored in plain files (%d) stay there, and the keyring storage does not read them (%v): run this again where the OS keyring answers, or pass --storage=file to use them",
			len(plain), cmdutil.KeyringCause(err))
		return
	}
	for _, e := range plain {
		if err := move(kst, e); err != nil {
			ui.Warn("the login for %s (%s) stays in a plain file, which the keyring storage does not read: %v", e.Server, e.Account, err)
			continue
		}
		ui.Success("Moved the login for %s (%s) from a plain file into the OS keyring", e.Server, e.Account)
	}
}

// move re-saves one plain-file entry sealed by the keyring; the save
// replaces the plain file.
func move(kst *keyring.Store, e creds.Entry) error {
	b, err := creds.LoadToDrop(kst, e.Server, e.Account)
	if err != nil {
		return err
	}
	if err := creds.Save(kst, e.Server, e.Account, b); err != nil {
		return fmt.Errorf("sealing it in the keyring: %w", err)
	}
	return nil
}
