package login_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/keyring/keyringtest"
)

// machineServer is an MCP server with an authorization server that speaks
// only the client credentials grant, DPoP when advertised, and a
// /api/ping that checks DPoP proofs (signature, htm, htu, ath, jti).
type machineServer struct {
	srv  *httptest.Server
	dpop bool // advertise DPoP
	mu   sync.Mutex
	n    int
	jtis map[string]bool
	// bound maps issued tokens to their key thumbprint ("" for Bearer).
	bound  map[string]string
	bearer bool // issue Bearer even when a proof came
	// clientKey is the bot's registered public key (private_key_jwt, kid k1).
	clientKey *ecdsa.PublicKey
	now       func() time.Time // the server's clock (the test's moved clock)
	// assertions are the JWT bearer assertions the server accepts, each once.
	assertions map[string]bool
}

func newMachineServer(t *testing.T, dpop bool) *machineServer {
	m := &machineServer{now: time.Now, dpop: dpop, jtis: map[string]bool{}, bound: map[string]string{}, assertions: map[string]bool{}}
	mux := http.NewServeMux()
	m.srv = httptest.NewServer(mux)
	t.Cleanup(m.srv.Close)
	u := m.srv.URL
	js := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+u+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(401)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		prm := map[string]any{"resource": u + "/mcp", "authorization_servers": []string{u}, "scopes_supported": []string{"mcp"}}
		if m.dpop { // the resource says it takes DPoP (RFC 9728 §2): the CLI binds only then
			prm["dpop_signing_alg_values_supported"] = []string{"ES256"}
		}
		js(w, 200, prm)
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		// No code_challenge_methods_supported: PKCE protects codes, which a
		// server for machines need not issue.
		// offline_access listed, as Better Auth does, which refuses it for
		// client credentials (no refresh token there, RFC 6749 §4.4.3).
		md := map[string]any{"issuer": u, "token_endpoint": u + "/oauth/token", "grant_types_supported": []string{"client_credentials"},
			"scopes_supported": []string{"mcp", "offline_access"}}
		if m.dpop {
			md["dpop_signing_alg_values_supported"] = []string{"ES256"}
		}
		js(w, 200, md)
	})
	mux.HandleFunc("/oauth/token", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		defer m.mu.Unlock()
		_ = r.ParseForm()
		if strings.Contains(r.PostForm.Get("scope"), "offline_access") {
			js(w, 400, map[string]string{"error": "invalid_scope", "error_description": "offline_access is not for machine grants"})
			return
		}
		id, secret, _ := r.BasicAuth()
		if a := r.PostForm.Get("assertion"); r.PostForm.Get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer" {
			if !m.assertions[a] || id != "" {
				js(w, 400, map[string]string{"error": "invalid_grant", "error_description": "assertion not accepted"})
				return
			}
			m.assertions[a] = false
		} else if ca := r.PostForm.Get("client_assertion"); ca != "" {
			if err := m.clientAssertion(ca, u); err != nil { // aud: the issuer (rfc7523bis)
				js(w, 401, map[string]string{"error": "invalid_client", "error_description": err.Error()})
				return
			}
		} else if id != "bot" || secret != "s3cret" || r.PostForm.Get("grant_type") != "client_credentials" {
			js(w, 401, map[string]string{"error": "invalid_client", "error_description": "who are you"})
			return
		}
		jkt := ""
		if p := r.Header.Get("DPoP"); p != "" {
			var err error
			if jkt, err = m.proof(p, "POST", u+"/oauth/token", ""); err != nil {
				js(w, 400, map[string]string{"error": "invalid_dpop_proof", "error_description": err.Error()})
				return
			}
		}
		m.n++
		tok, tt := fmt.Sprintf("at-%d", m.n), "Bearer"
		if jkt != "" && !m.bearer {
			tt = "DPoP"
		}
		m.bound[tok] = jkt
		js(w, 200, map[string]any{"access_token": tok, "token_type": tt, "expires_in": 60})
	})
	// An enterprise IdP's token endpoint: the ID token for an ID-JAG
	// addressed to this server, which the server then accepts once.
	mux.HandleFunc("/idp/token", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		defer m.mu.Unlock()
		_ = r.ParseForm()
		f := r.PostForm
		id, secret, _ := r.BasicAuth()
		if id != "idp-client" || secret != "idp-secret" || f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" ||
			f.Get("subject_token") != "h.alice.s" || f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token" ||
			f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag" || f.Get("audience") != u || f.Get("resource") != u+"/mcp" {
			js(w, 400, map[string]string{"error": "invalid_request", "error_description": "bad exchange"})
			return
		}
		m.n++
		jag := fmt.Sprintf("h.jag%d.s", m.n)
		m.assertions[jag] = true
		js(w, 200, map[string]any{"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"})
	})
	mux.HandleFunc("/api/ping", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		defer m.mu.Unlock()
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		jkt, ok := m.bound[tok]
		if ok && jkt != "" {
			got, err := m.proof(r.Header.Get("DPoP"), "GET", u+"/api/ping", tok)
			ok = err == nil && got == jkt && scheme == "DPoP"
		}
		if !ok {
			w.WriteHeader(401)
			return
		}
		js(w, 200, map[string]string{"status": "ok", "user_id": "svc-bot/" + tok})
	})
	return m
}

// clientAssertion verifies a private_key_jwt assertion.
func (m *machineServer) clientAssertion(a, aud string) error {
	claims := jwt.MapClaims{}
	_, err := jwt.NewParser(jwt.WithValidMethods([]string{"ES256"}), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithAudience(aud), jwt.WithTimeFunc(m.now)).
		ParseWithClaims(a, claims, func(t *jwt.Token) (any, error) {
			if t.Header["kid"] != "k1" || m.clientKey == nil {
				return nil, errors.New("unknown kid")
			}
			return m.clientKey, nil
		})
	if err != nil {
		return err
	}
	jti, _ := claims["jti"].(string)
	if claims["iss"] != "bot" || claims["sub"] != "bot" || jti == "" || m.jtis[jti] {
		return fmt.Errorf("assertion claims %v", claims)
	}
	m.jtis[jti] = true
	return nil
}

// proof verifies a DPoP proof and returns its key's thumbprint.
func (m *machineServer) proof(p, htm, htu, token string) (string, error) {
	var jkt string
	claims := jwt.MapClaims{}
	_, err := jwt.NewParser(jwt.WithValidMethods([]string{"ES256"})).ParseWithClaims(p, claims, func(t *jwt.Token) (any, error) {
		jwk, _ := t.Header["jwk"].(map[string]any)
		x, _ := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["x"]))
		y, _ := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["y"]))
		if t.Header["typ"] != "dpop+jwt" || len(x) != 32 || len(y) != 32 {
			return nil, errors.New("bad proof header")
		}
		sum := sha256.Sum256([]byte(fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`, jwk["x"], jwk["y"])))
		jkt = base64.RawURLEncoding.EncodeToString(sum[:])
		return &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}, nil
	})
	if err != nil {
		return "", err
	}
	jti, _ := claims["jti"].(string)
	ath := ""
	if token != "" {
		s := sha256.Sum256([]byte(token))
		ath = base64.RawURLEncoding.EncodeToString(s[:])
	}
	if claims["htm"] != htm || claims["htu"] != htu || jti == "" || m.jtis[jti] || fmt.Sprint(claims["ath"]) != firstOr(ath, "<nil>") {
		return "", fmt.Errorf("proof claims %v", claims)
	}
	m.jtis[jti] = true
	return jkt, nil
}

func ecPEM(t *testing.T) string {
	p, _ := ecPEMKey(t)
	return p
}

func ecPEMKey(t *testing.T) (string, *ecdsa.PublicKey) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	p := filepath.Join(t.TempDir(), "ec.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, &k.PublicKey
}

func firstOr(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

type movableClock struct {
	mu    sync.Mutex
	shift time.Duration
}

func (c *movableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.shift)
}
func (c *movableClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (c *movableClock) move(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shift += d
}

func machineCLI(t *testing.T) (*clitest.CLI, *movableClock) {
	c := clitest.New(t, nil)
	c.Vars["MCPAUTH_STORAGE"] = "keyring"
	c.Backend = &keyringtest.Memory{}
	clk := &movableClock{}
	c.Clock = clk
	c.Vars["MCPAUTH_CLIENT_SECRET"] = "s3cret"
	return c, clk
}

// The whole machine path: client credentials with the secret from the
// environment, DPoP because the server advertises it, ping and token
// --header with proofs, renewal by running the grant again once the token
// expires, and neither the secret nor the DPoP key in clear on disk.
func TestMachineLoginClientCredentialsDPoP(t *testing.T) {
	m := newMachineServer(t, true)
	c, clk := machineCLI(t)
	code, _, stderr := c.Run("login", m.srv.URL+"/mcp", "--client-credentials", "--client-id", "bot")
	if code != 0 || strings.Contains(stderr, "UNSAFE") {
		t.Fatalf("login: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := c.Run("ping")
	if code != 0 || strings.TrimSpace(stdout) != "svc-bot/at-1" {
		t.Fatalf("ping: exit %d %q %s", code, stdout, stderr)
	}
	code, stdout, _ = c.Run("token", "--header")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 2 || lines[0] != "Authorization: DPoP at-1" || !strings.HasPrefix(lines[1], "DPoP: ey") {
		t.Fatalf("token --header: exit %d %q", code, stdout)
	}
	// The printed headers work once, for GET /api/ping.
	req, _ := http.NewRequest("GET", m.srv.URL+"/api/ping", nil)
	req.Header.Set("Authorization", strings.TrimPrefix(lines[0], "Authorization: "))
	req.Header.Set("DPoP", strings.TrimPrefix(lines[1], "DPoP: "))
	for i, want := range []int{200, 401} { // a replayed proof is refused
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != want {
			t.Fatalf("request %d with printed headers: %v %v", i, resp, err)
		}
		resp.Body.Close()
	}
	clk.move(2 * time.Minute) // expired: token and ping run the grant again
	code, stdout, stderr = c.Run("ping")
	if code != 0 || strings.TrimSpace(stdout) != "svc-bot/at-2" {
		t.Fatalf("ping after expiry: exit %d %q %s", code, stdout, stderr)
	}
	var bound map[string]string
	m.mu.Lock()
	bound = m.bound
	if bound["at-1"] == "" || bound["at-1"] != bound["at-2"] {
		t.Errorf("renewal changed or dropped the DPoP key: %v", bound)
	}
	m.mu.Unlock()
	_ = filepath.Walk(c.Vars["MCPAUTH_CONFIG_DIR"], func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(p)
			if strings.Contains(string(data), "s3cret") || strings.Contains(string(data), "at-2") {
				t.Errorf("%s holds a secret in clear", p)
			}
		}
		return nil
	})
}

// --no-dpop: a Bearer token even from a DPoP server; a server that ignores
// DPoP when asked: a clear error and nothing stored.
func TestMachineLoginDPoPChoices(t *testing.T) {
	m := newMachineServer(t, true)
	c, _ := machineCLI(t)
	if code, _, stderr := c.Run("login", m.srv.URL+"/mcp", "--client-credentials", "--client-id", "bot", "--no-dpop"); code != 0 {
		t.Fatalf("login --no-dpop: %s", stderr)
	}
	if code, stdout, _ := c.Run("token", "--header"); code != 0 || stdout != "Authorization: Bearer at-1\n" {
		t.Fatalf("token --header: %q", stdout)
	}
	m.mu.Lock()
	m.bearer = true
	m.mu.Unlock()
	c2, _ := machineCLI(t)
	code, _, stderr := c2.Run("login", m.srv.URL+"/mcp", "--client-credentials", "--client-id", "bot")
	if code == 0 || !strings.Contains(stderr, "not DPoP-bound") {
		t.Fatalf("Bearer from a DPoP request: exit %d %s", code, stderr)
	}
	if code, _, _ := c2.Run("token"); code != clierr.ExitAuthRequired {
		t.Errorf("something was stored: token exit %d", code)
	}
}

func TestMachineLoginErrors(t *testing.T) {
	m := newMachineServer(t, false)
	c, _ := machineCLI(t)
	c.Vars["MCPAUTH_CLIENT_SECRET"] = "wrong"
	code, _, stderr := c.Run("login", m.srv.URL+"/mcp", "--client-credentials", "--client-id", "bot")
	if code != clierr.ExitFailure || !strings.Contains(stderr, "client credentials grant") || !strings.Contains(stderr, "invalid_client") || !strings.Contains(stderr, "who are you") || strings.Contains(stderr, "wrong") {
		t.Errorf("refused secret: exit %d: %s", code, stderr)
	}
	junk := filepath.Join(t.TempDir(), "k.pem")
	_ = os.WriteFile(junk, []byte("not a key"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--client-credentials"}, "needs --client-id"},
		{[]string{"--client-credentials", "--client-id", "bot", "--private-key-file", junk}, "not both"},
		{[]string{"--client-credentials", "--client-id", "bot", "--token-auth", "jwt"}, "basic or post"},
		{[]string{"--client-credentials", "--client-id", "bot", "--dpop", "--no-dpop"}, "contradict"},
		{[]string{"--client-id", "bot", "--id-token-file", junk}, "--idp-token-endpoint"},
		{[]string{"--dpop", "--no-dpop"}, "contradict"},
		{[]string{"--private-key-file", junk}, "applies to machine logins"},
	} {
		code, _, stderr := c.Run(append([]string{"login", m.srv.URL + "/mcp"}, tc.args...)...)
		if code != clierr.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		}
	}
	delete(c.Vars, "MCPAUTH_CLIENT_SECRET")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--private-key-file", junk}, "no PEM private key"},
		{[]string{"--private-key-file", filepath.Join(t.TempDir(), "missing.pem")}, "no such file"},
		{[]string{"--private-key-file", ecPEM(t), "--signing-alg", "HS256"}, "unsupported signing algorithm"},
		{[]string{"--private-key-file", ecPEM(t), "--signing-alg", "RS256"}, "does not fit"},
	} {
		args := append([]string{"login", m.srv.URL + "/mcp", "--client-credentials", "--client-id", "bot"}, tc.args...)
		code, _, stderr := c.Run(args...)
		if code != clierr.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		}
	}
}

// The JWT bearer grant with the workload token in MCPAUTH_JWT_BEARER_ASSERTION,
// as in CI: renewal reads the variable again (a job fetches a fresh token).
func TestMachineLoginJWTBearerFromEnv(t *testing.T) {
	m := newMachineServer(t, false)
	c, clk := machineCLI(t)
	delete(c.Vars, "MCPAUTH_CLIENT_SECRET")
	m.mu.Lock()
	m.assertions["h.first.s"], m.assertions["h.second.s"] = true, true
	m.mu.Unlock()
	c.Vars["MCPAUTH_JWT_BEARER_ASSERTION"] = "h.first.s"
	if code, _, stderr := c.Run("login", m.srv.URL+"/mcp", "--output", "json"); code != 0 {
		t.Fatalf("login: %s", stderr)
	}
	clk.move(2 * time.Minute)
	code, _, stderr := c.Run("ping")
	if code != clierr.ExitAuthRequired || !strings.Contains(stderr, "JWT bearer grant") || !strings.Contains(stderr, "assertion not accepted") {
		t.Fatalf("renewal with a spent assertion: exit %d %s", code, stderr)
	}
	c.Vars["MCPAUTH_JWT_BEARER_ASSERTION"] = "h.second.s"
	if code, stdout, stderr := c.Run("token"); code != 0 || stdout != "at-2\n" {
		t.Fatalf("renewal with a fresh assertion: exit %d %q %s", code, stdout, stderr)
	}
}

// --debug shows the machine grant's requests without its secrets: the
// Basic credentials, the DPoP proof and the token.
func TestMachineLoginDebugTraceRedacts(t *testing.T) {
	m := newMachineServer(t, true)
	c, _ := machineCLI(t)
	code, _, stderr := c.Run("login", m.srv.URL+"/mcp", "--client-credentials", "--client-id", "bot", "--debug")
	if code != 0 || !strings.Contains(stderr, "POST "+m.srv.URL+"/oauth/token") {
		t.Fatalf("exit %d, trace:\n%s", code, stderr)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("bot:s3cret"))
	for _, secret := range []string{"s3cret", basic, "at-1", "eyJ"} {
		if strings.Contains(stderr, secret) {
			t.Errorf("trace shows %q:\n%s", secret, stderr)
		}
	}
}

// Enterprise-managed authorization from the CLI: the ID token file is
// exchanged at the IdP for an ID-JAG, which the server trades for a token;
// renewal does both again.
func TestMachineLoginEnterprise(t *testing.T) {
	m := newMachineServer(t, false)
	c, clk := machineCLI(t)
	delete(c.Vars, "MCPAUTH_CLIENT_SECRET")
	c.Vars["MCPAUTH_IDP_CLIENT_SECRET"] = "idp-secret"
	idt := filepath.Join(t.TempDir(), "id.jwt")
	if err := os.WriteFile(idt, []byte("h.alice.s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := c.Run("login", m.srv.URL+"/mcp", "--id-token-file", idt, "--idp-token-endpoint", m.srv.URL+"/idp/token", "--idp-client-id", "idp-client")
	if code != 0 {
		t.Fatalf("login: exit %d %s", code, stderr)
	}
	clk.move(2 * time.Minute)
	if code, stdout, stderr := c.Run("ping"); code != 0 || !strings.Contains(stdout, "svc-bot/at-") {
		t.Fatalf("ping after renewal: exit %d %q %s", code, stdout, stderr)
	}
	m.mu.Lock()
	n := m.n
	m.mu.Unlock()
	if n != 4 { // two exchanges, two grants
		t.Errorf("%d tokens issued, want 4", n)
	}
	_ = os.WriteFile(idt, []byte("h.bob.s"), 0o600)
	clk.move(2 * time.Minute)
	code, _, stderr = c.Run("token")
	if code != clierr.ExitAuthRequired || !strings.Contains(stderr, "step 1") || !strings.Contains(stderr, "bad exchange") {
		t.Errorf("refused exchange: exit %d %s", code, stderr)
	}
}

// private_key_jwt from the CLI, the key file named in the environment: the
// server checks the signature with the registered key, the kid and the
// claims, and refuses a reused jti, so the renewal must sign anew.
func TestMachineLoginPrivateKeyJWT(t *testing.T) {
	m := newMachineServer(t, false)
	c, clk := machineCLI(t)
	delete(c.Vars, "MCPAUTH_CLIENT_SECRET")
	keyFile, pub := ecPEMKey(t)
	m.mu.Lock()
	m.clientKey, m.now = pub, clk.Now
	m.mu.Unlock()
	c.Vars["MCPAUTH_PRIVATE_KEY_FILE"] = keyFile
	code, _, stderr := c.Run("login", m.srv.URL+"/mcp", "--client-credentials", "--client-id", "bot", "--key-id", "k1")
	if code != 0 {
		t.Fatalf("login: exit %d %s", code, stderr)
	}
	delete(c.Vars, "MCPAUTH_PRIVATE_KEY_FILE") // renewal uses the stored path
	clk.move(2 * time.Minute)
	if code, stdout, stderr := c.Run("token"); code != 0 || stdout != "at-2\n" {
		t.Fatalf("renewal: exit %d %q %s", code, stdout, stderr)
	}
	_ = os.Remove(keyFile)
	clk.move(2 * time.Minute)
	if code, _, stderr := c.Run("token"); code != clierr.ExitUsage || !strings.Contains(stderr, "private key") {
		t.Errorf("renewal without the key file: exit %d %s", code, stderr)
	}
}
