package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpauth/mcpauth/server/store"
)

// seedRowsPerStatement keeps a multi-row INSERT under both dialects' limits
// on bound parameters (SQLite 32,766, PostgreSQL 65,535): 10 a row.
const seedRowsPerStatement = 500

// InsertDeviceCodes stores ds in one transaction, as multi-row INSERTs:
// how tools/bench seeds a million pending device flows in seconds rather
// than the minutes CreateDeviceCode's transaction per code takes. It does
// none of CreateDeviceCode's replacing of expired records: any hash or user
// code hash already stored fails the whole call and stores nothing. Not
// part of store.Store: the server never needs it.
func (s *Store) InsertDeviceCodes(ctx context.Context, ds []store.DeviceCode) error {
	defer s.lockWrite()()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("insert device codes: %w", err)
	}
	defer tx.Rollback() // no-op after Commit
	for len(ds) > 0 {
		batch := ds[:min(len(ds), seedRowsPerStatement)]
		ds = ds[len(batch):]
		var q strings.Builder
		q.WriteString(`INSERT INTO device_codes (` + deviceCols + `) VALUES `)
		args := make([]any, 0, 10*len(batch))
		for i, d := range batch {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)")
			args = append(args, d.Hash, d.UserCodeHash, d.ClientID, d.Scope, string(d.Status), d.UserID,
				int64(d.Interval), ms(d.LastPollAt), ms(d.CreatedAt), ms(d.ExpiresAt))
		}
		if _, err := tx.ExecContext(ctx, s.d.rebind(q.String()), args...); err != nil {
			return s.insertErr("insert device codes", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("insert device codes: commit: %w", err)
	}
	return nil
}
