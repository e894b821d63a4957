//go:build unix

package keyfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Only a regular file's group and other bits count: owner-only modes pass,
// any group or other bit (read or write) is refused, and what is not a
// regular file, or not there, is left to the read that follows.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(file, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		mode os.FileMode
		bad  bool
	}{
		{0o600, false}, {0o400, false}, {0o700, false},
		{0o644, true}, {0o640, true}, {0o620, true}, {0o602, true}, {0o444, true},
	} {
		if err := os.Chmod(file, tt.mode); err != nil {
			t.Fatal(err)
		}
		err := Check(file)
		if got := err != nil; got != tt.bad {
			t.Errorf("mode %04o: %v", tt.mode, err)
		}
		var ie *InsecureError
		if err != nil && (!errors.As(err, &ie) || ie.Path != file || ie.Perm != tt.mode || !strings.Contains(err.Error(), file)) {
			t.Errorf("mode %04o: want an *InsecureError naming the file and its mode: %v", tt.mode, err)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, dir, filepath.Join(dir, "missing"), "-", ""} {
		if err := Check(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
