package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/keyring"
)

const (
	unlockFix  = "unlock it: run `gnome-keyring-daemon --unlock` and type the password, then Ctrl-D, or unlock it in your desktop's keyring app (Passwords and Keys)"
	storageFix = "use --storage=file (MCPAUTH_STORAGE=file) to keep tokens in owner-only files"
)

// tokenDir is where token storage lives, as the factory opens it.
func tokenDir(opts *Options) (string, error) {
	if dir := cmp.Or(opts.F.Globals.ConfigDir, opts.Getenv("MCPAUTH_CONFIG_DIR")); dir != "" {
		return dir, nil
	}
	return keyring.DefaultDir()
}

// tokenFiles checks that the token folder and its files are owner-only.
// It runs before keyringCheck, whose store creates the folder.
func tokenFiles(opts *Options) Check {
	c := Check{ID: "token-files"}
	if opts.GOOS == "windows" {
		c.Status, c.Detail = Pass, "not checked on Windows: the user profile's ACL protects the folder"
		return c
	}
	dir, err := tokenDir(opts)
	if err != nil {
		c.Status, c.Detail, c.Fix = Fail, err.Error(), "set MCPAUTH_CONFIG_DIR to a folder of your own"
		return c
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		c.Status, c.Detail = Pass, fmt.Sprintf("no token folder yet (%s): nothing stored", dir)
		return c
	}
	if err != nil {
		c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("cannot read the token folder: %v", err), "fix the permissions of "+dir+" (chmod 700)"
		return c
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("%s is %04o, others can read it (want 0700)", dir, perm), "chmod 700 "+dir
		return c
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("cannot list the token folder: %v", err), "chmod 700 "+dir
		return c
	}
	var loose []string
	for _, e := range entries {
		info, err := e.Info()
		if err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o077 != 0 {
			loose = append(loose, filepath.Join(dir, e.Name()))
		}
	}
	if len(loose) > 0 {
		c.Status = Fail
		c.Detail = fmt.Sprintf("%d file(s) readable by others (want 0600): %s", len(loose), strings.Join(loose, ", "))
		c.Fix = "chmod 600 " + strings.Join(loose, " ")
		return c
	}
	c.Status, c.Detail = Pass, fmt.Sprintf("%s is 0700 and its %d file(s) owner-only", dir, len(entries))
	return c
}

// keyringCheck probes the Secret Service without prompting (to tell locked
// from absent), then proves the keyring usable with a round trip under a
// throwaway item.
func keyringCheck(ctx context.Context, opts *Options) Check {
	c := Check{ID: "keyring"}
	// An unreadable settings file or a bad --storage is the command's to
	// report; here it only means file storage was not chosen.
	choice, _ := opts.F.StorageChoice()
	fileChosen := choice.Storage == keyring.StorageFile
	probeCtx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	err := keyring.ProbeSecretService(probeCtx, opts.Getenv)
	if errors.Is(err, errors.ErrUnsupported) {
		err = nil // not a Secret Service platform: the round trip decides
	}
	if err == nil {
		err = roundTrip(opts)
	}
	switch {
	case err == nil && fileChosen:
		c.Status, c.Detail, c.Fix = Warn, "the OS keyring is usable, but "+fileWhy(choice)+" keeps tokens in plain files", fileUndo(choice)
		return c
	case err == nil:
		c.Status, c.Detail = Pass, "OS keyring usable: a throwaway item was written, read back and deleted"
		return c
	case fileChosen:
		// The documented choice for machines without one: nothing to fix.
		c.Status, c.Detail = Pass, "not needed: "+fileWhy(choice)+" keeps tokens in owner-only files; "+keyringDetail(err)
		return c
	}
	c.Status, c.Detail, c.Fix = Fail, keyringDetail(err), keyringFix(err)
	return c
}

// fileWhy names where the file storage choice comes from.
func fileWhy(c cmdutil.StorageChoice) string {
	switch {
	case c.Overridden:
		return "--storage=file (or MCPAUTH_STORAGE=file)"
	case c.Remembered.Reason != "":
		return "the remembered choice `storage: file` (" + c.Remembered.Reason + ")"
	}
	return "the remembered choice `storage: file`"
}

// fileUndo is how to go back to the keyring from where file storage came.
func fileUndo(c cmdutil.StorageChoice) string {
	if c.Overridden {
		return "drop --storage=file (unset MCPAUTH_STORAGE) and log in again"
	}
	return "run `mcpauth config set storage auto` and log in again"
}

// roundTrip goes through go-keyring, which finds the bus in the process's
// environment: the probe before it, on the injected one, has already said
// whether there is a keyring to try. Open creates the token folder (0700),
// as any login would; tokenFiles ran first and reported it as it was.
func roundTrip(opts *Options) error {
	dir, err := tokenDir(opts)
	if err != nil {
		return err
	}
	st, err := keyring.Open(keyring.Config{Dir: dir, Storage: keyring.StorageKeyring, Backend: opts.F.KeyringBackend, Timeout: opts.F.KeyringTimeout})
	if err != nil {
		return err
	}
	return st.RoundTrip()
}

func keyringDetail(err error) string {
	var te *keyring.TimeoutError
	switch {
	case errors.Is(err, keyring.ErrKeyringLocked):
		return "the OS keyring (Secret Service) is locked"
	case errors.As(err, &te):
		return fmt.Sprintf("the OS keyring did not answer within %s (locked, and waiting on an unlock prompt nobody sees?)", te.Timeout)
	case errors.Is(err, keyring.ErrNoSessionBus):
		// Its own text ends with a fix; ours is in the fix column.
		return "no D-Bus session bus to reach the Secret Service over (DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus)"
	}
	return "the OS keyring is not usable: " + cmdutil.KeyringCause(err).Error()
}

func keyringFix(err error) string {
	var te *keyring.TimeoutError
	switch {
	case errors.Is(err, keyring.ErrKeyringLocked), errors.As(err, &te):
		return unlockFix
	case errors.Is(err, keyring.ErrNoSessionBus):
		return "log in to a desktop session (or run `dbus-run-session -- $SHELL` and start gnome-keyring-daemon in it), or " + storageFix
	case errors.Is(err, keyring.ErrNoSecretService):
		return "install and start gnome-keyring (apt-get install gnome-keyring; gnome-keyring-daemon --start --components=secrets), or " + storageFix
	case strings.Contains(err.Error(), "session bus at"):
		return "point DBUS_SESSION_BUS_ADDRESS at your running session bus (or unset it), or " + storageFix
	}
	return storageFix
}
