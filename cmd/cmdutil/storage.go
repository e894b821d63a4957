package cmdutil

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/keyring"
)

// StorageChoice is the storage a command uses and why.
type StorageChoice struct {
	Storage keyring.Storage
	// Remembered is the choice kept in the token directory (Storage
	// auto when there is none); Storage differs from it only when
	// --storage or MCPAUTH_STORAGE overrides it.
	Remembered keyring.Settings
	Overridden bool
	Dir        string
}

// SettingsPath is the file holding the remembered choice.
func (c StorageChoice) SettingsPath() string { return keyring.SettingsPath(c.Dir) }

// StorageChoice is the one place that decides the storage: --storage or
// MCPAUTH_STORAGE for this command, else the remembered choice (`mcpauth
// config set storage`, or an agreed file fallback), else auto.
func (f *Factory) StorageChoice() (StorageChoice, error) {
	dir := cmp.Or(f.Globals.ConfigDir, f.Getenv("MCPAUTH_CONFIG_DIR"))
	if dir == "" {
		var err error
		if dir, err = keyring.DefaultDir(); err != nil {
			return StorageChoice{}, clierr.WithExit(clierr.ExitStorage, err)
		}
	}
	remembered, err := keyring.LoadSettings(dir)
	if err != nil {
		return StorageChoice{}, clierr.WithExit(clierr.ExitStorage, fmt.Errorf("reading the remembered storage choice: %w", err))
	}
	c := StorageChoice{Storage: remembered.Storage, Remembered: remembered, Dir: dir}
	// "keyring" or "file" can only have been given; "auto" is also the
	// flag's default, so it overrides only when given.
	if g := f.Globals; g.StorageSet || (g.Storage != "" && g.Storage != string(keyring.StorageAuto)) {
		if c.Storage, err = keyring.ParseStorage(f.Globals.Storage); err != nil {
			return StorageChoice{}, clierr.FlagErrorf("--storage: %v", err)
		}
		c.Overridden = true
	}
	return c, nil
}

func (f *Factory) storeConfig() (keyring.Config, StorageChoice, error) {
	c, err := f.StorageChoice()
	if err != nil {
		return keyring.Config{}, c, err
	}
	return keyring.Config{Storage: c.Storage, Dir: c.Dir, Backend: f.KeyringBackend, Timeout: f.KeyringTimeout}, c, nil
}

// OpenStoreToRead opens token storage for a command that never stores
// (status, token, ping, logout, the proxy's reads): it never asks. With
// file storage chosen it reads plain-file entries, and keyring entries
// through the keyring. With no OS keyring in auto mode it neither asks nor
// fails: entries are listed and can be deleted, and loading one the keyring
// protects fails with the keyring's error (exit 7). An explicit keyring
// choice still requires the keyring.
func (f *Factory) OpenStoreToRead() (*keyring.Store, error) {
	cfg, _, err := f.storeConfig()
	if err != nil {
		return nil, err
	}
	cfg.KeyringOptional = true
	st, err := keyring.Open(cfg)
	if err != nil {
		return nil, clierr.WithExit(clierr.ExitStorage, fmt.Errorf("opening token storage: %w", err))
	}
	return st, nil
}

// OpenStore opens token storage to write to. With no OS keyring in auto
// mode it never falls back silently: it asks on a terminal, remembers a
// yes (so later commands do not ask again), and refuses otherwise.
func (f *Factory) OpenStore() (*keyring.Store, error) {
	cfg, choice, err := f.storeConfig()
	if err != nil {
		return nil, err
	}
	st, err := keyring.Open(cfg)
	if err == nil {
		f.sayRemembered(choice)
		return st, nil
	}
	if !errors.Is(err, keyring.ErrKeyringUnavailable) || cfg.Storage != keyring.StorageAuto {
		return nil, clierr.WithExit(clierr.ExitStorage, fmt.Errorf("opening token storage: %w", err))
	}
	cause := KeyringCause(err)
	if !f.IO.CanPrompt() {
		return nil, clierr.WithExit(clierr.ExitStorage, fmt.Errorf("no OS keyring is available (%v), and tokens are never written to a plain file without consent: "+
			"use --storage=file or MCPAUTH_STORAGE=file to opt in, or `mcpauth config set storage file` to remember it", cause))
	}
	fmt.Fprintf(f.IO.ErrOut, "No OS keyring is available (%v).\nA yes is remembered for later commands (change it with `mcpauth config set storage`).\n"+
		"Store tokens in a file readable only by you, without keyring protection? [y/N] ", cause)
	answer, _ := bufio.NewReader(io.LimitReader(f.IO.In, 256)).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return nil, clierr.WithExit(clierr.ExitStorage, errors.New("no token storage: declined the file fallback (use --storage=file to choose it up front)"))
	}
	ui := NewUI(f)
	agreed := keyring.Settings{Storage: keyring.StorageFile, Reason: keyring.Reason(err), SetAt: f.Clock.Now().UTC()}
	if serr := keyring.SaveSettings(cfg.Dir, agreed); serr != nil {
		ui.Warn("could not remember the file storage choice (%v): later commands will ask again", serr)
	}
	cfg.Storage = keyring.StorageFile
	if st, err = keyring.Open(cfg); err != nil {
		return nil, clierr.WithExit(clierr.ExitStorage, fmt.Errorf("opening token storage: %w", err))
	}
	// Said before anything is written, not after (cli/cli#13920).
	ui.Warn("tokens will be stored without keyring protection in %s (%s); `mcpauth config set storage auto` goes back to the keyring and moves these logins into it", st.Dir(), agreed.Reason)
	return st, nil
}

// sayRemembered tells a storing command's user that the storage is a
// remembered file choice, so it is never a surprise once the keyring works.
func (f *Factory) sayRemembered(c StorageChoice) {
	if c.Overridden || c.Remembered.Storage != keyring.StorageFile {
		return
	}
	NewUI(f).Info("Using file storage as remembered (%s, since %s); `mcpauth config set storage auto` uses the keyring again and moves the logins stored in files into it.",
		c.Remembered.Reason, c.Remembered.SetAt.Format("2006-01-02"))
}

// KeyringCause is why the keyring is unavailable, without the wrapping
// that would repeat "keyring unavailable" in a message that says so.
func KeyringCause(err error) error {
	var ue *keyring.UnavailableError
	if errors.As(err, &ue) && ue.Cause != nil {
		return ue.Cause
	}
	return err
}
