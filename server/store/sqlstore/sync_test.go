package sqlstore

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// Every pooled connection runs with the synchronous level asked for: the
// pragma is per connection, so one opened later must have it too. SQLite
// reports NORMAL as 1 and FULL as 2.
func TestSQLiteSynchronousLevel(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want int
	}{{"default NORMAL", Options{}, 1}, {"SQLiteFullSync", Options{SQLiteFullSync: true}, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s, err := OpenWith(ctx, filepath.Join(t.TempDir(), "mcpauth.db"), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// Three connections held at once: the pool must open new ones.
			var conns []*sql.Conn
			for range 3 {
				c, err := s.db.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, c)
			}
			for i, c := range conns {
				var got int
				if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != tc.want {
					t.Errorf("connection %d: synchronous = %d, want %d", i, got, tc.want)
				}
				c.Close()
			}
			// And the store works as ever: a code is spent once.
			now := time.Unix(1_700_000_000, 0)
			code := store.AuthCode{Hash: "h", ClientID: "c", RedirectURI: "http://127.0.0.1/cb", CodeChallenge: "x", UserID: "u",
				CreatedAt: now, ExpiresAt: now.Add(10 * time.Minute)}
			if err := s.UpsertUser(ctx, store.User{ID: "u", Subject: "s"}); err != nil {
				t.Fatal(err)
			}
			if err := s.CreateAuthCode(ctx, code); err != nil {
				t.Fatal(err)
			}
			r := store.Redemption{ClientID: "c", RedirectURI: code.RedirectURI, CodeChallenge: "x", Now: now.Add(time.Second), TokenID: "t", TokenExp: now.Add(time.Hour)}
			if _, err := s.ConsumeAuthCode(ctx, "h", r); err != nil {
				t.Fatalf("first redemption: %v", err)
			}
			if _, err := s.ConsumeAuthCode(ctx, "h", r); err == nil {
				t.Fatal("second redemption succeeded")
			}
		})
	}
}
