package flows_test

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/internal/probe"
)

// resign decodes tok's header and claims, lets mod change the claims, and
// signs the result with key.
func resign(t *testing.T, tok string, key crypto.Signer, alg string, mod func(map[string]any)) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	var hdr, claims map[string]any
	for i, v := range []*map[string]any{&hdr, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil || json.Unmarshal(raw, v) != nil {
			t.Fatalf("decoding part %d: %v", i, err)
		}
	}
	mod(claims)
	j := jwt.NewWithClaims(jwt.GetSigningMethod(alg), jwt.MapClaims(claims))
	for k, v := range hdr {
		j.Header[k] = v
	}
	s, err := j.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newDPoP(t *testing.T) *flows.DPoP {
	d, err := flows.NewDPoP(flowstest.NewFakeClock(t0))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func dpopGrant(t *testing.T, a *machineAS) (flows.GrantConfig, *flows.DPoP) {
	a.with(func() { a.secret = "s" })
	cfg := grantCfg(a, flows.Client{ID: a.clientID, Secret: a.secret, AuthMethod: flows.AuthMethodBasic})
	cfg.DPoP = newDPoP(t)
	return cfg, cfg.DPoP
}

// A DPoP grant: the proof verifies with its embedded key, the token comes
// back bound to that key (token_type DPoP), and the resource accepts it
// only with a fresh proof carrying ath = base64url(SHA-256(token)).
func TestDPoPTokenAndResource(t *testing.T) {
	a := newMachineAS(t)
	cfg, d := dpopGrant(t, a)
	tok, err := flows.ClientCredentials(context.Background(), cfg)
	if err != nil {
		_, _, fails := a.snapshot()
		t.Fatalf("%v (%v)", err, fails)
	}
	var jkt string
	a.with(func() { jkt = a.bound[tok.AccessToken] })
	if tok.TokenType != "DPoP" || jkt != d.Thumbprint() {
		t.Fatalf("token %+v not bound to %s", tok, d.Thumbprint())
	}
	for i := 0; i < 2; i++ { // the second ping would fail on a reused proof
		res, err := probe.Ping(context.Background(), d.Client(nil, mustOrigin(t, a.srv.URL), tok.AccessToken), a.srv.URL, tok.AccessToken)
		if err != nil {
			_, _, fails := a.snapshot()
			t.Fatalf("ping %d: %v (%v)", i, err, fails)
		}
		if res.UserID != "svc-robot" {
			t.Fatalf("ping %+v", res)
		}
	}
	// Without the proof, or with another key's, the bound token is refused.
	if _, err := probe.Ping(context.Background(), nil, a.srv.URL, tok.AccessToken); !errors.Is(err, flows.ErrUnauthorized) {
		t.Errorf("bound token accepted as Bearer: %v", err)
	}
	if _, err := probe.Ping(context.Background(), newDPoP(t).Client(nil, mustOrigin(t, a.srv.URL), tok.AccessToken), a.srv.URL, tok.AccessToken); !errors.Is(err, flows.ErrUnauthorized) {
		t.Errorf("bound token accepted with another key: %v", err)
	}
}

// The fake server refuses a proof missing any claim, with a wrong ath, or
// presented twice: the tests above depend on it.
func TestFakeServerRefusesBadProofs(t *testing.T) {
	a := newMachineAS(t)
	d := newDPoP(t)
	u := a.srv.URL + "/api/ping"
	p, err := d.Proof("GET", u+"?q=1#f", "tok")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.checkProof(p, "GET", u, "tok", ""); err != nil {
		t.Fatalf("good proof refused: %v", err)
	}
	if _, err := a.checkProof(p, "GET", u, "tok", ""); err == nil {
		t.Error("replayed proof accepted")
	}
	fresh, _ := d.Proof("GET", u, "tok")
	if _, err := a.checkProof(fresh, "GET", u, "other-token", ""); err == nil || !strings.Contains(err.Error(), "ath") {
		t.Errorf("proof for another token: %v", err)
	}
	if _, err := a.checkProof(fresh, "POST", u, "", ""); err == nil {
		t.Error("proof for GET accepted for POST")
	}
	key := dpopPrivate(t, d)
	for _, drop := range []string{"jti", "htm", "htu", "iat", "ath"} {
		fresh, _ := d.Proof("GET", u, "tok")
		bad := resign(t, fresh, key, "ES256", func(c map[string]any) { delete(c, drop) })
		if _, err := a.checkProof(bad, "GET", u, "tok", ""); err == nil {
			t.Errorf("proof without %s accepted", drop)
		}
	}
}

// dpopPrivate recovers the key through its serialised form, as the keyring
// round trip does.
func dpopPrivate(t *testing.T, d *flows.DPoP) crypto.Signer {
	s, err := d.MarshalKey()
	if err != nil {
		t.Fatal(err)
	}
	der, _ := base64.RawURLEncoding.DecodeString(s)
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := flows.ParseDPoPKey(s, nil)
	if err != nil || d2.Thumbprint() != d.Thumbprint() {
		t.Fatalf("key round trip: %v", err)
	}
	return k.(crypto.Signer)
}

// use_dpop_nonce at the token endpoint and at the resource: one retry with
// the server's nonce, with a new proof (and client assertion).
func TestDPoPNonceRetry(t *testing.T) {
	a := newMachineAS(t)
	a.with(func() { a.asNonce, a.rsNonce = "as-nonce", "rs-nonce" })
	cfg, d := dpopGrant(t, a)
	tok, err := flows.ClientCredentials(context.Background(), cfg)
	if err != nil {
		_, _, fails := a.snapshot()
		t.Fatalf("%v (%v)", err, fails)
	}
	if n, _ := a.calls(); n != 2 || d.Nonce(a.tokenURL()) != "as-nonce" {
		t.Fatalf("%d token calls, nonce %q", n, d.Nonce(a.tokenURL()))
	}
	if _, err := probe.Ping(context.Background(), d.Client(nil, mustOrigin(t, a.srv.URL), tok.AccessToken), a.srv.URL, tok.AccessToken); err != nil {
		t.Fatal(err)
	}
	if _, n := a.calls(); n != 2 {
		t.Errorf("%d ping calls, want 2", n)
	}
	// Nonces are kept per origin and reused: the next grant needs no retry.
	if _, err := flows.ClientCredentials(context.Background(), cfg); err != nil {
		t.Error(err)
	}
	if n, _ := a.calls(); n != 3 {
		t.Errorf("second grant took %d calls in all, want 3", n)
	}
}

// A server that answers every nonce with a new one is given up on after one
// retry, at the token endpoint and at the resource.
func TestDPoPNonceLoopIsBounded(t *testing.T) {
	a := newMachineAS(t)
	a.with(func() { a.asNonce, a.newNonce = "n", true })
	cfg, d := dpopGrant(t, a)
	_, err := flows.ClientCredentials(context.Background(), cfg)
	if n, _ := a.calls(); !errors.Is(err, flows.ErrDPoPNonceLoop) || n != 2 {
		t.Fatalf("err %v after %d calls", err, n)
	}
	if !strings.Contains(err.Error(), "client credentials grant") || !strings.Contains(err.Error(), "use_dpop_nonce") {
		t.Errorf("error does not name the grant and the server's error: %v", err)
	}
	a.with(func() { a.newNonce = false })
	tok, err := flows.ClientCredentials(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.with(func() { a.newNonce, a.rsNonce = true, "r" })
	_, err = probe.Ping(context.Background(), d.Client(nil, mustOrigin(t, a.srv.URL), tok.AccessToken), a.srv.URL, tok.AccessToken)
	if _, n := a.calls(); !errors.Is(err, flows.ErrUnauthorized) || n != 2 {
		t.Errorf("resource nonce loop: %v after %d calls", err, n)
	}
}

// DPoP asked, Bearer issued: refused, so the caller stores nothing.
func TestDPoPRequestedButBearerIssued(t *testing.T) {
	a := newMachineAS(t)
	a.with(func() { a.tokenType = "Bearer" })
	cfg, _ := dpopGrant(t, a)
	tok, err := flows.ClientCredentials(context.Background(), cfg)
	if !errors.Is(err, flows.ErrNotDPoPBound) || tok != nil {
		t.Fatalf("token %v, err %v", tok, err)
	}
}

func TestDPoPProofShape(t *testing.T) {
	d := newDPoP(t)
	p, err := d.Proof("POST", "https://as.example/token?x=1", "")
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{}
	tk, _, err := jwt.NewParser().ParseUnverified(p, claims)
	if err != nil {
		t.Fatal(err)
	}
	jwk, _ := tk.Header["jwk"].(map[string]any)
	if tk.Header["typ"] != "dpop+jwt" || tk.Header["alg"] != "ES256" || jwk["d"] != nil || jwk["kty"] != "EC" {
		t.Errorf("header %v", tk.Header)
	}
	if claims["htu"] != "https://as.example/token" || claims["htm"] != "POST" || claims["ath"] != nil || claims["iat"] != float64(t0.Unix()) {
		t.Errorf("claims %v", claims)
	}
	if strings.Contains(d.String()+d.GoString(), "PRIVATE") || !strings.Contains(d.String(), d.Thumbprint()) {
		t.Errorf("String %s", d)
	}
}
