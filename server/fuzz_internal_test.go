package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// Fuzz targets for the server's parsers. Seeds live in f.Add and in
// testdata/fuzz/<FuzzName>/; `go test` runs them as regression tests and
// scripts/fuzz.sh fuzzes each for a while.

var fuzzKey = []byte("fuzz-signing-key-0123456789abcdefghijklmnopqrstuv")

const fuzzBase = "http://127.0.0.1:8080"

// fuzzT0 is the fake clock's start; whole seconds, like NumericDate.
var fuzzT0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// jwtHarness is a Server with the credential cache on (as mcpauth serve runs
// on SQLite) and a golang-jwt parser configured from decisions.md, both on
// the same fake clock.
type jwtHarness struct {
	s   *Server
	clk *clock.Fake
	ref *jwt.Parser
}

func newJWTHarness(f *testing.F) *jwtHarness {
	clk := clock.NewFake(fuzzT0)
	s, err := New(context.Background(), Config{BaseURL: fuzzBase, Store: memory.New(), SigningKey: fuzzKey, Clock: clk, CacheCredentials: true})
	if err != nil {
		f.Fatal(err)
	}
	return &jwtHarness{s: s, clk: clk, ref: jwt.NewParser(
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithLeeway(30*time.Second), jwt.WithIssuer(fuzzBase),
		jwt.WithAudience(fuzzBase+"/mcp"), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(clk.Now),
	)}
}

// check authenticates raw through the server's real bearer path three
// times: at fuzzT0 (a miss that fills the cache), then after each advance
// (hits, if cached). Each answer must equal golang-jwt's at that moment.
// The cache starts empty and the clock only moves forward, as in a real
// process.
func (h *jwtHarness) check(t *testing.T, raw string, advances ...time.Duration) {
	h.clk.Set(fuzzT0)
	h.s.cache = newCredentialCache()
	for i := 0; i <= len(advances); i++ {
		if i > 0 {
			h.clk.Advance(advances[i-1])
		}
		var ref jwt.RegisteredClaims
		_, refErr := h.ref.ParseWithClaims(raw, &ref, func(*jwt.Token) (any, error) { return fuzzKey, nil })
		refOK := refErr == nil && ref.Subject != "" && ref.ID != ""
		p, err := h.s.authenticate(context.Background(), raw)
		if err != nil && !errors.Is(err, errInvalidCredential) {
			t.Fatalf("call %d: not a credential error: %v", i, err)
		}
		if (err == nil) != refOK {
			t.Fatalf("call %d at T0+%s: server accepts=%v, golang-jwt accepts=%v (%v) for %q",
				i, h.clk.Now().Sub(fuzzT0), err == nil, refOK, refErr, raw)
		}
		if err == nil && (p.UserID != ref.Subject || p.Via != "jwt") {
			t.Fatalf("call %d: principal %+v, golang-jwt says subject %q", i, p, ref.Subject)
		}
	}
}

// hs256 signs header.payload (raw JSON, any bytes) with the server's key.
func hs256(header, payload string) string {
	in := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(payload))
	m := hmac.New(sha256.New, fuzzKey)
	m.Write([]byte(in))
	return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// claimsJSON is a payload at offsets (seconds) from fuzzT0.
func claimsJSON(iss, aud, sub, jti string, iat, exp int64) string {
	b, _ := json.Marshal(map[string]any{"iss": iss, "aud": aud, "sub": sub, "jti": jti,
		"iat": fuzzT0.Unix() + iat, "exp": fuzzT0.Unix() + exp})
	return string(b)
}

// FuzzJWTVerify: whatever string arrives as a bearer token, the server's
// verification (parser, claim checks, revocation store, credential cache)
// agrees with a straightforward golang-jwt check: same accept or reject,
// same subject, at the first call and after the clock moves.
func FuzzJWTVerify(f *testing.F) {
	h := newJWTHarness(f)
	good, _ := h.s.tokens.Issue("u_alice")
	parts := strings.Split(good.Raw, ".")
	sign := func(m jwt.SigningMethod, key any, claims jwt.Claims) string {
		s, err := jwt.NewWithClaims(m, claims).SignedString(key)
		if err != nil {
			f.Fatal(err)
		}
		return s
	}
	valid := jwt.RegisteredClaims{Subject: "u_alice", ID: "j1", Issuer: fuzzBase, Audience: jwt.ClaimStrings{fuzzBase + "/mcp"},
		IssuedAt: jwt.NewNumericDate(fuzzT0), ExpiresAt: jwt.NewNumericDate(fuzzT0.Add(time.Hour))}
	with := func(mod func(*jwt.RegisteredClaims)) jwt.RegisteredClaims { c := valid; mod(&c); return c }
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, raw := range []string{
		good.Raw,
		sign(jwt.SigningMethodHS256, fuzzKey, valid),
		sign(jwt.SigningMethodHS384, fuzzKey, valid),
		sign(jwt.SigningMethodHS512, fuzzKey, valid),
		sign(jwt.SigningMethodES256, ec, valid),
		sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, valid),
		sign(jwt.SigningMethodHS256, []byte("another-key-0123456789abcdefghijklmnop"), valid),
		sign(jwt.SigningMethodHS256, fuzzKey, with(func(c *jwt.RegisteredClaims) { c.ExpiresAt = jwt.NewNumericDate(fuzzT0.Add(-time.Minute)) })),
		sign(jwt.SigningMethodHS256, fuzzKey, with(func(c *jwt.RegisteredClaims) { c.ExpiresAt = nil })),
		sign(jwt.SigningMethodHS256, fuzzKey, with(func(c *jwt.RegisteredClaims) { c.IssuedAt = jwt.NewNumericDate(fuzzT0.Add(time.Minute)) })),
		sign(jwt.SigningMethodHS256, fuzzKey, with(func(c *jwt.RegisteredClaims) { c.NotBefore = jwt.NewNumericDate(fuzzT0.Add(time.Minute)) })),
		sign(jwt.SigningMethodHS256, fuzzKey, with(func(c *jwt.RegisteredClaims) { c.Issuer = "http://evil.example" })),
		sign(jwt.SigningMethodHS256, fuzzKey, with(func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"http://evil.example/mcp"} })),
		sign(jwt.SigningMethodHS256, fuzzKey, with(func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"x", fuzzBase + "/mcp"} })),
		sign(jwt.SigningMethodHS256, fuzzKey, with(func(c *jwt.RegisteredClaims) { c.Subject = "" })),
		sign(jwt.SigningMethodHS256, fuzzKey, with(func(c *jwt.RegisteredClaims) { c.ID = "" })),
		"eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + ".",
		parts[0] + "." + parts[1] + ".AAAA" + parts[2][4:],
		parts[0] + "." + parts[1],
		parts[0] + "." + parts[1] + "." + parts[2] + ".",
		"", "a.b.c", "..", "mcpa_x.y.z",
		parts[0] + "." + strings.Repeat("eyJ4IjoiIn0", 20000) + "." + parts[2],
	} {
		f.Add(raw, uint32(0), uint32(0))
	}
	f.Add(good.Raw, uint32(24*3600), uint32(1))
	f.Fuzz(func(t *testing.T, raw string, adv1, adv2 uint32) {
		h.check(t, raw, time.Duration(adv1)*time.Second, time.Duration(adv2)*time.Second)
	})
}

// FuzzJWTClaims signs fuzzed header and payload JSON with the server's own
// key, so the fuzzer explores claim semantics (types, bounds, algorithms,
// times) behind a valid signature, which FuzzJWTVerify almost never
// reaches. The same agreement with golang-jwt must hold.
func FuzzJWTClaims(f *testing.F) {
	h := newJWTHarness(f)
	hdr := `{"alg":"HS256","typ":"JWT"}`
	aud := fuzzBase + "/mcp"
	for _, c := range []struct {
		header, payload string
		adv1, adv2      uint32
	}{
		{hdr, claimsJSON(fuzzBase, aud, "u_a", "j", 0, 3600), 0, 0},
		{hdr, claimsJSON(fuzzBase, aud, "u_a", "j", 0, 3600), 3600, 30}, // exactly exp + leeway: refused by both
		{hdr, claimsJSON(fuzzBase, aud, "u_a", "j", 0, 3600), 3629, 2},
		{hdr, claimsJSON(fuzzBase, aud, "u_a", "j", 0, -29), 0, 0},
		{hdr, claimsJSON(fuzzBase, aud, "u_a", "j", 30, 3600), 0, 0},
		{hdr, claimsJSON(fuzzBase, aud, "u_a", "j", 31, 3600), 1, 0},
		{hdr, claimsJSON(fuzzBase+"/", aud, "u_a", "j", 0, 3600), 0, 0},
		{hdr, claimsJSON(fuzzBase, aud+"/", "u_a", "j", 0, 3600), 0, 0},
		{`{"alg":"none"}`, claimsJSON(fuzzBase, aud, "u_a", "j", 0, 3600), 0, 0},
		{`{"alg":"HS384"}`, claimsJSON(fuzzBase, aud, "u_a", "j", 0, 3600), 0, 0},
		{`{"alg":"hs256"}`, claimsJSON(fuzzBase, aud, "u_a", "j", 0, 3600), 0, 0},
		{`{"alg":"HS256","crit":["x"]}`, claimsJSON(fuzzBase, aud, "u_a", "j", 0, 3600), 0, 0},
		{hdr, `{"iss":"` + fuzzBase + `","aud":["` + aud + `"],"sub":"u","jti":"j","iat":1777636800.9,"exp":1777640400.5}`, 3600, 29},
		{hdr, `{"iss":"` + fuzzBase + `","aud":"` + aud + `","sub":"u","jti":"j","exp":"1777640400"}`, 0, 0},
		{hdr, `{"iss":"` + fuzzBase + `","aud":"` + aud + `","sub":"u","jti":"j","exp":1e300}`, 0, 0},
		{hdr, `{"iss":"` + fuzzBase + `","aud":"` + aud + `","sub":"u","jti":"j","exp":9223372036854775807}`, 4e9, 4e9},
		{hdr, `{"iss":"` + fuzzBase + `","aud":"` + aud + `","sub":7,"jti":"j","exp":1777640400}`, 0, 0},
		{hdr, `{"iss":"` + fuzzBase + `","aud":"` + aud + `","sub":"u","sub":"v","jti":"j","exp":1777640400}`, 0, 0},
		{hdr, `[]`, 0, 0},
		{hdr, `null`, 0, 0},
		{"", "", 0, 0},
	} {
		f.Add(c.header, c.payload, c.adv1, c.adv2)
	}
	f.Fuzz(func(t *testing.T, header, payload string, adv1, adv2 uint32) {
		h.check(t, hs256(header, payload), time.Duration(adv1)*time.Second, time.Duration(adv2)*time.Second)
	})
}

// lookupCountingStore counts API key lookups that reach the store.
type lookupCountingStore struct {
	store.Store
	lookups atomic.Int64
}

func (c *lookupCountingStore) GetAPIKeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	c.lookups.Add(1)
	return c.Store.GetAPIKeyByHash(ctx, hash)
}

var apiKeyShape = regexp.MustCompile(`^mcpa_[0-9A-Za-z]{43}$`)

// FuzzAPIKeyParse feeds fuzzed Authorization header values to the real
// /api/ping handler and the bearer path behind it: never a panic, a 200 only
// for the one real key, a 401 with a challenge otherwise, and only strings
// of the exact key shape ever reach the store.
func FuzzAPIKeyParse(f *testing.F) {
	st := &lookupCountingStore{Store: memory.New()}
	s, err := New(context.Background(), Config{BaseURL: fuzzBase, Store: st, SigningKey: fuzzKey,
		Clock: clock.NewFake(fuzzT0), CacheCredentials: true})
	if err != nil {
		f.Fatal(err)
	}
	key, err := s.regenerateAPIKey(context.Background(), "u_key")
	if err != nil {
		f.Fatal(err)
	}
	other, _ := newAPIKey()
	for _, v := range []string{
		"Bearer " + key, "bearer " + key, "BEARER  " + key + " ", "Bearer " + other, "Bearer " + key + "x",
		"Bearer " + key[:len(key)-1], "Bearer " + strings.Replace(key, key[10:11], "-", 1), "Bearer mcpa_",
		"Bearer " + strings.ToUpper(key), "Basic " + key, key, "Bearer " + key + " " + key, "Bearer\t" + key,
		"Bearer mcpa_" + strings.Repeat("é", 43), "Bearer eyJhbGciOiJIUzI1NiJ9.e30.x", "Bearer " + strings.Repeat("a", 5000), "",
	} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, authz string) {
		req := httptest.NewRequest(http.MethodGet, fuzzBase+"/api/ping", nil)
		req.Header.Set("Authorization", authz)
		tok, _ := bearerToken(req)
		if looksLikeAPIKey(tok) != apiKeyShape.MatchString(tok) {
			t.Fatalf("looksLikeAPIKey(%q) = %v, shape says %v", tok, looksLikeAPIKey(tok), apiKeyShape.MatchString(tok))
		}
		for range 2 { // the second call may be served by the cache
			before := st.lookups.Load()
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			if st.lookups.Load() != before && !apiKeyShape.MatchString(tok) {
				t.Fatalf("%q reached the store though it is not a key", tok)
			}
			switch rec.Code {
			case http.StatusOK:
				var body pingResponse
				if tok != key || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.UserID != "u_key" {
					t.Fatalf("Authorization %q: 200 %s", authz, rec.Body)
				}
			case http.StatusUnauthorized:
				if tok == key {
					t.Fatalf("the real key in %q was refused", authz)
				}
				var body struct{ Error string }
				if !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer ") ||
					json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Error != errInvalidToken {
					t.Fatalf("401 without a Bearer challenge and invalid_token: %v %s", rec.Header(), rec.Body)
				}
			default:
				t.Fatalf("Authorization %q: status %d", authz, rec.Code)
			}
		}
	})
}

// portless drops the port of a URI's authority, byte for byte, so two URIs
// that differ only in their port compare equal. (Written apart from the
// server's withoutPort on purpose.)
func portless(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	auth, tail := rest, ""
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		auth, tail = rest[:end], rest[end:]
	}
	if host, port, err := net.SplitHostPort(auth); err == nil && !strings.Contains(port, ":") {
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		auth = host
	} else if strings.HasSuffix(auth, ":") {
		auth = strings.TrimSuffix(auth, ":")
	}
	return scheme + "://" + auth + tail
}

// FuzzRedirectURI: registration only accepts safe URIs, and matching
// accepts the registered URI, loopback port variants of it, and nothing else.
func FuzzRedirectURI(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:9999/callback", "https://app.example.com/cb", "com.example.app:/cb", "http://localhost/cb",
		"http://[::1]:80/cb", "javascript:alert(1)", "http://evil.example/cb", "https://a.example/cb#frag",
		"http://127.0.0.1@evil.example/", "HTTP://127.0.0.1/x", "http://127.0.0.1:0/cb", "http://127.0.0.1:99999/cb",
		"http://127.0.0.1/cb?x=1", "http://[::ffff:127.0.0.1]/cb", "https:///cb", "https://a.example:443/cb",
	} {
		f.Add(s, "http://127.0.0.1:1234/callback")
	}
	for _, got := range []string{
		"http://127.0.0.1:1/cb", "http://127.0.0.1/cb", "http://127.0.0.1:5/cb#", "http://127.0.0.1:5/cb?", "HTTP://127.0.0.1:5/cb",
		"http://127.0.0.1:5/cb/", "http://127.0.0.1:5/CB", "http://127.0.0.1:5/%63b", "http://u@127.0.0.1:5/cb",
		"http://127.0.0.2:5/cb", "http://127.0.0.1:5/cb?x", "http://127.0.0.1:05/cb", "http://127.0.0.1:70000/cb", "http://127.0.0.1:/cb",
	} {
		f.Add("http://127.0.0.1:9/cb", got)
	}
	f.Fuzz(func(t *testing.T, reg, got string) {
		if checkRedirectURI(reg) == "" {
			u, err := url.Parse(reg)
			if err != nil || !u.IsAbs() || u.Fragment != "" || strings.Contains(reg, "#") || u.User != nil {
				t.Fatalf("registered unsafe URI %q", reg)
			}
			switch {
			case u.Scheme == "https":
				if u.Host == "" {
					t.Fatalf("registered https URI without host %q", reg)
				}
			case u.Scheme == "http":
				if !isLoopbackHost(u.Hostname()) {
					t.Fatalf("registered http URI on a non-loopback host %q", reg)
				}
			case !strings.Contains(u.Scheme, "."):
				t.Fatalf("registered a non-private scheme %q", reg)
			}
			if !redirectURIRegistered([]string{reg}, reg) {
				t.Fatalf("the registered URI itself does not match: %q", reg)
			}
			// RFC 8252 §7.3: any port of a loopback IP literal.
			scheme, rest, _ := strings.Cut(reg, "://")
			if ip := u.Hostname(); u.Scheme == "http" && !strings.EqualFold(ip, "localhost") && strings.HasPrefix(rest, u.Host) {
				host := ip
				if strings.Contains(ip, ":") {
					host = "[" + ip + "]"
				}
				variant := scheme + "://" + host + ":54321" + strings.TrimPrefix(rest, u.Host)
				if !redirectURIRegistered([]string{reg}, variant) {
					t.Fatalf("port variant %q of %q refused", variant, reg)
				}
			}
		}
		if got != reg && redirectURIRegistered([]string{reg}, got) {
			a, _ := url.Parse(reg)
			if portless(got) != portless(reg) {
				t.Fatalf("%q matched registered %q though it differs in more than the port", got, reg)
			}
			if ip := a.Hostname(); !isLoopbackHost(ip) || strings.EqualFold(ip, "localhost") {
				t.Fatalf("port variance allowed for a non-IP-loopback host: %q vs %q", got, reg)
			}
			if b, err := url.Parse(got); err != nil || b.Port() != "" && portNumber(b.Port()) < 0 {
				t.Fatalf("%q matched with a port that is not a port", got)
			}
		}
	})
}

func portNumber(p string) int {
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' || n > 65535 {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > 65535 {
		return -1
	}
	return n
}

var userCodeShape = regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[0-9]{4}$`)

// asciiCase maps ASCII letters only: Unicode case mapping would turn, say,
// the Kelvin sign into a k, which a user code rightly refuses.
func asciiCase(s string, upper bool) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !upper && 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// FuzzUserCode: normalisation yields "" or a canonical code, is idempotent,
// and ignores case, hyphens and spaces.
func FuzzUserCode(f *testing.F) {
	for _, s := range []string{"BCDF-1234", "bcdf1234", " b c d f - 1 2 3 4 ", "AEIO-1234", "BCDF-12345", "ＢＣＤＦ-1234", "",
		"BCDF\t1234", "BCDF_1234", "bcdf-123４", "BCD-F1234", "----BCDF1234----", "BCDF-1234\x00", strings.Repeat(" ", 30) + "B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := normalizeUserCode(in)
		if out != "" && !userCodeShape.MatchString(out) {
			t.Fatalf("normalizeUserCode(%q) = %q: not canonical", in, out)
		}
		if normalizeUserCode(asciiCase(in, true)) != out || normalizeUserCode(asciiCase(in, false)) != out {
			t.Fatalf("normalizeUserCode(%q) = %q depends on case", in, out)
		}
		if out == "" {
			return
		}
		stripped := strings.NewReplacer("-", "", " ", "", "\t", "").Replace(in)
		if normalizeUserCode(out) != out || normalizeUserCode(strings.ReplaceAll(out, "-", "")) != out ||
			normalizeUserCode(stripped) != out || normalizeUserCode(out[:2]+" "+out[2:]) != out {
			t.Fatalf("normalisation of %q (%q) is not stable", in, out)
		}
		if strings.ReplaceAll(out, "-", "") != asciiCase(stripped, true) {
			t.Fatalf("normalizeUserCode(%q) = %q is not the input's characters", in, out)
		}
	})
}
