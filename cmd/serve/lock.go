package serve

import (
	"fmt"
	"os"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
)

// lockDatabase keeps a second `mcpauth serve` off a SQLite file this one
// uses: each instance caches credentials in memory (see
// server.Config.CacheCredentials), so one would keep accepting what the
// other revoked. The lock file sits beside the database and is never
// removed: removing it would let a newcomer lock a fresh inode while the
// holder still holds the old one. Closing the returned file releases it.
func lockDatabase(path string) (*os.File, error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	if !ok {
		f.Close()
		// The quick local fix first: most people starting a second server
		// want one of their own, not a cluster.
		return nil, clierr.WithExit(clierr.ExitFailure, fmt.Errorf("another mcpauth serve is already using %s (it holds %s).\n"+
			"For a second server of its own, give it another database: --db ./other.db (a new SQLite file) or --db :memory: (kept until it stops).\n"+
			"For instances that share users and tokens, point them all at one PostgreSQL database (--db postgres://…): "+
			"a SQLite file serves one instance, because each caches credentials and would not see the other's revocations", path, name))
	}
	return f, nil
}
