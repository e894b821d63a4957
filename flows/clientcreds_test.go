package flows_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
)

// testRSAKey is generated once: 2048-bit generation is slow.
func testRSAKey(t *testing.T) *rsa.PrivateKey {
	rsaOnce.Do(func() {
		var err error
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			t.Fatal(err)
		}
	})
	return rsaKey
}

func pemFile(t *testing.T, key crypto.Signer) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func ecKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func grantCfg(a *machineAS, c flows.Client) flows.GrantConfig {
	return flows.GrantConfig{Clock: flowstest.NewFakeClock(t0), Discovery: a.disc(), Client: c}
}

func TestClientCredentialsSecretBasicAndPost(t *testing.T) {
	for _, method := range []string{flows.AuthMethodBasic, flows.AuthMethodPost} {
		t.Run(method, func(t *testing.T) {
			a := newMachineAS(t)
			a.with(func() { a.secret = "s3cr:et/+" }) // needs form-encoding inside Basic
			tok, err := flows.ClientCredentials(context.Background(), grantCfg(a, flows.Client{ID: a.clientID, Secret: a.secret, AuthMethod: method}))
			if err != nil {
				t.Fatal(err)
			}
			if tok.AccessToken != "at-1" || tok.TokenType != "Bearer" || !tok.Expiry.Equal(t0.Add(600*time.Second)) {
				t.Fatalf("token %+v", tok)
			}
			forms, authz, _ := a.snapshot()
			f := forms[0]
			if f.Get("grant_type") != "client_credentials" || f.Get("scope") != "mcp" || f.Get("resource") != a.srv.URL+"/mcp" {
				t.Errorf("form %v", f)
			}
			if basic := strings.HasPrefix(authz[0], "Basic "); basic != (method == flows.AuthMethodBasic) || basic && f.Has("client_secret") {
				t.Errorf("%s: Authorization %q, form %v", method, authz[0], f)
			}
		})
	}
}

// Errors name the grant and carry the server's error and description.
func TestClientCredentialsErrorNamesGrant(t *testing.T) {
	a := newMachineAS(t)
	a.with(func() { a.secret = "right" })
	_, err := flows.ClientCredentials(context.Background(), grantCfg(a, flows.Client{ID: a.clientID, Secret: "wrong", AuthMethod: flows.AuthMethodBasic}))
	if !errors.Is(err, flows.ErrInvalidClient) {
		t.Fatalf("err %v, want invalid_client", err)
	}
	for _, want := range []string{"client credentials grant", "invalid_client", "bad basic credentials", a.tokenURL()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("error shows the secret: %v", err)
	}
}

// private_key_jwt: the server verifies the assertion's signature with the
// registered public key and every claim; each grant signs a new jti.
func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	for _, tc := range []struct {
		alg string
		key crypto.Signer
	}{{"RS256", testRSAKey(t)}, {"PS256", testRSAKey(t)}, {"ES256", ecKey(t)}, {"EdDSA", edKey}, {"", ecKey(t)}} {
		t.Run(tc.alg, func(t *testing.T) {
			a := newMachineAS(t)
			a.with(func() { a.clientKey = tc.key.Public() })
			s, err := flows.LoadSigner(pemFile(t, tc.key), tc.alg)
			if err != nil {
				t.Fatal(err)
			}
			cfg := grantCfg(a, flows.Client{ID: a.clientID, AuthMethod: flows.AuthMethodPrivateKeyJWT})
			cfg.Key = s
			for i := 0; i < 2; i++ { // the second would fail on a reused jti
				if _, err := flows.ClientCredentials(context.Background(), cfg); err != nil {
					_, _, fails := a.snapshot()
					t.Fatalf("grant %d: %v (%v)", i, err, fails)
				}
			}
			forms, authz, _ := a.snapshot()
			if forms[0].Get("client_assertion") == forms[1].Get("client_assertion") || authz[0] != "" {
				t.Error("assertion reused, or a Basic header sent")
			}
		})
	}
}

// A client assertion's aud is the issuer by default (rfc7523bis, the MCP
// client-credentials extension); the token endpoint only when asked, for
// servers that still want it.
func TestClientAssertionAudience(t *testing.T) {
	a := newMachineAS(t)
	k := ecKey(t)
	a.with(func() { a.clientKey = k.Public() })
	s, _ := flows.NewSigner(k, "")
	cfg := grantCfg(a, flows.Client{ID: a.clientID, AuthMethod: flows.AuthMethodPrivateKeyJWT})
	cfg.Key = s
	if _, err := flows.ClientCredentials(context.Background(), cfg); err != nil {
		t.Fatalf("issuer audience (the default): %v", err)
	}
	a.with(func() { a.audience = a.tokenURL() })
	if _, err := flows.ClientCredentials(context.Background(), cfg); err == nil {
		t.Fatal("issuer audience accepted by a server that wants the token endpoint")
	}
	cfg.AssertionAudience = flows.AudienceTokenEndpoint
	if _, err := flows.ClientCredentials(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	cfg.AssertionAudience = "elsewhere"
	if _, err := flows.ClientCredentials(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Fatalf("unknown audience choice: %v", err)
	}
}

// The fake server's checks are what the other tests rely on: it refuses an
// assertion missing any claim, and one presented twice.
func TestFakeServerRefusesDroppedClaimsAndReplays(t *testing.T) {
	a := newMachineAS(t)
	k := ecKey(t)
	a.clientKey = k.Public() // no request runs in this test: the checks are called directly
	s, _ := flows.NewSigner(k, "ES256")
	good, err := s.ClientAssertion(a.clientID, a.srv.URL, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.checkClientAssertion(good, a.clientID); err != nil {
		t.Fatalf("good assertion refused: %v", err)
	}
	if err := a.checkClientAssertion(good, a.clientID); err == nil {
		t.Error("replayed assertion accepted")
	}
	for _, drop := range []string{"iss", "sub", "aud", "jti", "exp", "iat"} {
		bad := resign(t, good, k, "ES256", func(c map[string]any) { delete(c, drop) })
		if err := a.checkClientAssertion(bad, a.clientID); err == nil {
			t.Errorf("assertion without %s accepted", drop)
		}
	}
	other := resign(t, good, ecKey(t), "ES256", func(c map[string]any) { c["jti"] = "fresh" })
	if err := a.checkClientAssertion(other, a.clientID); err == nil {
		t.Error("assertion signed by another key accepted")
	}
}

func TestLoadSignerBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	smallDER := x509.MarshalPKCS1PrivateKey(small)
	certish := write("cert.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2, 3}})))
	rsaPath := pemFile(t, testRSAKey(t))
	for _, tc := range []struct {
		name, path, alg, want string
	}{
		{"missing", filepath.Join(dir, "nope.pem"), "", "no such file"},
		{"not PEM", write("junk.pem", "hello"), "", "no PEM private key"},
		{"certificate", certish, "", `"CERTIFICATE" is not a private key`},
		{"encrypted", write("enc.pem", string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}}))), "", "encrypted"},
		{"HS256", rsaPath, "HS256", "unsupported signing algorithm"},
		{"ES256 with RSA", rsaPath, "ES256", "unsupported signing algorithm"},
		{"small RSA", write("small.pem", string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: smallDER}))), "", "2048"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := flows.LoadSigner(tc.path, tc.alg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if tc.alg != "" && !errors.Is(err, flows.ErrUnsupportedAlg) {
				t.Errorf("%v is not ErrUnsupportedAlg", err)
			}
		})
	}
	ec, err := flows.LoadSigner(pemFile(t, ecKey(t)), "ES384")
	if err == nil || !errors.Is(err, flows.ErrUnsupportedAlg) {
		t.Errorf("ES384 on a P-256 key: %v, %v", ec, err)
	}
	s, err := flows.LoadSigner(rsaPath, "")
	if err != nil || s.Alg() != "RS256" || strings.Contains(s.String()+s.GoString(), "PRIVATE") {
		t.Errorf("RSA default: %v %v", s, err)
	}
}
