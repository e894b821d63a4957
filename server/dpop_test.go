package server_test

import (
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// fakeFlowsClock lets flows sign proofs on the server's fake clock.
type fakeFlowsClock struct{ *clock.Fake }

func (fakeFlowsClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func dpopEnv(t *testing.T, dpop bool) *servertest.Env {
	t.Helper()
	sum := sha256.Sum256([]byte(machineSecret))
	return servertest.New(t, servertest.Options{DPoP: dpop, MachineClients: []server.MachineClient{{ID: machineSecretID, SecretHash: sum[:]}}})
}

// dpopToken runs the client credentials grant with a proof of d's key.
func dpopToken(t *testing.T, env *servertest.Env, d *flows.DPoP) tokenBody {
	t.Helper()
	proof, err := d.Proof(http.MethodPost, env.URL+"/oauth/token", "")
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {machineSecretID}, "client_secret": {machineSecret}}
	resp, body := do(t, http.MethodPost, env.URL+"/oauth/token", "application/x-www-form-urlencoded", form.Encode(), http.Header{"Dpop": {proof}})
	if resp.StatusCode != 200 {
		t.Fatalf("token request with a proof: HTTP %d %s", resp.StatusCode, body)
	}
	var tok tokenBody
	mustJSON(t, body, &tok)
	return tok
}

func newDPoP(t *testing.T, env *servertest.Env) *flows.DPoP {
	t.Helper()
	d, err := flows.NewDPoP(fakeFlowsClock{env.Clock})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDPoPBoundTokens: with DPoP on, a proof at the token endpoint binds
// the token to its key; the resource then takes it only with the DPoP
// scheme and a fresh proof of that key, once per proof.
func TestDPoPBoundTokens(t *testing.T) {
	env := dpopEnv(t, true)
	d := newDPoP(t, env)
	tok := dpopToken(t, env, d)
	if tok.TokenType != "DPoP" {
		t.Fatalf("token_type %q, want DPoP", tok.TokenType)
	}
	for _, path := range []string{"/api/ping", "/mcp"} {
		resp, body := do(t, http.MethodGet, env.URL+path, "", "", nil)
		if got := resp.Header.Values("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(strings.Join(got, "\n"), `DPoP algs="ES256"`) {
			t.Errorf("%s without credentials: HTTP %d, challenges %q; want a DPoP challenge beside Bearer: %s", path, resp.StatusCode, got, body)
		}
	}
	pingURL := env.URL + "/api/ping"
	h, err := d.Headers(http.MethodGet, pingURL, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := do(t, http.MethodGet, pingURL, "", "", h)
	if resp.StatusCode != 200 || !strings.Contains(string(body), machineSecretID) {
		t.Fatalf("ping with DPoP: HTTP %d %s", resp.StatusCode, body)
	}

	other := newDPoP(t, env)
	otherHeaders, _ := other.Headers(http.MethodGet, pingURL, tok.AccessToken)
	wrongURL, _ := d.Headers(http.MethodGet, env.URL+"/mcp", tok.AccessToken)
	for name, hdr := range map[string]http.Header{
		"as Bearer":             {"Authorization": {"Bearer " + tok.AccessToken}},
		"replayed proof":        h,
		"another key's proof":   otherHeaders,
		"proof for another URL": wrongURL,
		"DPoP scheme, no proof": {"Authorization": {"DPoP " + tok.AccessToken}},
		"proof of another token": func() http.Header {
			x, _ := d.Headers(http.MethodGet, pingURL, tok.AccessToken+"x")
			x.Set("Authorization", "DPoP "+tok.AccessToken)
			return x
		}(),
	} {
		resp, body := do(t, http.MethodGet, pingURL, "", "", hdr)
		if resp.StatusCode != 401 || strings.Contains(string(body), machineSecretID) {
			t.Errorf("%s: HTTP %d %s; want 401", name, resp.StatusCode, body)
		}
	}

	// Stale proofs are refused: 61 s later the fresh one works, an old one not.
	old, _ := d.Headers(http.MethodGet, pingURL, tok.AccessToken)
	env.Clock.Advance(2 * time.Minute)
	if resp, body := do(t, http.MethodGet, pingURL, "", "", old); resp.StatusCode != 401 {
		t.Errorf("a proof 2 minutes old: HTTP %d %s; want 401", resp.StatusCode, body)
	}
	fresh, _ := d.Headers(http.MethodGet, pingURL, tok.AccessToken)
	if resp, body := do(t, http.MethodGet, pingURL, "", "", fresh); resp.StatusCode != 200 {
		t.Errorf("a fresh proof: HTTP %d %s; want 200", resp.StatusCode, body)
	}

	// No proof, no binding: the same client still gets Bearer tokens, which
	// the DPoP scheme does not take.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {machineSecretID}, "client_secret": {machineSecret}}
	resp, body = postForm(t, env.URL+"/oauth/token", form)
	bearer := mustToken(t, resp, body)
	if bearer.TokenType != "Bearer" || userID(t, env, bearer.AccessToken) != machineSecretID {
		t.Errorf("without a proof: token_type %q; want a working Bearer token", bearer.TokenType)
	}
	unbound, _ := d.Headers(http.MethodGet, pingURL, bearer.AccessToken)
	if resp, _ := do(t, http.MethodGet, pingURL, "", "", unbound); resp.StatusCode != 401 {
		t.Errorf("a Bearer token with the DPoP scheme: HTTP %d; want 401", resp.StatusCode)
	}

	var prm, asm map[string]any
	_, b := do(t, http.MethodGet, env.URL+"/.well-known/oauth-protected-resource", "", "", nil)
	mustJSON(t, b, &prm)
	_, b = do(t, http.MethodGet, env.URL+"/.well-known/oauth-authorization-server", "", "", nil)
	mustJSON(t, b, &asm)
	if prm["dpop_signing_alg_values_supported"] == nil || asm["dpop_signing_alg_values_supported"] == nil {
		t.Errorf("metadata lacks dpop_signing_alg_values_supported: resource %v, authorization server %v", prm, asm)
	}
}

// TestDPoPOffIgnoresProofs: by default a proof binds nothing and the
// resource says nothing of DPoP, as before.
func TestDPoPOffIgnoresProofs(t *testing.T) {
	env := dpopEnv(t, false)
	tok := dpopToken(t, env, newDPoP(t, env))
	if tok.TokenType != "Bearer" || userID(t, env, tok.AccessToken) != machineSecretID {
		t.Errorf("token_type %q; want a working Bearer token", tok.TokenType)
	}
	resp, _ := do(t, http.MethodGet, env.URL+"/mcp", "", "", nil)
	if got := strings.Join(resp.Header.Values("WWW-Authenticate"), "\n"); strings.Contains(got, "DPoP") {
		t.Errorf("challenge %q mentions DPoP", got)
	}
}
