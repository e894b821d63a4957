package server_test

import (
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// A registration never used for a login is gone once
// store.UnusedClientLifetime has passed on the server's clock: refused at
// once, removed from the store by the next GC. One used for a login is
// kept, and so is a younger one.
func TestUnusedRegistrationExpires(t *testing.T) {
	t.Parallel()
	for name, open := range storeBackends() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, servertest.Options{Store: open(t)})
			unused := register(t, env).ID
			used := refreshClient(t, env)
			first := used.offline(env.Browser("keeps"))
			env.Clock.Advance(store.UnusedClientLifetime - time.Hour)
			young := register(t, env).ID
			env.Clock.Advance(time.Hour + time.Second)

			// A made-up code names each client at the token endpoint: an
			// unknown client is 401 invalid_client, a known one's code 400.
			resp, body := mustName(t, env, "token", unused)
			oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_client")
			resp, body = mustName(t, env, "token", young)
			oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")

			if _, err := env.Server.CollectGarbage(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := env.Store.GetClient(t.Context(), unused); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the unused registration after GC: %v, want not found", err)
			}
			for _, id := range []string{used.ID, young} {
				if _, err := env.Store.GetClient(t.Context(), id); err != nil {
					t.Fatalf("GC removed %s: %v", id, err)
				}
			}
			userID(t, env, used.mustRefresh(first.RefreshToken, nil).AccessToken)
		})
	}
}

// A registration storing more than 4096 bytes of metadata is refused with
// invalid_client_metadata (RFC 7591 §3.2.2), and nothing reaches the
// SQLite file; a large one under the bound is stored.
func TestOversizedRegistrationRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcpauth.db")
	st, err := sqlstore.OpenSQLite(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	env := servertest.New(t, servertest.Options{Store: st})
	uris := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("https://app.example/%d/%s", i, strings.Repeat("p", 425)) // 450 bytes
		}
		return out
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows := func() (n int) {
		if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM clients`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	registerMeta(t, env, map[string]any{"client_name": "Large", "redirect_uris": uris(8)})
	if n := rows(); n != 1 {
		t.Fatalf("%d clients stored, want 1", n)
	}
	resp, body := postJSON(t, env.URL+"/oauth/register", map[string]any{"client_name": "Too large", "redirect_uris": uris(10)})
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_client_metadata")
	if !strings.Contains(string(body), "at most 4096") {
		t.Errorf("the refusal does not say the bound: %s", body)
	}
	if n := rows(); n != 1 {
		t.Fatalf("%d clients stored after the refusal, want 1", n)
	}
}
