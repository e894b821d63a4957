package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// testClient plays an MCP client against the server with raw HTTP.
type testClient struct {
	t           *testing.T
	env         *servertest.Env
	ID          string
	RedirectURI string
}

const testRedirect = "http://127.0.0.1:9999/callback"

func newEnv(t *testing.T) *servertest.Env {
	t.Helper()
	return servertest.New(t, servertest.Options{})
}

// register registers a client for both grants.
func register(t *testing.T, env *servertest.Env) *testClient {
	t.Helper()
	resp, body := postJSON(t, env.URL+"/oauth/register", map[string]any{
		"client_name":   "Test Client",
		"redirect_uris": []string{testRedirect},
		"grant_types":   []string{"authorization_code", "urn:ietf:params:oauth:grant-type:device_code"},
	})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: status %d: %s", resp.StatusCode, body)
	}
	var out struct {
		ClientID string `json:"client_id"`
	}
	mustJSON(t, body, &out)
	return &testClient{t: t, env: env, ID: out.ClientID, RedirectURI: testRedirect}
}

// authURL builds an authorization request with a fresh verifier.
func (c *testClient) authURL(extra url.Values) (string, string) {
	v, err := pkce.NewVerifier()
	if err != nil {
		c.t.Fatal(err)
	}
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {c.ID},
		"redirect_uri":          {c.RedirectURI},
		"scope":                 {"mcp"},
		"state":                 {"st-123"},
		"code_challenge":        {pkce.S256(v)},
		"code_challenge_method": {"S256"},
	}
	for k, vs := range extra {
		if len(vs) == 0 {
			q.Del(k)
		} else {
			q[k] = vs
		}
	}
	return c.env.URL + "/oauth/authorize?" + q.Encode(), v
}

// code runs the consent as user and returns a fresh code and its verifier.
func (c *testClient) code(b *servertest.Browser) (string, string) {
	c.t.Helper()
	u, v := c.authURL(nil)
	back, err := b.Consent(context.Background(), u, "approve")
	if err != nil {
		c.t.Fatalf("consent: %v", err)
	}
	q := back.Query()
	if q.Get("code") == "" || q.Get("state") != "st-123" || q.Get("iss") != c.env.URL {
		c.t.Fatalf("consent redirect %s lacks code, state or iss", back)
	}
	return q.Get("code"), v
}

func (c *testClient) exchange(code, verifier string) (*http.Response, []byte) {
	return postForm(c.t, c.env.URL+"/oauth/token", url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {c.RedirectURI},
		"client_id":     {c.ID},
		"code_verifier": {verifier},
	})
}

// token runs the whole authorization code flow for user and returns a JWT.
func (c *testClient) token(b *servertest.Browser) string {
	c.t.Helper()
	code, v := c.code(b)
	resp, body := c.exchange(code, v)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("exchange: status %d: %s", resp.StatusCode, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	mustJSON(c.t, body, &tok)
	return tok.AccessToken
}

func postJSON(t *testing.T, u string, v any) (*http.Response, []byte) {
	t.Helper()
	b, _ := json.Marshal(v)
	return do(t, http.MethodPost, u, "application/json", string(b), nil)
}

func postForm(t *testing.T, u string, v url.Values) (*http.Response, []byte) {
	t.Helper()
	return do(t, http.MethodPost, u, "application/x-www-form-urlencoded", v.Encode(), nil)
}

func do(t *testing.T, method, u, contentType, body string, hdr http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

func ping(t *testing.T, env *servertest.Env, credential string) (*http.Response, []byte) {
	t.Helper()
	h := http.Header{}
	if credential != "" {
		h.Set("Authorization", "Bearer "+credential)
	}
	return do(t, http.MethodGet, env.URL+"/api/ping", "", "", h)
}

func mustJSON(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
}

// oauthErr asserts an RFC 6749 error response with status and code.
func oauthErr(t *testing.T, resp *http.Response, body []byte, status int, code string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %s", body)
	}
	if e.Error != code {
		t.Fatalf("error %q, want %q: %s", e.Error, code, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q, want application/json", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control %q, want no-store", cc)
	}
}
