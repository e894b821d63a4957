package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// The code exchanges for a token response with the contract's fields and
// headers, and a JWT with the claims of decisions.md.
func TestTokenExchange(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	b := env.Browser("tess")
	code, verifier := c.code(b)
	resp, body := c.exchange(code, verifier)
	tok := mustToken(t, resp, body)
	if tok.Scope != "mcp" {
		t.Errorf("scope %q, want mcp", tok.Scope)
	}

	parsed, _, err := jwt.NewParser().ParseUnverified(tok.AccessToken, jwt.MapClaims{})
	if err != nil {
		t.Fatalf("access token is not a JWT: %v", err)
	}
	if alg := parsed.Header["alg"]; alg != "HS256" {
		t.Errorf("alg %v, want HS256", alg)
	}
	claims := parsed.Claims.(jwt.MapClaims)
	iat, _ := claims["iat"].(float64)
	exp, _ := claims["exp"].(float64)
	jti, _ := claims["jti"].(string)
	aud, _ := claims.GetAudience()
	if sub, _ := claims["sub"].(string); sub != userID(t, env, tok.AccessToken) {
		t.Errorf("sub %q is not the user ping reports", sub)
	}
	if int64(iat) != servertest.Start.Unix() || int64(exp) != int64(iat)+86400 {
		t.Errorf("iat %v exp %v, want iat = the clock (%d) and exp = iat + 24 h", iat, exp, servertest.Start.Unix())
	}
	if jti == "" || claims["iss"] != env.URL || len(aud) != 1 || aud[0] != env.URL+"/mcp" {
		t.Errorf("claims %v: want a jti, iss %s, aud %s/mcp", claims, env.URL, env.URL)
	}

	// Tokens are told apart by jti (a replay revokes one, not all).
	second := c.token(b)
	other, _, _ := jwt.NewParser().ParseUnverified(second, jwt.MapClaims{})
	if other.Claims.(jwt.MapClaims)["jti"] == jti {
		t.Error("two tokens share a jti")
	}
}

// A code presented a second time is refused, and the token issued for it is
// revoked (decisions.md, RFC 6749 §4.1.2).
func TestTokenCodeReplayRevokes(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	b := env.Browser("ray")
	code, verifier := c.code(b)
	resp, body := c.exchange(code, verifier)
	tok := mustToken(t, resp, body)
	userID(t, env, tok.AccessToken)
	unrelated := c.token(b)

	for range 2 {
		resp, body = c.exchange(code, verifier)
		oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
	}
	resp, body = ping(t, env, tok.AccessToken)
	wantChallenge(t, env, resp, body, true)
	userID(t, env, unrelated) // only the replayed code's token
}

// Codes live 10 minutes on the server's clock: 9m59s works, 10m00s not.
func TestTokenCodeExpiry(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	b := env.Browser("eve")
	early, earlyV := c.code(b)
	late, lateV := c.code(b)

	env.Clock.Advance(9*time.Minute + 59*time.Second)
	resp, body := c.exchange(early, earlyV)
	mustToken(t, resp, body)
	env.Clock.Advance(time.Second)
	resp, body = c.exchange(late, lateV)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
}

// What a refused redemption says, for those the store refuses: the reason
// is found after the one conditional write matched nothing.
var mismatchSays = map[string]string{
	"wrong verifier":               "code_verifier does not match",
	"another registered client":    "issued to another client",
	"other redirect_uri":           "redirect_uri does not match",
	"redirect_uri on another port": "redirect_uri does not match",
}

// Each wrong exchange gets its RFC 6749 error and status, and spends
// nothing.
func TestTokenExchangeErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	foreign := registerMeta(t, env, map[string]any{"redirect_uris": []string{c.RedirectURI}})
	b := env.Browser("ivan")
	otherVerifier, _ := pkce.NewVerifier()

	for _, tt := range []struct {
		name   string
		edit   url.Values // replaces fields; an empty list removes one
		ctype  string     // default form
		status int
		code   string
	}{
		{"wrong verifier", url.Values{"code_verifier": {otherVerifier}}, "", 400, "invalid_grant"},
		{"verifier too short", url.Values{"code_verifier": {strings.Repeat("a", 42)}}, "", 400, "invalid_request"},
		{"verifier too long", url.Values{"code_verifier": {strings.Repeat("a", 129)}}, "", 400, "invalid_request"},
		{"verifier with a bad character", url.Values{"code_verifier": {strings.Repeat("a", 42) + "+"}}, "", 400, "invalid_request"},
		{"another registered client", url.Values{"client_id": {foreign}}, "", 400, "invalid_grant"},
		{"unknown client", url.Values{"client_id": {"nobody"}}, "", 401, "invalid_client"},
		{"other redirect_uri", url.Values{"redirect_uri": {"http://127.0.0.1:9999/other"}}, "", 400, "invalid_grant"},
		{"redirect_uri on another port", url.Values{"redirect_uri": {"http://127.0.0.1:9998/callback"}}, "", 400, "invalid_grant"},
		{"unknown code", url.Values{"code": {"not-a-code"}}, "", 400, "invalid_grant"},
		{"resource elsewhere", url.Values{"resource": {"https://other.example/mcp"}}, "", 400, "invalid_target"},
		{"missing code", url.Values{"code": nil}, "", 400, "invalid_request"},
		{"missing redirect_uri", url.Values{"redirect_uri": nil}, "", 400, "invalid_request"},
		{"missing client_id", url.Values{"client_id": nil}, "", 400, "invalid_request"},
		{"missing code_verifier", url.Values{"code_verifier": nil}, "", 400, "invalid_request"},
		{"missing grant_type", url.Values{"grant_type": nil}, "", 400, "invalid_request"},
		{"grant_type password", url.Values{"grant_type": {"password"}}, "", 400, "unsupported_grant_type"},
		{"grant_type refresh_token without one", url.Values{"grant_type": {"refresh_token"}}, "", 400, "invalid_request"},
		{"repeated code", url.Values{"code": {"a", "b"}}, "", 400, "invalid_request"},
		{"JSON body", nil, "application/json", 400, "invalid_request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, verifier := c.code(b)
			form := url.Values{
				"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.RedirectURI},
				"client_id": {c.ID}, "code_verifier": {verifier},
			}
			for k, v := range tt.edit {
				form[k] = v
			}
			var resp *http.Response
			var body []byte
			if tt.ctype == "application/json" {
				flat := map[string]string{}
				for k := range form {
					flat[k] = form.Get(k)
				}
				js, _ := json.Marshal(flat)
				resp, body = do(t, http.MethodPost, env.URL+"/oauth/token", tt.ctype, string(js), nil)
			} else {
				resp, body = postForm(t, env.URL+"/oauth/token", form)
			}
			oauthErr(t, resp, body, tt.status, tt.code)
			if resp.Header.Get("Pragma") != "no-cache" {
				t.Errorf("Pragma %q, want no-cache", resp.Header.Get("Pragma"))
			}
			if want, ok := mismatchSays[tt.name]; ok && !strings.Contains(string(body), want) {
				t.Errorf("error %s, want it to say %q", body, want)
			}
			// A refused redemption spends nothing: the right one still works.
			resp, body = c.exchange(code, verifier)
			mustToken(t, resp, body)
		})
	}
}

// 50 concurrent redemptions of one code over HTTP: exactly one token; the
// others are replays, so they get invalid_grant and the winner's token is
// revoked.
func TestTokenConcurrentRedemption(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	code, verifier := c.code(env.Browser("race"))
	form := url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.RedirectURI},
		"client_id": {c.ID}, "code_verifier": {verifier},
	}.Encode()

	const n = 50
	type result struct {
		status int
		body   []byte
		err    error
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			resp, body, err := send(http.MethodPost, env.URL+"/oauth/token", "application/x-www-form-urlencoded", form, nil)
			if err == nil {
				results[i] = result{resp.StatusCode, body, nil}
			} else {
				results[i] = result{err: err}
			}
		})
	}
	close(start)
	wg.Wait()

	var winner string
	for _, r := range results {
		if r.err != nil {
			t.Fatal(r.err)
		}
		var out struct {
			AccessToken string `json:"access_token"`
			Error       string `json:"error"`
		}
		mustJSON(t, r.body, &out)
		switch {
		case r.status == http.StatusOK && winner == "":
			winner = out.AccessToken
		case r.status == http.StatusOK:
			t.Fatal("two redemptions of one code both got a token")
		case r.status != http.StatusBadRequest || out.Error != "invalid_grant":
			t.Fatalf("loser got %d %s, want 400 invalid_grant", r.status, r.body)
		}
	}
	if winner == "" {
		t.Fatal("no redemption succeeded")
	}
	resp, body := ping(t, env, winner)
	wantChallenge(t, env, resp, body, true)
}
