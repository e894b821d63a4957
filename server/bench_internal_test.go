package server

import (
	"context"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// go test -run '^$' -bench 'JWT|APIKey' ./server/

func benchTokens() *tokenService {
	return newTokenService(fuzzKey, fuzzBase, fuzzBase+"/mcp", clock.NewFake(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)), memory.New())
}

func BenchmarkJWTIssue(b *testing.B) {
	ts := benchTokens()
	for b.Loop() {
		if _, err := ts.Issue("u_bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// Verification without the cache: parse, signature, claims, revocation.
func BenchmarkJWTVerify(b *testing.B) {
	ts := benchTokens()
	tok, _ := ts.Issue("u_bench")
	for b.Loop() {
		if _, err := ts.Verify(context.Background(), tok.Raw); err != nil {
			b.Fatal(err)
		}
	}
}

// The cache's hit path, which replaces BenchmarkJWTVerify on a single
// instance.
func BenchmarkJWTCacheHit(b *testing.B) {
	c := newCredentialCache()
	raw := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + string(make([]byte, 200))
	exp := time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)
	c.putJWT(tokenKey(raw), cachedJWT{sub: "u", jti: "j", exp: exp}, c.generation())
	now := exp.Add(-time.Hour)
	for b.Loop() {
		if _, ok := c.jwt(tokenKey(raw), now); !ok {
			b.Fatal("miss")
		}
	}
}

func BenchmarkAPIKeyLookupMemory(b *testing.B) {
	s, err := New(context.Background(), Config{BaseURL: fuzzBase, Store: memory.New(), SigningKey: fuzzKey})
	if err != nil {
		b.Fatal(err)
	}
	key, err := s.regenerateAPIKey(context.Background(), "u_bench")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.authenticate(context.Background(), key); err != nil {
			b.Fatal(err)
		}
	}
}

// What metrics add per request, alone (the ping benchmarks on a shared
// machine are too noisy to show it): with metrics off, a nil check.
func BenchmarkMetricsRequest(b *testing.B) {
	for _, c := range []struct {
		name string
		m    *Metrics
	}{{"off", nil}, {"on", NewMetrics()}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.m.request("GET /api/ping", 200, time.Millisecond)
			}
		})
	}
}
