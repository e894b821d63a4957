package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
)

const (
	machineSecretID = "ci-bot"
	machineKeyID    = "ci-key"
	machineSecret   = "0123456789abcdef0123456789abcdef-ci-bot"
)

// machineEnv is a server with one secret and one key machine client.
type machineEnv struct {
	*servertest.Env
	signer *flows.Signer     // the key client's private key
	key    *ecdsa.PrivateKey // the same, for assertions flows would never sign
}

func newMachineEnv(t *testing.T) machineEnv {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := flows.NewSigner(key, "")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(machineSecret))
	env := servertest.New(t, servertest.Options{MachineClients: []server.MachineClient{
		{ID: machineSecretID, SecretHash: sum[:]},
		{ID: machineKeyID, PublicKey: key.Public()},
	}})
	return machineEnv{env, signer, key}
}

func (e machineEnv) token(t *testing.T, form url.Values, hdr http.Header) (*http.Response, []byte) {
	t.Helper()
	form.Set("grant_type", "client_credentials")
	return do(t, http.MethodPost, e.URL+"/oauth/token", "application/x-www-form-urlencoded", form.Encode(), hdr)
}

func (e machineEnv) assertion(t *testing.T, aud string) url.Values {
	t.Helper()
	a, err := e.signer.ClientAssertion(machineKeyID, aud, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return url.Values{"client_assertion_type": {flows.ClientAssertionType}, "client_assertion": {a}}
}

func basicAuth(id, secret string) http.Header {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	return r.Header
}

// TestClientCredentialsWithSecret: an operator's machine client gets a
// Bearer token for itself, without a refresh token, with the secret sent
// either way; a wrong or missing secret is 401 invalid_client.
func TestClientCredentialsWithSecret(t *testing.T) {
	e := newMachineEnv(t)
	for name, send := range map[string]func() (*http.Response, []byte){
		"basic": func() (*http.Response, []byte) {
			return e.token(t, url.Values{"scope": {"mcp"}, "resource": {e.URL + "/mcp"}}, basicAuth(machineSecretID, machineSecret))
		},
		"post": func() (*http.Response, []byte) {
			return e.token(t, url.Values{"client_id": {machineSecretID}, "client_secret": {machineSecret}}, nil)
		},
	} {
		resp, body := send()
		tok := mustToken(t, resp, body)
		if tok.TokenType != "Bearer" || strings.Contains(string(body), "refresh_token") || tok.Scope != "mcp" {
			t.Errorf("%s: %s; want a Bearer token, scope mcp, no refresh token", name, body)
		}
		if id := userID(t, e.Env, tok.AccessToken); id != machineSecretID {
			t.Errorf("%s: ping user_id %q, want the client %q", name, id, machineSecretID)
		}
	}

	resp, body := e.token(t, url.Values{}, basicAuth(machineSecretID, machineSecret+"x"))
	oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_client")
	if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("invalid_client after Basic: WWW-Authenticate %q, want a Basic challenge (RFC 6749 §5.2)", resp.Header.Get("WWW-Authenticate"))
	}
	for name, form := range map[string]url.Values{
		"unknown client":      {"client_id": {"nobody"}, "client_secret": {machineSecret}},
		"key client's secret": {"client_id": {machineKeyID}, "client_secret": {machineSecret}},
		"no authentication":   {"client_id": {machineSecretID}},
	} {
		resp, body := e.token(t, form, nil)
		oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_client")
		if strings.Contains(string(body), machineSecret) {
			t.Errorf("%s: the answer echoes the secret", name)
		}
	}
	resp, body = e.token(t, url.Values{"client_id": {machineSecretID}, "client_secret": {machineSecret}}, basicAuth(machineSecretID, machineSecret))
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_request")
	resp, body = e.token(t, url.Values{"client_id": {machineSecretID}, "client_secret": {machineSecret}, "scope": {"admin"}}, nil)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_scope")
	resp, body = e.token(t, url.Values{"client_id": {machineSecretID}, "client_secret": {machineSecret}, "resource": {"https://elsewhere.example/mcp"}}, nil)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_target")
}

// TestClientCredentialsWithPrivateKeyJWT: an assertion signed by the
// registered key, aud the issuer, is accepted once; a replay, another
// audience, another key or a far exp is invalid_client.
func TestClientCredentialsWithPrivateKeyJWT(t *testing.T) {
	e := newMachineEnv(t)
	form := e.assertion(t, e.URL)
	resp, body := e.token(t, form, nil)
	tok := mustToken(t, resp, body)
	if id := userID(t, e.Env, tok.AccessToken); id != machineKeyID {
		t.Errorf("ping user_id %q, want %q", id, machineKeyID)
	}
	resp, body = e.token(t, form, nil)
	oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_client")
	if !strings.Contains(string(body), "jti was used before") {
		t.Errorf("replayed assertion: %s; want it named a replay", body)
	}

	resp, body = e.token(t, e.assertion(t, e.URL+"/oauth/token"), nil)
	oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_client")
	if !strings.Contains(string(body), "aud must be the issuer") {
		t.Errorf("token endpoint audience: %s; want aud named", body)
	}

	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherSigner, _ := flows.NewSigner(other, "")
	a, _ := otherSigner.ClientAssertion(machineKeyID, e.URL, e.Clock.Now())
	resp, body = e.token(t, url.Values{"client_assertion_type": {flows.ClientAssertionType}, "client_assertion": {a}}, nil)
	oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_client")

	// Past the clock: expired. Far ahead: refused even though it verifies.
	stale := e.assertion(t, e.URL)
	e.Clock.Advance(2 * time.Minute)
	resp, body = e.token(t, stale, nil)
	oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_client")

	now := e.Clock.Now()
	long := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": machineKeyID, "sub": machineKeyID, "aud": e.URL,
		"jti": "long-lived", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	raw, err := long.SignedString(e.key)
	if err != nil {
		t.Fatal(err)
	}
	resp, body = e.token(t, url.Values{"client_assertion_type": {flows.ClientAssertionType}, "client_assertion": {raw}}, nil)
	oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_client")

	// The secret client has no key: its name in an assertion is refused.
	resp, body = e.token(t, url.Values{"client_id": {machineSecretID}, "client_assertion_type": {flows.ClientAssertionType}, "client_assertion": {e.assertion(t, e.URL).Get("client_assertion")}}, nil)
	oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_client")
}

// TestClientCredentialsOnlyWithMachineClients: a server without machine
// clients neither advertises nor serves the grant, as before.
func TestClientCredentialsOnlyWithMachineClients(t *testing.T) {
	plain := newEnv(t)
	resp, body := postForm(t, plain.URL+"/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {"x"}, "client_secret": {"y"}})
	oauthErr(t, resp, body, http.StatusBadRequest, "unsupported_grant_type")
	for env, want := range map[*servertest.Env]bool{plain: false, newMachineEnv(t).Env: true} {
		var md struct {
			Grants  []string `json:"grant_types_supported"`
			Methods []string `json:"token_endpoint_auth_methods_supported"`
		}
		_, body := do(t, http.MethodGet, env.URL+"/.well-known/oauth-authorization-server", "", "", nil)
		mustJSON(t, body, &md)
		if has := strings.Contains(strings.Join(md.Grants, " "), "client_credentials"); has != want {
			t.Errorf("machine clients %t: grant_types_supported %v", want, md.Grants)
		}
		if has := strings.Contains(strings.Join(md.Methods, " "), "private_key_jwt"); has != want {
			t.Errorf("machine clients %t: token_endpoint_auth_methods_supported %v", want, md.Methods)
		}
	}
}

// TestLoadMachineClients reads the --machine-clients file: files relative
// to it, a short secret, two credentials and bad ids refused.
func TestLoadMachineClients(t *testing.T) {
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(key.Public())
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("bot.secret", machineSecret+"\n")
	write("key.pub", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})))
	write("short.secret", "hunter2")
	sum := sha256.Sum256([]byte(machineSecret))
	write("ok.json", `[{"client_id":"ci-bot","client_secret_file":"bot.secret"},{"client_id":"ci-key","public_key_file":"key.pub"},
		{"client_id":"hashed","client_secret_sha256":"`+hex.EncodeToString(sum[:])+`"}]`)
	cs, err := server.LoadMachineClients(filepath.Join(dir, "ok.json"))
	if err != nil || len(cs) != 3 || string(cs[0].SecretHash) != string(sum[:]) || string(cs[2].SecretHash) != string(sum[:]) || cs[1].PublicKey == nil {
		t.Fatalf("LoadMachineClients = %+v, %v", cs, err)
	}
	for name, content := range map[string]string{
		"short secret": `[{"client_id":"a","client_secret_file":"short.secret"}]`,
		"both":         `[{"client_id":"a","client_secret_file":"bot.secret","public_key_file":"key.pub"}]`,
		"user-like id": `[{"client_id":"u_abc","client_secret_file":"bot.secret"}]`,
		"URL id":       `[{"client_id":"https://x.example/","client_secret_file":"bot.secret"}]`,
		"repeated":     `[{"client_id":"a","client_secret_file":"bot.secret"},{"client_id":"a","public_key_file":"key.pub"}]`,
		"unknown":      `[{"client_id":"a","client_secret":"` + machineSecret + `"}]`,
		"not a key":    `[{"client_id":"a","public_key_file":"bot.secret"}]`,
	} {
		write("bad.json", content)
		_, err := server.LoadMachineClients(filepath.Join(dir, "bad.json"))
		if err == nil {
			t.Errorf("%s: loaded", name)
		} else if strings.Contains(err.Error(), machineSecret) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows a secret: %v", name, err)
		}
	}
}
