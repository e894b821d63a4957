//go:build unix

package keyring

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens path, refusing a symbolic link as its last element: a
// link planted in the folder would have the CLI read, or create, a file
// elsewhere. O_NONBLOCK keeps a planted FIFO from hanging the open; the
// caller then refuses it as not a regular file (regular files ignore it).
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		// ELOOP on Linux and macOS, EMLINK or EFTYPE on some BSDs: ask.
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is a symbolic link: not following it; remove it: %w", path, ErrUntrusted)
		}
		return nil, err
	}
	return f, nil
}

// checkOwner refuses a file or folder that belongs to a user other than
// this one or root, as ssh does in ~/.ssh: its owner could have written
// anything into it, such as a token of his own for us to present.
func checkOwner(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Getuid(); st.Uid != 0 && int64(st.Uid) != int64(uid) {
		return fmt.Errorf("keyring: %s is owned by uid %d, not by you (uid %d) or root: not trusting it; remove it, or chown it if it is yours: %w",
			path, st.Uid, uid, ErrUntrusted)
	}
	return nil
}
