package keyring

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// settingsFile holds the remembered storage choice beside the token files,
// so every later command finds it without asking again.
const settingsFile = "settings.json"

const maxSettingsSize = 64 << 10

// SettingsPath is the file in dir holding the remembered settings.
func SettingsPath(dir string) string { return filepath.Join(dir, settingsFile) }

// Settings are the user's remembered choices.
type Settings struct {
	// Storage is the remembered choice; "" or auto means none.
	Storage Storage `json:"storage,omitempty"`
	// Reason says why it was chosen, e.g. "Secret Service locked".
	Reason string    `json:"reason,omitempty"`
	SetAt  time.Time `json:"set_at,omitzero"`
}

// LoadSettings reads dir's settings; a missing file is no choice (auto).
// A file others may write, or that another user owns (as the folder), is
// refused: a planted "storage: file" would make the CLI read planted
// plain-file entries.
func LoadSettings(dir string) (Settings, error) {
	if _, err := statDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Settings{}, err
	}
	path := SettingsPath(dir)
	data, err := readFileBounded(path, maxSettingsSize)
	if errors.Is(err, ErrNotFound) {
		return Settings{Storage: StorageAuto}, nil
	}
	if err != nil {
		return Settings{}, err
	}
	if fi, err := os.Lstat(path); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o022 != 0 {
		return Settings{}, fmt.Errorf("keyring: %s is writable by others (mode %v): not trusting it; remove it or chmod 600 it", path, fi.Mode().Perm())
	}
	var s Settings
	if err := json.Unmarshal(data, &s); err != nil {
		return Settings{}, fmt.Errorf("keyring: %s does not decode: %w", path, err)
	}
	if s.Storage, err = ParseStorage(string(s.Storage)); err != nil {
		return Settings{}, fmt.Errorf("keyring: %s: %w", path, err)
	}
	return s, nil
}

// SaveSettings writes s to dir (0600, the dir 0700).
func SaveSettings(dir string, s Settings) error {
	var err error
	if s.Storage, err = ParseStorage(string(s.Storage)); err != nil {
		return err
	}
	if err := ensureDir(dir); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("keyring: encode settings: %w", err)
	}
	return writeFileAtomic(SettingsPath(dir), append(data, '\n'))
}
