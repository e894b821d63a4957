package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/servertest"
)

// The credential cache must never outlive the contract: a regenerated key,
// a revoked jti or an expired token fails on the very next request, even
// when the credential was cached by the request before.

func cachedEnv(t *testing.T) *servertest.Env {
	return servertest.New(t, servertest.Options{CacheCredentials: true})
}

func mustPing(t *testing.T, env *servertest.Env, cred string, want int) {
	t.Helper()
	if resp, body := ping(t, env, cred); resp.StatusCode != want {
		t.Fatalf("ping: %d, want %d: %s", resp.StatusCode, want, body)
	}
}

func TestCacheRegeneratedKeyFailsAtOnce(t *testing.T) {
	env := cachedEnv(t)
	b := env.Browser("cached-key")
	old, err := b.APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mustPing(t, env, old, 200)
	mustPing(t, env, old, 200) // now certainly cached
	fresh, err := b.RegenerateAPIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mustPing(t, env, old, 401)
	mustPing(t, env, fresh, 200)
}

func TestCacheReplayRevokesCachedJWT(t *testing.T) {
	env := cachedEnv(t)
	c := register(t, env)
	code, verifier := c.code(env.Browser("cached-jwt"))
	resp, body := c.exchange(code, verifier)
	if resp.StatusCode != 200 {
		t.Fatal(string(body))
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	mustJSON(t, body, &tok)
	mustPing(t, env, tok.AccessToken, 200)
	mustPing(t, env, tok.AccessToken, 200)
	resp, body = c.exchange(code, verifier) // replay
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
	mustPing(t, env, tok.AccessToken, 401)
}

func TestCacheHonoursExpiry(t *testing.T) {
	env := cachedEnv(t)
	c := register(t, env)
	tok := c.token(env.Browser("cached-exp"))
	mustPing(t, env, tok, 200)
	env.Clock.Advance(24*time.Hour + 29*time.Second) // inside the 30 s leeway
	mustPing(t, env, tok, 200)
	env.Clock.Advance(2 * time.Second)
	mustPing(t, env, tok, 401)
}

func TestCacheLogoutRevokesSession(t *testing.T) {
	env := cachedEnv(t)
	b := env.Browser("cached-logout")
	if err := b.SignIn(context.Background()); err != nil {
		t.Fatal(err)
	}
	u, _ := http.NewRequest("GET", env.URL, nil)
	var session string
	for _, ck := range b.Client.Jar.Cookies(u.URL) {
		if ck.Name == "auth_token" {
			session = ck.Value
		}
	}
	if session == "" {
		t.Fatal("no session cookie")
	}
	mustPing(t, env, session, 200)
	page, err := b.Get(context.Background(), env.URL+"/auth/logout")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Submit(context.Background(), page, "", nil); err != nil {
		t.Fatal(err)
	}
	mustPing(t, env, session, 401)
}
