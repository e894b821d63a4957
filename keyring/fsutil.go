package keyring

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

const (
	dirPerm  fs.FileMode = 0o700
	filePerm fs.FileMode = 0o600
)

// ensureDir creates dir with 0700 and tightens it if it already exists with
// looser permissions: the directory is ours and holds secrets.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return fmt.Errorf("keyring: create dir: %w", err)
	}
	fi, err := statDir(dir)
	if err != nil {
		return err
	}
	// Windows has no POSIX modes; the per-user profile ACL protects the dir.
	if runtime.GOOS != "windows" && fi.Mode().Perm() != dirPerm {
		if err := os.Chmod(dir, dirPerm); err != nil {
			return fmt.Errorf("keyring: chmod dir: %w", err)
		}
	}
	return nil
}

// statDir stats the token folder, refusing a non-directory and a folder of
// another user (checkOwner), before anything in it is trusted or chmod'ed.
// A symbolic link to a folder is followed: dotfile setups link the config.
func statDir(dir string) (fs.FileInfo, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("keyring: stat dir: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("keyring: %s is not a directory", dir)
	}
	return fi, checkOwner(dir, fi)
}

// writeFileAtomic writes data to a 0600 temp file in the same directory and
// renames it over path, so readers see the old or the new file, never a mix.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-*") // CreateTemp uses 0600
	if err != nil {
		return fmt.Errorf("keyring: write %s: %w", filepath.Base(path), err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(filePerm); err != nil && runtime.GOOS != "windows" {
		f.Close()
		return fmt.Errorf("keyring: chmod temp file: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("keyring: write %s: %w", filepath.Base(path), err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("keyring: sync %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("keyring: close %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("keyring: rename %s: %w", filepath.Base(path), err)
	}
	return nil
}

// readFileBounded reads at most limit bytes; a larger file is an error rather
// than an unbounded allocation. A missing file maps to ErrNotFound. A
// symbolic link, a file that is not regular and one of another user are
// refused (ErrUntrusted).
func readFileBounded(path string, limit int64) ([]byte, error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("keyring: open %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	if err := checkOpened(f, path); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("keyring: read %s: %w", filepath.Base(path), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("keyring: %s exceeds %d bytes: %w", filepath.Base(path), limit, ErrTooLarge)
	}
	return data, nil
}

// checkOpened refuses an opened store file that is not a regular file or
// belongs to another user (checkOwner).
func checkOpened(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("keyring: stat %s: %w", filepath.Base(path), err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("keyring: %s is not a regular file (%v): not trusting it; remove it: %w", path, fi.Mode().Type(), ErrUntrusted)
	}
	return checkOwner(path, fi)
}
