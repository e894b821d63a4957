package keyring

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestSettingsRoundTripOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tokens")
	if s, err := LoadSettings(dir); err != nil || s != (Settings{Storage: StorageAuto}) {
		t.Fatalf("missing file: %+v, %v; want auto", s, err)
	}
	at := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	want := Settings{Storage: StorageFile, Reason: "Secret Service locked", SetAt: at}
	if err := SaveSettings(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := LoadSettings(dir)
	if err != nil || got != want {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	if runtime.GOOS == "windows" {
		return
	}
	for path, perm := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, settingsFile): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != perm {
			t.Fatalf("%s: mode %v, %v; want %v", path, fi.Mode().Perm(), err, perm)
		}
	}
}

func TestSettingsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := SaveSettings(dir, Settings{Storage: "disk"}); err == nil || !strings.Contains(err.Error(), "auto, keyring or file") {
		t.Fatalf("SaveSettings(disk): %v; want the allowed values named", err)
	}
	path := filepath.Join(dir, settingsFile)
	if err := os.WriteFile(path, []byte(`{"storage":"tape"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSettings(dir); err == nil || !strings.Contains(err.Error(), "tape") {
		t.Fatalf("unknown storage: %v", err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	if err := SaveSettings(dir, Settings{Storage: StorageFile}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSettings(dir); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Fatalf("group-writable settings: %v; want refused", err)
	}
}
