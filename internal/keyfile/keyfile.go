// Package keyfile refuses a private file (a key, a client secret, an
// assertion) that group or others may read or write, as ssh refuses such a
// private key: whoever else can read it can act as its owner. The error
// says what is wrong; the command that named the file says how to fix it.
package keyfile

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"
)

// InsecureError is a private file group or others may access.
type InsecureError struct {
	Path string
	Perm fs.FileMode
}

func (e *InsecureError) Error() string {
	return fmt.Sprintf("%s is accessible by group or others (mode %04o)", e.Path, e.Perm)
}

// Check returns an *InsecureError when group or others may access the
// regular file at path. Anything else is left to the read that follows,
// which says why it fails: a path that cannot be stat'ed, a pipe from
// `<(pass show …)` (no owner to trust), "-" (standard input), "". Windows
// has no POSIX mode bits to check.
func Check(path string) error {
	if path == "" || path == "-" || runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return &InsecureError{Path: path, Perm: perm}
	}
	return nil
}
