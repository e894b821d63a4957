package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server/store"
)

// Code exchanges on SQLite from 16 concurrent callers, the codes stored
// beforehand (the authorize flow is not measured):
//
//	go test -run '^$' -bench CodeExchangeSQLite -cpuprofile cpu.out ./server/
func BenchmarkCodeExchangeSQLite(b *testing.B) { benchCodeExchange(b, sqliteStore(b)) }

// The same on PostgreSQL (under scripts/with-postgres.sh); PostgreSQL's own
// CPU is not in the profile.
func BenchmarkCodeExchangePostgres(b *testing.B) { benchCodeExchange(b, postgresStore(b)) }

func benchCodeExchange(b *testing.B, st store.Store) {
	h := benchServer(b, st, true)
	id := benchClient(b, h)
	ctx := context.Background()
	const redirect = "http://127.0.0.1:9/callback"
	verifier, _ := pkce.NewVerifier()
	challenge := pkce.S256(verifier)
	n := b.N + 1000 // b.Loop may run a few more than b.N
	now := time.Now()
	for i := range n {
		sum := sha256.Sum256([]byte(fmt.Sprint("code-", i)))
		if err := st.CreateAuthCode(ctx, store.AuthCode{Hash: hex.EncodeToString(sum[:]), ClientID: id, RedirectURI: redirect,
			CodeChallenge: challenge, Scope: "mcp", UserID: "u_bench", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	b.SetParallelism(8) // 16 callers on 2 cores, as tools/bench runs
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := url.Values{"grant_type": {"authorization_code"}, "code": {fmt.Sprint("code-", next.Add(1)-1)},
				"redirect_uri": {redirect}, "client_id": {id}, "code_verifier": {verifier}}.Encode()
			req := httptest.NewRequest("POST", "/oauth/token", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if code := serve(h, req); code != 200 {
				b.Errorf("exchange: HTTP %d", code)
				return
			}
		}
	})
}
