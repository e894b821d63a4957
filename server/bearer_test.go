package server_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/server/servertest"
)

var bearerKey = []byte("bearer-test-signing-key-0123456789abcdef")

// forge signs claims with key and method, as a client holding the key (or
// an attacker guessing at it) would.
func forge(t *testing.T, method jwt.SigningMethod, key []byte, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A request without any credential gets the bare challenge: where the
// metadata is and which scope to ask for, but no error (RFC 6750 §3.1).
func TestPingWithoutCredential(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	resp, body := do(t, http.MethodGet, env.URL+"/api/ping", "", "", nil)
	wantChallenge(t, env, resp, body, false)
	want := `Bearer resource_metadata="` + env.URL + `/.well-known/oauth-protected-resource", scope="mcp"`
	if got := resp.Header.Get("WWW-Authenticate"); got != want {
		t.Fatalf("WWW-Authenticate %q, want exactly %q", got, want)
	}
	// A token in the query string is not a credential (RFC 9700 §2.5).
	resp, body = do(t, http.MethodGet, env.URL+"/api/ping?access_token=x", "", "", nil)
	wantChallenge(t, env, resp, body, false)
}

// Every credential that is not a valid token of this server, or not sent
// as one Bearer header, gets 401 with error="invalid_token".
func TestPingRejectsBadCredentials(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{SigningKey: bearerKey})
	now := env.Clock.Now()
	valid := func() jwt.MapClaims {
		return jwt.MapClaims{
			"sub": "u_forged", "iss": env.URL, "aud": []string{env.URL + "/mcp"}, "jti": "j-" + t.Name(),
			"iat": now.Unix(), "exp": now.Add(24 * time.Hour).Unix(),
		}
	}
	with := func(k string, v any) jwt.MapClaims {
		c := valid()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	good := forge(t, jwt.SigningMethodHS256, bearerKey, valid())
	// The control: a token forged with the right key and claims is
	// accepted, so each refusal below is about the one thing changed.
	if got := userID(t, env, good); got != "u_forged" {
		t.Fatalf("control token is for %q", got)
	}
	// The scheme is case-insensitive (RFC 9110 §11.1).
	if resp, body := do(t, http.MethodGet, env.URL+"/api/ping", "", "", http.Header{"Authorization": {"bearer " + good}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("lower-case scheme: %d %s", resp.StatusCode, body)
	}

	parts := strings.Split(good, ".")
	sig := []byte(parts[2])
	sig[10] ^= 'A' ^ 'B' // flip bits in the middle of the signature
	if sig[10] == parts[2][10] {
		t.Fatal("signature unchanged")
	}
	tamperedSig := parts[0] + "." + parts[1] + "." + string(sig)
	otherPayload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"u_admin","iss":"` + env.URL + `","aud":"` + env.URL + `/mcp","jti":"x","iat":` + strconv.FormatInt(now.Unix(), 10) + `,"exp":` + strconv.FormatInt(now.Add(time.Hour).Unix(), 10) + `}`))
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."

	for _, tt := range []struct {
		name   string
		header []string // Authorization header values
	}{
		{"garbage", []string{"Bearer abc"}},
		{"empty token", []string{"Bearer "}},
		{"tampered signature", []string{"Bearer " + tamperedSig}},
		{"tampered payload", []string{"Bearer " + parts[0] + "." + otherPayload + "." + parts[2]}},
		{"alg none", []string{"Bearer " + none}},
		{"HS512 with the right key", []string{"Bearer " + forge(t, jwt.SigningMethodHS512, bearerKey, valid())}},
		{"another key", []string{"Bearer " + forge(t, jwt.SigningMethodHS256, []byte("another-signing-key-0123456789abcdef!!"), valid())}},
		{"wrong iss", []string{"Bearer " + forge(t, jwt.SigningMethodHS256, bearerKey, with("iss", "https://evil.example"))}},
		{"wrong aud", []string{"Bearer " + forge(t, jwt.SigningMethodHS256, bearerKey, with("aud", []string{"https://evil.example/mcp"}))}},
		{"no aud", []string{"Bearer " + forge(t, jwt.SigningMethodHS256, bearerKey, with("aud", nil))}},
		{"no exp", []string{"Bearer " + forge(t, jwt.SigningMethodHS256, bearerKey, with("exp", nil))}},
		{"no sub", []string{"Bearer " + forge(t, jwt.SigningMethodHS256, bearerKey, with("sub", nil))}},
		{"no jti", []string{"Bearer " + forge(t, jwt.SigningMethodHS256, bearerKey, with("jti", nil))}},
		{"expired", []string{"Bearer " + forge(t, jwt.SigningMethodHS256, bearerKey, with("exp", now.Add(-time.Minute).Unix()))}},
		{"issued in the future", []string{"Bearer " + forge(t, jwt.SigningMethodHS256, bearerKey, with("iat", now.Add(time.Hour).Unix()))}},
		{"not valid yet", []string{"Bearer " + forge(t, jwt.SigningMethodHS256, bearerKey, with("nbf", now.Add(time.Hour).Unix()))}},
		{"Basic scheme", []string{"Basic " + good}},
		{"no scheme", []string{good}},
		{"two Authorization headers", []string{"Bearer " + good, "Bearer " + good}},
		{"two tokens in one header", []string{"Bearer " + good + " " + good}},
		{"malformed API key", []string{"Bearer mcpa_short"}},
		{"unknown API key", []string{"Bearer mcpa_" + strings.Repeat("A", 43)}},
		{"oversized", []string{"Bearer " + strings.Repeat("a", 5000)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, http.MethodGet, env.URL+"/api/ping", "", "", http.Header{"Authorization": tt.header})
			wantChallenge(t, env, resp, body, true)
			oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_token")
			if strings.Contains(string(body), "u_") {
				t.Fatalf("401 body names a user: %s", body)
			}
		})
	}
}

// A JWT is valid for 24 hours, with at most 30 s of leeway.
func TestPingTokenExpiry(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tok := register(t, env).token(env.Browser("tim"))
	env.Clock.Advance(24*time.Hour + 29*time.Second)
	userID(t, env, tok)
	env.Clock.Advance(2 * time.Second) // 24 h + 31 s
	resp, body := ping(t, env, tok)
	wantChallenge(t, env, resp, body, true)
}

var apiKeyShape = regexp.MustCompile(`^mcpa_[0-9A-Za-z]{43}$`)

// The API key from Settings works like a JWT, does not expire, and
// regenerating it kills the old one on the very next request.
func TestAPIKeyRegenerate(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	b := env.Browser("kim")
	ctx := context.Background()
	old, err := b.APIKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !apiKeyShape.MatchString(old) {
		t.Fatalf("API key %q does not look like %s", old, apiKeyShape)
	}
	user := userID(t, env, old)
	if again, _ := b.APIKey(ctx); again != old {
		t.Fatal("Settings shows a different key on a second visit")
	}
	env.Clock.Advance(400 * 24 * time.Hour)
	userID(t, env, old) // no expiry

	fresh, err := b.RegenerateAPIKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fresh == old || !apiKeyShape.MatchString(fresh) {
		t.Fatalf("regenerated key %q (old %q)", fresh, old)
	}
	resp, body := ping(t, env, old)
	wantChallenge(t, env, resp, body, true)
	if got := userID(t, env, fresh); got != user {
		t.Fatalf("new key is for %s, want %s", got, user)
	}
	if shown, _ := b.APIKey(ctx); shown != fresh {
		t.Fatalf("Settings shows %q after regenerating, want %q", shown, fresh)
	}
	// Another user's key is their own.
	if other, err := env.Browser("lee").APIKey(ctx); err != nil || other == fresh || userID(t, env, other) == user {
		t.Fatalf("second user's key %q (%v) is not their own", other, err)
	}
}

// Signing out revokes the session cookie's JWT itself, so a copy of the
// cookie stops working too.
func TestLogoutRevokesSession(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	b := env.Browser("lou")
	ctx := context.Background()
	if err := b.SignIn(ctx); err != nil {
		t.Fatal(err)
	}
	session := sessionToken(t, env, b)
	userID(t, env, session)
	page, err := b.Get(ctx, env.URL+"/auth/logout")
	if err != nil {
		t.Fatal(err)
	}
	if page, err = b.Submit(ctx, page, "", nil); err != nil || page.Status != http.StatusOK {
		t.Fatalf("logout: %v %v", page, err)
	}
	resp, body := ping(t, env, session)
	wantChallenge(t, env, resp, body, true)
	// The browser is signed out: Settings sends it to sign in again.
	resp, _ = noFollow(b).Get(env.URL + "/settings")
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "/auth/login") {
		t.Fatalf("settings after logout: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}
