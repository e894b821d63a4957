package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// ok200 adapts mustRevoked to take a call's two results directly.
func ok200(t *testing.T) func(*http.Response, []byte) {
	return func(resp *http.Response, body []byte) {
		t.Helper()
		mustRevoked(t, resp, body)
	}
}

func (c *testClient) revoke(token, hint string) (*http.Response, []byte) {
	form := url.Values{"token": {token}, "client_id": {c.ID}}
	if hint != "" {
		form.Set("token_type_hint", hint)
	}
	return postForm(c.t, c.env.URL+"/oauth/revoke", form)
}

// mustRevoked asserts RFC 7009 §2.2's answer: 200, not cached.
func mustRevoked(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: status %d, want 200: %s", resp.StatusCode, body)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("revoke: Cache-Control %q, want no-store", cc)
	}
}

// Revoking a refresh token revokes its family (refresh and access tokens);
// revoking an access token denies its jti only. Through the credential
// cache too, and whatever the hint says.
func TestRevoke(t *testing.T) {
	t.Parallel()
	for _, cache := range []bool{false, true} {
		t.Run(fmt.Sprintf("cache=%v", cache), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, servertest.Options{CacheCredentials: cache})
			c := refreshClient(t, env)
			b := env.Browser("revoker")

			// A refresh token, hinted as an access token: the family goes.
			first := c.offline(b)
			second := c.mustRefresh(first.RefreshToken, nil)
			userID(t, env, second.AccessToken)
			ok200(t)(c.revoke(second.RefreshToken, "access_token"))
			for _, tok := range []string{first.AccessToken, second.AccessToken} {
				resp, body := ping(t, env, tok)
				wantChallenge(t, env, resp, body, true)
			}
			resp, body := c.refresh(second.RefreshToken, nil)
			oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
			ok200(t)(c.revoke(second.RefreshToken, "refresh_token")) // already revoked
			ok200(t)(c.revoke(first.RefreshToken, ""))               // spent and revoked

			// An access token, hinted as a refresh token: its jti only.
			g := c.offline(b)
			userID(t, env, g.AccessToken)
			ok200(t)(c.revoke(g.AccessToken, "refresh_token"))
			resp, body = ping(t, env, g.AccessToken)
			wantChallenge(t, env, resp, body, true)
			ok200(t)(c.revoke(g.AccessToken, "access_token")) // already revoked
			next := c.mustRefresh(g.RefreshToken, nil)        // the family lives on
			userID(t, env, next.AccessToken)

			// Without a refresh token too (scope mcp), and with Basic auth
			// naming the client instead of the form.
			plain := c.grant(b, "mcp")
			userID(t, env, plain.AccessToken)
			req, _ := http.NewRequest(http.MethodPost, env.URL+"/oauth/revoke", strings.NewReader(url.Values{"token": {plain.AccessToken}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth(c.ID, "")
			r, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != http.StatusOK {
				t.Fatalf("revoke with Basic auth: %d", r.StatusCode)
			}
			resp, body = ping(t, env, plain.AccessToken)
			wantChallenge(t, env, resp, body, true)
		})
	}
}

// Tokens that are unknown, malformed or another client's get 200 and
// nothing is revoked or stored; an unknown client is invalid_client; a
// request without a token is invalid_request. Never a 5xx.
func TestRevokeRefusalsAndNoOps(t *testing.T) {
	t.Parallel()
	cs := &countingStore{Store: memory.New()}
	env := servertest.New(t, servertest.Options{Store: cs, CacheCredentials: true})
	c := refreshClient(t, env)
	other := refreshClient(t, env)
	b := env.Browser("bystander")
	mine := c.offline(b)
	theirs := other.offline(b)
	apiKey, err := b.APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	session := sessionToken(t, env, b)

	for _, tok := range []string{
		theirs.RefreshToken, theirs.AccessToken, // another client's
		"mcpr_" + strings.Repeat("Z", 43), // unknown
		mine.RefreshToken[:20],            // malformed
		mine.RefreshToken + "x",
		"mcpa_" + strings.Repeat("Z", 43),
		apiKey,  // a user's API key is not a client's token
		session, // nor is the browser session
		"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
		"not a token at all \x01",
		strings.Repeat("x", 100_000),
	} {
		before := cs.writes.Load()
		resp, body := c.revoke(tok, "")
		mustRevoked(t, resp, body)
		if n := cs.writes.Load() - before; n != 0 {
			t.Fatalf("revoking %.30q wrote %d records", tok, n)
		}
	}
	userID(t, env, theirs.AccessToken)
	other.mustRefresh(theirs.RefreshToken, nil)
	userID(t, env, mine.AccessToken)
	userID(t, env, apiKey)
	userID(t, env, session)

	for _, tt := range []struct {
		name   string
		ctype  string
		body   string
		status int
		code   string
	}{
		{"unknown client", "application/x-www-form-urlencoded", url.Values{"token": {mine.RefreshToken}, "client_id": {"nobody"}}.Encode(), 401, "invalid_client"},
		{"no client", "application/x-www-form-urlencoded", url.Values{"token": {mine.RefreshToken}}.Encode(), 401, "invalid_client"},
		{"no token", "application/x-www-form-urlencoded", url.Values{"client_id": {c.ID}}.Encode(), 400, "invalid_request"},
		{"empty token", "application/x-www-form-urlencoded", url.Values{"client_id": {c.ID}, "token": {""}}.Encode(), 400, "invalid_request"},
		{"repeated token", "application/x-www-form-urlencoded", "client_id=" + c.ID + "&token=a&token=b", 400, "invalid_request"},
		{"JSON", "application/json", `{"client_id":"` + c.ID + `","token":"` + mine.RefreshToken + `"}`, 400, "invalid_request"},
		{"no content type", "", "client_id=" + c.ID + "&token=" + mine.RefreshToken, 400, "invalid_request"},
		{"bad form encoding", "application/x-www-form-urlencoded", "client_id=" + c.ID + "&token=%zz", 400, "invalid_request"},
		{"oversized body", "application/x-www-form-urlencoded", "client_id=" + c.ID + "&token=" + strings.Repeat("a", 2<<20), 413, "invalid_request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := cs.writes.Load()
			resp, body := do(t, http.MethodPost, env.URL+"/oauth/revoke", tt.ctype, tt.body, nil)
			oauthErr(t, resp, body, tt.status, tt.code)
			if n := cs.writes.Load() - before; n != 0 {
				t.Fatalf("a refused revocation wrote %d records", n)
			}
		})
	}
	c.mustRefresh(mine.RefreshToken, nil)
}
