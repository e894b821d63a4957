package keyring

import (
	"fmt"
	"os"
	"time"
)

const lockPollInterval = 25 * time.Millisecond

// lockFile takes an exclusive OS lock (flock / LockFileEx) on path, retrying
// a bounded number of times. OS locks die with their process, so a crashed
// CLI never leaves a stale lock behind (unlike an O_EXCL lock file).
func lockFile(path string, timeout time.Duration) (unlock func() error, err error) {
	// Not through a symbolic link: a dangling one would create its target.
	f, err := openNoFollow(path, os.O_CREATE|os.O_RDWR, filePerm)
	if err != nil {
		return nil, fmt.Errorf("keyring: open lock file: %w", err)
	}
	if err := checkOpened(f, path); err != nil {
		f.Close()
		return nil, err
	}
	attempts := max(1, int(timeout/lockPollInterval))
	for i := 0; ; i++ {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("keyring: lock: %w", err)
		}
		if ok {
			break
		}
		if i+1 >= attempts {
			f.Close()
			return nil, fmt.Errorf("keyring: gave up after %s: %w", timeout, ErrLocked)
		}
		time.Sleep(lockPollInterval)
	}
	return func() error {
		uerr := unlockFile(f)
		cerr := f.Close()
		if uerr != nil {
			return fmt.Errorf("keyring: unlock: %w", uerr)
		}
		return cerr
	}, nil
}
