package flows_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// hostileTokenEndpoint answers every token request with body.
func hostileTokenEndpoint(t *testing.T, body map[string]any) string {
	srv, mux := newServer(t)
	mux.HandleFunc("/oauth/token", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, body) })
	return srv.URL
}

// A token endpoint that answers an access or refresh token with CR LF in
// it (or any byte outside RFC 6750's b64token) is refused at the token
// response, whatever the grant, before anything stores or prints it: as a
// header (token --header) it would be extra header lines. The error names
// the byte, never the token.
func TestTokenResponseRefusesTokensNoHeaderCanCarry(t *testing.T) {
	const injected = "good\r\nX-Injected: yes"
	for _, tc := range []struct{ name, access, refresh, want string }{
		{"CR LF in the access token", injected, "", "access_token: byte 5 of 21 is a carriage return (CR)"},
		{"LF in the refresh token", "at", "rt\nX-Injected: yes", "refresh_token: byte 3 of 18 is a line feed (LF)"},
		{"space", "Bearer at", "", "access_token: byte 7 of 9 is a space"},
		{"tab", "at\tx", "", "access_token: byte 3 of 4 is the control character 0x09"},
		{"DEL", "at\x7f", "", "access_token: byte 3 of 3 is the control character 0x7F"},
		{"non-ASCII", "at\u00e9", "", "access_token: byte 3 of 4 is a non-ASCII byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"access_token": tc.access, "token_type": "Bearer", "expires_in": 60}
			if tc.refresh != "" {
				body["refresh_token"] = tc.refresh
			}
			base := hostileTokenEndpoint(t, body)
			cfg := flows.AuthCodeConfig{Clock: flowstest.NewFakeClock(t0), Discovery: discFor(base, nil), Client: flows.Client{ID: "c"}}
			tok, err := cfg.Exchange(context.Background(), &flows.AuthRequest{RedirectURI: "http://127.0.0.1:1/callback", Verifier: "v"}, "code")
			if !errors.Is(err, flows.ErrTokenSyntax) || tok != nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("code exchange: %v, %v; want ErrTokenSyntax naming %q", tok, err, tc.want)
			}
			if strings.Contains(err.Error(), "Injected") || strings.Contains(err.Error(), "good") {
				t.Fatalf("the error quotes the token: %v", err)
			}
			rtok, err := flows.Refresh(context.Background(), flows.RefreshConfig{Clock: flowstest.NewFakeClock(t0), TokenURL: base + "/oauth/token", Client: flows.Client{ID: "c"}}, "old")
			if !errors.Is(err, flows.ErrTokenSyntax) || rtok != nil {
				t.Fatalf("refresh: %v, %v; want ErrTokenSyntax", rtok, err)
			}
		})
	}
	// Any printable ASCII but space is a token: b64token's characters, and
	// what real servers issue beyond them (Cloudflare's "user:grant:secret").
	const good = "AZaz09-._~+/==alice:grant:secret!\"#$%&'()*,;<>?@[\\]^`{|}"
	base := hostileTokenEndpoint(t, map[string]any{"access_token": good, "token_type": "Bearer", "refresh_token": good})
	tok, err := flows.Refresh(context.Background(), flows.RefreshConfig{TokenURL: base + "/oauth/token", Client: flows.Client{ID: "c"}}, "old")
	if err != nil || tok.AccessToken != good || tok.RefreshToken != good {
		t.Fatalf("a b64token: %+v, %v", tok, err)
	}
}

// A token_type DPoP answer to a request that carried no DPoP proof binds
// no key of this client: refused with a clear error, not stored and sent
// as Bearer; with a proof, the same answer is taken.
func TestTokenTypeDPoPWithoutAProofIsRefused(t *testing.T) {
	for _, typ := range []string{"DPoP", "dpop"} {
		base := hostileTokenEndpoint(t, map[string]any{"access_token": "at", "token_type": typ, "expires_in": 60})
		cfg := flows.AuthCodeConfig{Clock: flowstest.NewFakeClock(t0), Discovery: discFor(base, nil), Client: flows.Client{ID: "c"}}
		tok, err := cfg.Exchange(context.Background(), &flows.AuthRequest{RedirectURI: "http://127.0.0.1:1/callback", Verifier: "v"}, "code")
		if !errors.Is(err, flows.ErrUnrequestedDPoP) || tok != nil {
			t.Fatalf("token_type %s without a proof: %v, %v; want ErrUnrequestedDPoP", typ, tok, err)
		}
		cfg.DPoP = newDPoP(t)
		if tok, err := cfg.Exchange(context.Background(), &flows.AuthRequest{RedirectURI: "http://127.0.0.1:1/callback", Verifier: "v"}, "code"); err != nil || tok.TokenType != typ {
			t.Fatalf("token_type %s with a proof: %v, %v", typ, tok, err)
		}
	}
}
