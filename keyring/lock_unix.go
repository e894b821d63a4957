//go:build unix

package keyring

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock uses flock, which locks per open file description: two Stores in
// one process contend just like two processes.
func tryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return false, nil
	case errors.Is(err, unix.EINTR):
		return false, nil
	}
	return false, err
}

func unlockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }
