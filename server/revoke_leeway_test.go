package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// A revoked JWT stays refused through the 30 s leeway after its expiry:
// the server honours unrevoked tokens until exp + leeway, so the revocation
// record must outlive exp by as much, even when garbage collection runs in
// between. Checked with and without the credential cache.
func TestRevokedTokenRefusedThroughLeeway(t *testing.T) {
	t.Parallel()
	for _, cached := range []bool{false, true} {
		env := servertest.New(t, servertest.Options{CacheCredentials: cached})
		c := register(t, env)
		b := env.Browser("lee")
		code, verifier := c.code(b)
		resp, body := c.exchange(code, verifier)
		tok := mustToken(t, resp, body)
		resp, body = c.exchange(code, verifier) // replay: tok is revoked
		oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")

		env.Clock.Advance(server.AccessTokenLifetime + 10*time.Second) // expired, within leeway
		if _, err := env.Server.CollectGarbage(context.Background()); err != nil {
			t.Fatal(err)
		}
		resp, body = ping(t, env, tok.AccessToken)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("cache=%v: a revoked token 10 s past exp (inside the leeway) after GC: %d %s", cached, resp.StatusCode, body)
		}
		// An unrevoked token of the same age still works: the leeway is real.
		other := c.token(b)
		env.Clock.Advance(server.AccessTokenLifetime + 10*time.Second)
		if resp, body := ping(t, env, other); resp.StatusCode != http.StatusOK {
			t.Fatalf("cache=%v: an unrevoked token inside the leeway: %d %s", cached, resp.StatusCode, body)
		}
	}
}
