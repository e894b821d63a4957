package server

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// Fuzz targets for the server's parsers. Seeds live in f.Add and in
// testdata/fuzz/<FuzzName>/; `go test` runs them as regression tests and
// scripts/fuzz.sh fuzzes each for a while.

var fuzzKey = []byte("fuzz-signing-key-0123456789abcdefghijklmnopqrstuv")

const fuzzBase = "http://127.0.0.1:8080"

// FuzzJWTVerify: the server's verification path must agree with a
// straightforward golang-jwt check on every input: same accept or reject,
// same subject. It is called twice per input so any cache in front of the
// verifier is covered too.
func FuzzJWTVerify(f *testing.F) {
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	st := memory.New()
	ts := newTokenService(fuzzKey, fuzzBase, fuzzBase+"/mcp", clk, st)
	good, _ := ts.Issue("u_alice")
	other := newTokenService([]byte("another-key-0123456789abcdefghijklmnop"), fuzzBase, fuzzBase+"/mcp", clk, st)
	wrongKey, _ := other.Issue("u_alice")
	wrongAud := newTokenService(fuzzKey, fuzzBase, "http://evil.example/mcp", clk, st)
	badAud, _ := wrongAud.Issue("u_alice")
	parts := strings.Split(good.Raw, ".")
	f.Add(good.Raw)
	f.Add(wrongKey.Raw)
	f.Add(badAud.Raw)
	f.Add("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + ".")
	f.Add(parts[0] + "." + parts[1] + ".AAAA" + parts[2][4:])
	f.Add("")
	f.Add("a.b.c")
	f.Add(strings.Repeat("x", 5000))
	reference := jwt.NewParser(
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithLeeway(30*time.Second), jwt.WithIssuer(fuzzBase),
		jwt.WithAudience(fuzzBase+"/mcp"), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(clk.Now),
	)
	f.Fuzz(func(t *testing.T, raw string) {
		var refClaims jwt.RegisteredClaims
		_, refErr := reference.ParseWithClaims(raw, &refClaims, func(*jwt.Token) (any, error) { return fuzzKey, nil })
		refOK := refErr == nil && refClaims.Subject != "" && refClaims.ID != ""
		for range 2 {
			claims, err := ts.Verify(context.Background(), raw)
			if (err == nil) != refOK {
				t.Fatalf("server accepts=%v, golang-jwt accepts=%v (%v) for %q", err == nil, refOK, refErr, raw)
			}
			if err == nil && claims.Subject != refClaims.Subject {
				t.Fatalf("subject %q, golang-jwt says %q", claims.Subject, refClaims.Subject)
			}
		}
	})
}

var apiKeyShape = regexp.MustCompile(`^mcpa_[0-9A-Za-z]{43}$`)

// FuzzAPIKeyParse: only the exact key shape is ever looked up.
func FuzzAPIKeyParse(f *testing.F) {
	k, _ := newAPIKey()
	f.Add(k)
	f.Add("mcpa_")
	f.Add(k + "x")
	f.Add(strings.Replace(k, "a", "-", 1))
	f.Add("eyJhbGciOiJIUzI1NiJ9.e30.x")
	f.Fuzz(func(t *testing.T, s string) {
		if looksLikeAPIKey(s) != apiKeyShape.MatchString(s) {
			t.Fatalf("looksLikeAPIKey(%q) = %v, shape says %v", s, looksLikeAPIKey(s), apiKeyShape.MatchString(s))
		}
	})
}

// FuzzRedirectURI: registration only accepts safe URIs, and matching
// accepts the registered URI, loopback port variants of it, and nothing else.
func FuzzRedirectURI(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:9999/callback", "https://app.example.com/cb", "com.example.app:/cb", "http://localhost/cb",
		"http://[::1]:80/cb", "javascript:alert(1)", "http://evil.example/cb", "https://a.example/cb#frag",
		"http://127.0.0.1@evil.example/", "HTTP://127.0.0.1/x", "http://127.0.0.1:0/cb", "http://127.0.0.1:99999/cb",
	} {
		f.Add(s, "http://127.0.0.1:1234/callback")
	}
	f.Fuzz(func(t *testing.T, reg, got string) {
		if checkRedirectURI(reg) == "" {
			u, err := url.Parse(reg)
			if err != nil || !u.IsAbs() || u.Fragment != "" || u.User != nil {
				t.Fatalf("registered unsafe URI %q", reg)
			}
			if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) || u.Scheme != "http" && u.Scheme != "https" && !strings.Contains(u.Scheme, ".") {
				t.Fatalf("registered URI with a bad scheme or host: %q", reg)
			}
			if !redirectURIRegistered([]string{reg}, reg) {
				t.Fatalf("the registered URI itself does not match: %q", reg)
			}
		}
		if got != reg && redirectURIRegistered([]string{reg}, got) {
			a, _ := url.Parse(reg)
			b, err := url.Parse(got)
			if err != nil || a.Scheme != "http" || b.Scheme != "http" || a.Hostname() != b.Hostname() || a.Path != b.Path || a.RawQuery != b.RawQuery || b.User != nil {
				t.Fatalf("%q matched registered %q though it differs in more than the port", got, reg)
			}
			if !isLoopbackHost(a.Hostname()) || strings.EqualFold(a.Hostname(), "localhost") {
				t.Fatalf("port variance allowed for a non-IP-loopback host: %q vs %q", got, reg)
			}
		}
	})
}

var userCodeShape = regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[0-9]{4}$`)

// FuzzUserCode: normalisation yields "" or a canonical code, is idempotent,
// and ignores case, hyphens and spaces.
func FuzzUserCode(f *testing.F) {
	for _, s := range []string{"BCDF-1234", "bcdf1234", " b c d f - 1 2 3 4 ", "AEIO-1234", "BCDF-12345", "ＢＣＤＦ-1234", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := normalizeUserCode(in)
		if out == "" {
			return
		}
		if !userCodeShape.MatchString(out) {
			t.Fatalf("normalizeUserCode(%q) = %q: not canonical", in, out)
		}
		if normalizeUserCode(out) != out || normalizeUserCode(strings.ToLower(out)) != out || normalizeUserCode(strings.ReplaceAll(out, "-", "")) != out {
			t.Fatalf("normalisation of %q is not stable", out)
		}
	})
}
