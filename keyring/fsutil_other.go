//go:build !unix

package keyring

import (
	"io/fs"
	"os"
)

// openNoFollow is os.OpenFile: Windows has no O_NOFOLLOW, and creating a
// symbolic link there takes a privilege; the profile's ACL guards the folder.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

// checkOwner accepts everything: there are no POSIX owners to compare.
func checkOwner(string, fs.FileInfo) error { return nil }
