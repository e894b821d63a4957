package hostconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// BackupSuffix names the copy of a file kept before mcpauth changes it.
const BackupSuffix = ".mcpauth-backup"

// ReadFile reads a host's file, following a symbolic link (dotfile
// managers link these files) to the file it names; a missing file reads
// as empty, with target the path to create.
func ReadFile(path string) (data []byte, target string, existed bool, err error) {
	target = path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	}
	data, err = os.ReadFile(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, target, false, nil
	}
	if err != nil {
		return nil, target, false, err
	}
	return data, target, true, nil
}

// WriteFile replaces target's content with data, first copying the old
// content (when it existed) to target+BackupSuffix. The new file is
// written beside it and renamed over it, so a host reading it meanwhile
// sees the old or the new file whole; it keeps the old file's mode, and a
// new one is readable by its owner only.
func WriteFile(target string, old, data []byte, existed bool) (backup string, err error) {
	mode := fs.FileMode(0o600)
	if existed {
		fi, err := os.Stat(target)
		if err != nil {
			return "", err
		}
		mode = fi.Mode().Perm()
		backup = target + BackupSuffix
		if err := os.WriteFile(backup, old, 0o600); err != nil {
			return "", fmt.Errorf("keeping a backup: %w", err)
		}
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".mcpauth-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // after a rename there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return backup, os.Rename(tmp.Name(), target)
}
