package flows_test

import (
	"context"
	"crypto/ecdsa"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// workloadAssertion is what a workload identity provider (GitHub Actions
// OIDC, a cloud metadata server) hands a job: a JWT it signed for aud.
func workloadAssertion(t *testing.T, key *ecdsa.PrivateKey, iss, aud string) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": iss, "sub": "repo:acme/app:ref:refs/heads/main", "aud": aud,
		"iat": t0.Unix(), "exp": t0.Add(5 * time.Minute).Unix(), "jti": "w1",
	}).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJWTBearerWorkloadIdentity(t *testing.T) {
	a := newMachineAS(t)
	wk := ecKey(t)
	const iss = "https://token.actions.example"
	a.with(func() { a.trusted[iss] = wk.Public() })
	assertion := workloadAssertion(t, wk, iss, a.srv.URL)
	cfg := grantCfg(a, flows.Client{ID: a.clientID, AuthMethod: flows.AuthMethodNone})
	cfg.DPoP = newDPoP(t)
	tok, err := flows.JWTBearer(context.Background(), cfg, assertion+"\n")
	if err != nil {
		_, _, fails := a.snapshot()
		t.Fatalf("%v (%v)", err, fails)
	}
	forms, _, _ := a.snapshot()
	if tok.TokenType != "DPoP" || forms[0].Get("assertion") != assertion || forms[0].Get("grant_type") != oauthwire.GrantTypeJWTBearer || forms[0].Get("client_id") != "robot" {
		t.Errorf("token %+v, form %v", tok, forms[0])
	}
	// An assertion from an issuer the server does not trust: the error names
	// the grant and says what the server said.
	_, err = flows.JWTBearer(context.Background(), cfg, workloadAssertion(t, ecKey(t), "https://evil.example", a.srv.URL))
	if !flows.IsCode(err, "invalid_grant") || !strings.Contains(err.Error(), "JWT bearer grant") || !strings.Contains(err.Error(), "untrusted issuer") {
		t.Errorf("err %v", err)
	}
	if _, err := flows.JWTBearer(context.Background(), cfg, "not-a-jwt"); err == nil || !strings.Contains(err.Error(), "not a JWT") {
		t.Errorf("non-JWT assertion: %v", err)
	}
}

// fakeIdP is an enterprise IdP's token endpoint doing the ID-JAG exchange.
type fakeIdP struct {
	url  string
	key  *ecdsa.PrivateKey
	mu   sync.Mutex
	form url.Values
	fail string // answer with this error
	typ  string // override issued_token_type
}

func newFakeIdP(t *testing.T) *fakeIdP {
	srv, mux := newServer(t)
	p := &fakeIdP{url: srv.URL, key: ecKey(t)}
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		_ = r.ParseForm()
		p.form = r.PostForm
		u, s, _ := r.BasicAuth()
		f := r.PostForm
		switch {
		case u != "idp-client" || s != "idp-secret":
			oauthErr(w, 401, "invalid_client", "bad IdP client")
		case p.fail != "":
			oauthErr(w, 400, p.fail, "the ID token expired")
		case f.Get("grant_type") != oauthwire.GrantTypeTokenExchange || f.Get("subject_token") != "id-token-of-alice" ||
			f.Get("subject_token_type") != oauthwire.TokenTypeIDToken || f.Get("requested_token_type") != oauthwire.TokenTypeIDJAG:
			oauthErr(w, 400, "invalid_request", "bad exchange")
		default:
			jag, _ := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
				"iss": p.url, "sub": "alice", "aud": f.Get("audience"), "resource": f.Get("resource"),
				"client_id": "robot", "scope": f.Get("scope"), "jti": "jag1",
				"iat": t0.Unix(), "exp": t0.Add(5 * time.Minute).Unix(),
			}).SignedString(p.key)
			writeJSON(w, 200, map[string]any{"access_token": jag, "issued_token_type": firstOf(p.typ, oauthwire.TokenTypeIDJAG),
				"token_type": "N_A", "expires_in": 300})
		}
	})
	return p
}

func enterpriseCfg(t *testing.T, a *machineAS, p *fakeIdP) flows.EnterpriseConfig {
	a.with(func() { a.trusted[p.url] = p.key.Public() })
	return flows.EnterpriseConfig{
		IdP: flows.TokenExchangeConfig{TokenEndpoint: p.url + "/token", SubjectToken: "id-token-of-alice",
			Client: flows.Client{ID: "idp-client", Secret: "idp-secret", AuthMethod: flows.AuthMethodBasic}},
		Grant: grantCfg(a, flows.Client{ID: a.clientID, AuthMethod: flows.AuthMethodNone}),
	}
}

// Enterprise-managed authorization: ID token -> ID-JAG at the IdP (audience
// the MCP server's issuer, resource the MCP server) -> access token at the
// server with the JWT bearer grant.
func TestEnterpriseIDJAG(t *testing.T) {
	a, p := newMachineAS(t), newFakeIdP(t)
	tok, err := flows.Enterprise(context.Background(), enterpriseCfg(t, a, p))
	if err != nil {
		_, _, fails := a.snapshot()
		t.Fatalf("%v (%v)", err, fails)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if tok.AccessToken == "" || p.form.Get("audience") != a.srv.URL || p.form.Get("resource") != a.srv.URL+"/mcp" || p.form.Get("scope") != "mcp" {
		t.Errorf("token %+v, IdP form %v", tok, p.form)
	}
	forms, _, _ := a.snapshot()
	if forms[0].Get("grant_type") != oauthwire.GrantTypeJWTBearer {
		t.Errorf("AS form %v", forms[0])
	}
}

func TestEnterpriseErrors(t *testing.T) {
	a, p := newMachineAS(t), newFakeIdP(t)
	p.set("invalid_grant", "")
	_, err := flows.Enterprise(context.Background(), enterpriseCfg(t, a, p))
	for _, want := range []string{"step 1", "token exchange", "invalid_grant", "the ID token expired"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v lacks %q", err, want)
		}
	}
	p.set("", oauthwire.TokenTypeAccessToken)
	_, err = flows.Enterprise(context.Background(), enterpriseCfg(t, a, p))
	if err == nil || !strings.Contains(err.Error(), "issued_token_type") {
		t.Errorf("wrong issued type: %v", err)
	}
	// The server does not trust this IdP: step 2 fails with its words.
	p.set("", "")
	cfg := enterpriseCfg(t, a, p)
	a.with(func() { delete(a.trusted, p.url) })
	_, err = flows.Enterprise(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "step 2") || !strings.Contains(err.Error(), "untrusted issuer") {
		t.Errorf("untrusted IdP: %v", err)
	}
}

func (p *fakeIdP) set(fail, typ string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail, p.typ = fail, typ
}
