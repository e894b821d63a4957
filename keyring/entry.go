package keyring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// maxMetaSize bounds the caller's metadata per entry: it is listed in the
// index, in clear, for every entry.
const maxMetaSize = 4 << 10

// EntryInfo is the non-secret part of an entry, as listed by (*Store).List.
type EntryInfo struct {
	Server    string
	Account   string
	Backend   Storage // StorageKeyring or StorageFile
	UpdatedAt time.Time
	// Meta is the caller's description of the entry as given to Save (a
	// JSON object, or nil): listed in clear, without any keyring call, so
	// it must hold nothing secret.
	Meta json.RawMessage
}

// indexEntry is an index row. On disk it is one flat JSON object: the
// caller's metadata members beside the store's own, which is the layout
// entries had when the store still knew what a credential holds.
type indexEntry struct {
	EntryInfo
	File string
}

// indexOwn are the members the store owns in an index row.
type indexOwn struct {
	Server    string    `json:"server"`
	Account   string    `json:"account"`
	Backend   Storage   `json:"backend"`
	UpdatedAt time.Time `json:"updated_at"`
	File      string    `json:"file"`
}

var indexOwnMembers = []string{"server", "account", "backend", "updated_at", "file"}

func (e indexEntry) MarshalJSON() ([]byte, error) {
	row := map[string]json.RawMessage{}
	if len(e.Meta) > 0 {
		if err := json.Unmarshal(e.Meta, &row); err != nil {
			return nil, fmt.Errorf("keyring: entry metadata: %w", err)
		}
	}
	own, err := json.Marshal(indexOwn{Server: e.Server, Account: e.Account, Backend: e.Backend, UpdatedAt: e.UpdatedAt, File: e.File})
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(own, &row); err != nil {
		return nil, err
	}
	return json.Marshal(row)
}

func (e *indexEntry) UnmarshalJSON(data []byte) error {
	var own indexOwn
	if err := json.Unmarshal(data, &own); err != nil {
		return err
	}
	var row map[string]json.RawMessage
	if err := json.Unmarshal(data, &row); err != nil {
		return err
	}
	for _, k := range indexOwnMembers {
		delete(row, k)
	}
	*e = indexEntry{EntryInfo: EntryInfo{Server: own.Server, Account: own.Account, Backend: own.Backend, UpdatedAt: own.UpdatedAt}, File: own.File}
	if len(row) > 0 {
		meta, err := json.Marshal(row)
		if err != nil {
			return err
		}
		e.Meta = meta
	}
	return nil
}

// checkMeta accepts a JSON object of bounded size whose members do not
// collide with the store's own, or nothing.
func checkMeta(meta []byte) error {
	if len(bytes.TrimSpace(meta)) == 0 {
		return nil
	}
	if len(meta) > maxMetaSize {
		return fmt.Errorf("keyring: entry metadata is %d bytes, limit %d: %w", len(meta), maxMetaSize, ErrTooLarge)
	}
	var row map[string]json.RawMessage
	if err := json.Unmarshal(meta, &row); err != nil || row == nil {
		return fmt.Errorf("keyring: entry metadata must be a JSON object")
	}
	for _, k := range indexOwnMembers {
		if _, ok := row[k]; ok {
			return fmt.Errorf("keyring: entry metadata may not set %q", k)
		}
	}
	return nil
}
