//go:build unix

package creds

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
func TestCheckPrivateFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(file, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		mode  os.FileMode
		allow bool
		bad   bool
	}{
		{0o600, false, false}, {0o400, false, false}, {0o700, false, false},
		{0o644, false, true}, {0o640, false, true}, {0o620, false, true}, {0o602, false, true}, {0o444, false, true},
		{0o644, true, false},
	} {
		if err := os.Chmod(file, tt.mode); err != nil {
			t.Fatal(err)
		}
		err := CheckPrivateFile("--private-key-file", file, tt.allow)
		if got := err != nil; got != tt.bad {
			t.Errorf("mode %04o allow %v: %v", tt.mode, tt.allow, err)
		}
		if err != nil && (!errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "chmod 600 "+file)) {
			t.Errorf("mode %04o: want ErrInput: %v", tt.mode, err)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, dir, filepath.Join(dir, "missing"), "-", ""} {
		if err := CheckPrivateFile("--client-secret-file", p, false); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
