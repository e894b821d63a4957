package cmdutil

import (
	"os"
	"runtime"
)

// AllowInsecureKeyFileFlag is login's override of CheckPrivateFile.
const AllowInsecureKeyFileFlag = "--allow-insecure-key-file"

// CheckPrivateFile refuses a key, secret or assertion file that group or
// others may read or write (exit 2), as ssh refuses such a private key:
// whoever else can read it can act as this client. flag names the option
// that gave path, for the message; allow is AllowInsecureKeyFileFlag. Only
// regular files are checked (a pipe from `<(pass show …)` has no owner to
// trust), and a file that cannot be stat'ed is left to the read that
// follows, which says why. Windows has no POSIX mode bits to check.
func CheckPrivateFile(flag, path string, allow bool) error {
	if allow || path == "" || path == "-" || runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return FlagErrorf("%s %s is accessible by group or others (mode %04o): run chmod 600 %s, or pass %s to use it anyway (unsafe)",
			flag, path, perm, path, AllowInsecureKeyFileFlag)
	}
	return nil
}
