package keyring

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The index lists entries for List: OS keyrings cannot be enumerated
// portably, and what an entry holds is sealed; each row keeps the
// caller's metadata (entry.go). It is only
// rewritten under the store lock, entry file first, so a crash can at worst
// leave an entry unlisted until its next Save; List drops rows whose file
// is gone.

const maxIndexSize = 8 << 20

type indexFile struct {
	Version int          `json:"version"`
	Entries []indexEntry `json:"entries"`
}

func (s *Store) indexPath() string { return filepath.Join(s.dir, "index.json") }

func (s *Store) readIndex() (indexFile, error) {
	data, err := readFileBounded(s.indexPath(), maxIndexSize)
	if errors.Is(err, ErrNotFound) {
		return indexFile{Version: layoutVersion}, nil
	}
	if err != nil {
		return indexFile{}, err
	}
	var idx indexFile
	if err := json.Unmarshal(data, &idx); err != nil {
		return indexFile{}, fmt.Errorf("keyring: index.json is corrupt (delete it and log in again): %w", ErrInvalidEntry)
	}
	if idx.Version != layoutVersion {
		return indexFile{}, fmt.Errorf("keyring: index.json has layout version %d, this build reads %d", idx.Version, layoutVersion)
	}
	return idx, nil
}

// updateIndex does a read-modify-write of the index; the caller holds the
// store lock.
func (s *Store) updateIndex(modify func(*indexFile)) error {
	idx, err := s.readIndex()
	if err != nil {
		return err
	}
	modify(&idx)
	slices.SortFunc(idx.Entries, func(a, b indexEntry) int {
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.Account, b.Account)
	})
	data, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return fmt.Errorf("keyring: encode index: %w", err)
	}
	return writeFileAtomic(s.indexPath(), data)
}

func findEntry(idx *indexFile, server, account string) int {
	return slices.IndexFunc(idx.Entries, func(e indexEntry) bool {
		return e.Server == server && e.Account == account
	})
}

// List returns the stored entries sorted by server then account. It reads
// only metadata: no keyring call, no decryption.
func (s *Store) List() ([]EntryInfo, error) {
	idx, err := s.readIndex()
	if err != nil {
		return nil, err
	}
	out := make([]EntryInfo, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		if _, err := os.Stat(filepath.Join(s.dir, e.File)); err != nil {
			continue // deleted, or a Delete crashed between file and index
		}
		out = append(out, e.EntryInfo)
	}
	return out, nil
}
