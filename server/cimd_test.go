package server_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// docHost serves client metadata documents over TLS on loopback. Each path
// has a response; hits and conns count what reached it.
type docHost struct {
	*httptest.Server
	mu          sync.Mutex
	docs        map[string]docResponse
	hits, conns atomic.Int64
	// hold, when set before the first request, runs before each answer
	// (a slow document host).
	hold func()
}

type docResponse struct {
	status      int
	contentType string
	header      http.Header
	body        string
}

func newDocHost(t *testing.T) *docHost {
	t.Helper()
	d := &docHost{docs: map[string]docResponse{}}
	d.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.hits.Add(1)
		if d.hold != nil {
			d.hold()
		}
		d.mu.Lock()
		resp, ok := d.docs[r.URL.Path]
		d.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		for k, v := range resp.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", resp.contentType)
		w.WriteHeader(resp.status)
		fmt.Fprint(w, resp.body)
	}))
	d.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			d.conns.Add(1)
		}
	}
	d.StartTLS()
	t.Cleanup(d.Close)
	return d
}

// serve publishes doc (marshalled as JSON) at path and returns its URL.
func (d *docHost) serve(path string, doc map[string]any, header http.Header) string {
	b, _ := json.Marshal(doc)
	return d.serveRaw(path, docResponse{status: http.StatusOK, contentType: "application/json", header: header, body: string(b)})
}

func (d *docHost) serveRaw(path string, r docResponse) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.docs[path] = r
	return d.URL + path
}

func (d *docHost) roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(d.Certificate())
	return p
}

// clientDoc is a valid document for the client_id u.
func clientDoc(u string) map[string]any {
	return map[string]any{
		"client_id":     u,
		"client_name":   "Totally Official Client",
		"redirect_uris": []string{"http://127.0.0.1/callback"},
		"grant_types":   []string{"authorization_code", "urn:ietf:params:oauth:grant-type:device_code"},
	}
}

// cimdEnv is a server that may fetch from the loopback document host; the
// rest of opts.MetadataDocuments is kept.
func cimdEnv(t *testing.T, host *docHost, opts servertest.Options) *servertest.Env {
	t.Helper()
	opts.MetadataDocuments.AllowPrivateAddresses = true
	opts.MetadataDocuments.RootCAs = host.roots()
	return servertest.New(t, opts)
}

// The authorization code flow with a metadata document URL as client_id,
// through the real handlers over HTTP: consent names the document's host
// and marks the name as self-declared, the loopback redirect URI matches
// on any port, the code is bound to the URL, the token works, and the
// document is fetched once per cache lifetime on the server's clock.
func TestCIMDAuthorizationCodeFlow(t *testing.T) {
	t.Parallel()
	host := newDocHost(t)
	docURL := host.URL + "/oauth/client.json"
	host.serve("/oauth/client.json", clientDoc(docURL), http.Header{"Cache-Control": {"max-age=120"}})
	env := cimdEnv(t, host, servertest.Options{})

	resp, body := do(t, http.MethodGet, env.URL+"/.well-known/oauth-authorization-server", "", "", nil)
	var meta map[string]any
	mustJSON(t, body, &meta)
	if resp.StatusCode != http.StatusOK || meta["client_id_metadata_document_supported"] != true {
		t.Fatalf("AS metadata lacks client_id_metadata_document_supported: true: %s", body)
	}

	c := &testClient{t: t, env: env, ID: docURL, RedirectURI: "http://127.0.0.1:4567/callback"}
	b := env.Browser("casey")
	u, _ := c.authURL(nil)
	page, err := b.Get(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	text := html.UnescapeString(string(page.Body))
	hostPort := strings.TrimPrefix(host.URL, "https://")
	if page.Status != http.StatusOK || !strings.Contains(text, `id="client-host">`+hostPort+`<`) ||
		!strings.Contains(text, "Totally Official Client") || !strings.Contains(text, "self-declared") {
		t.Fatalf("consent page (status %d) does not show host %s as identity and the name as self-declared:\n%s", page.Status, hostPort, text)
	}
	if strings.Contains(text, "<h1>Authorize Totally Official Client") {
		t.Fatal("consent page headline trusts the self-declared name")
	}

	tok := c.token(b)
	if id := userID(t, env, tok); id == "" {
		t.Fatal("no user")
	}
	// A code issued to the URL is not redeemed by another client id.
	code, verifier := c.code(b)
	other := register(t, env)
	resp, body = postForm(t, env.URL+"/oauth/token", url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.RedirectURI},
		"client_id": {other.ID}, "code_verifier": {verifier},
	})
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")

	if n := host.hits.Load(); n != 1 {
		t.Fatalf("document fetched %d times within its max-age, want once", n)
	}
	env.Clock.Advance(119 * time.Second)
	c.token(b)
	if n := host.hits.Load(); n != 1 {
		t.Fatalf("document fetched again %d times before max-age ran out", n-1)
	}
	env.Clock.Advance(2 * time.Second)
	c.token(b)
	if n := host.hits.Load(); n != 2 {
		t.Fatalf("document fetched %d times in all, want a second fetch after max-age", n)
	}
}

// The device flow accepts a metadata document client whose document lists
// the device grant.
func TestCIMDDeviceFlow(t *testing.T) {
	t.Parallel()
	host := newDocHost(t)
	docURL := host.serve("/client.json", clientDoc(host.URL+"/client.json"), nil)
	env := cimdEnv(t, host, servertest.Options{})
	d := requestDeviceCode(t, env, docURL)
	resp, body := pollDevice(t, env, docURL, d.DeviceCode)
	oauthErr(t, resp, body, http.StatusBadRequest, "authorization_pending")
	// The confirmation names the document's host; the name is self-declared.
	b := env.Browser("dana")
	page, err := b.Get(context.Background(), env.URL+"/auth/device")
	if err == nil {
		page, err = b.Submit(context.Background(), page, "lookup", url.Values{"user_code": {d.UserCode}})
	}
	if err != nil {
		t.Fatal(err)
	}
	hostPort := strings.TrimPrefix(host.URL, "https://")
	text := html.UnescapeString(string(page.Body))
	iHost, iName := strings.Index(text, `id="client-host">`+hostPort+`<`), strings.Index(text, "Totally Official Client")
	if iHost < 0 || iName < iHost || !strings.Contains(text, "self-declared") || strings.Contains(text, "<h1>Connect Totally Official Client") {
		t.Fatalf("device confirmation does not name the host first and the name as self-declared:\n%s", text)
	}
	if p, err := b.Submit(context.Background(), page, "approve", nil); err != nil || p.Status != http.StatusOK {
		t.Fatalf("approve: %v", err)
	}
	env.Clock.Advance(10 * time.Second)
	resp, body = pollDeviceForm(t, env, docURL, d.DeviceCode)
	userID(t, env, mustToken(t, resp, body).AccessToken)

	// A document without the device grant is not a device client.
	noDevice := clientDoc(host.URL + "/code-only.json")
	delete(noDevice, "grant_types")
	u := host.serve("/code-only.json", noDevice, nil)
	resp, body = postJSON(t, env.URL+"/api/oauth/device/code", map[string]string{"client_id": u})
	oauthErr(t, resp, body, http.StatusBadRequest, "unauthorized_client")
}

// A document that cannot be fetched or is invalid gets the authorization
// error page (HTML 400, no redirect) saying why; the token and device
// endpoints answer invalid_client.
func TestCIMDRefusedDocuments(t *testing.T) {
	t.Parallel()
	host := newDocHost(t)
	env := cimdEnv(t, host, servertest.Options{})
	doc := func(path string, edit func(map[string]any)) string {
		d := clientDoc(host.URL + path)
		edit(d)
		return host.serve(path, d, nil)
	}
	raw := func(path string, r docResponse) string { return host.serveRaw(path, r) }
	for _, tt := range []struct {
		name, clientID, redirectURI, reason string
	}{
		{"wrong client_id", doc("/wrong-id", func(d map[string]any) { d["client_id"] = host.URL + "/other" }), "", "is not the URL it was fetched from"},
		{"missing redirect_uris", doc("/no-redirects", func(d map[string]any) { delete(d, "redirect_uris") }), "", "redirect_uris is missing"},
		{"foreign redirect_uri", doc("/valid", func(map[string]any) {}), "http://127.0.0.1:4567/elsewhere", "not one it registered"},
		{"secret auth method", doc("/secret", func(d map[string]any) { d["token_endpoint_auth_method"] = "client_secret_basic" }), "", "only none"},
		{"not found", host.URL + "/nowhere", "", "HTTP 404"},
		{"redirect", raw("/moved", docResponse{status: http.StatusFound, header: http.Header{"Location": {"/valid"}}}), "", "redirects are not followed"},
		{"not JSON", raw("/html", docResponse{status: 200, contentType: "text/html", body: "<p>hi</p>"}), "", "not application/json"},
		{"malformed JSON", raw("/broken", docResponse{status: 200, contentType: "application/json", body: "{"}), "", "not a JSON object"},
		{"oversize", raw("/big", docResponse{status: 200, contentType: "application/json", body: `{"x":"` + strings.Repeat("a", 64<<10) + `"}`}), "", "larger than 64 KiB"},
		{"no path", host.URL, "", "must have a path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &testClient{t: t, env: env, ID: tt.clientID, RedirectURI: "http://127.0.0.1:4567/callback"}
			if tt.redirectURI != "" {
				c.RedirectURI = tt.redirectURI
			}
			u, verifier := c.authURL(nil)
			resp, body := do(t, http.MethodGet, u, "", "", nil)
			htmlPage(t, resp, body, http.StatusBadRequest)
			if text := html.UnescapeString(string(body)); !strings.Contains(text, tt.reason) {
				t.Fatalf("error page does not say %q:\n%s", tt.reason, text)
			}
			if tt.redirectURI != "" {
				return // a valid document: the endpoints below accept it
			}
			resp, body = postForm(t, env.URL+"/oauth/token", url.Values{
				"grant_type": {"authorization_code"}, "code": {"x"}, "redirect_uri": {c.RedirectURI},
				"client_id": {tt.clientID}, "code_verifier": {verifier},
			})
			oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_client")
			resp, body = postJSON(t, env.URL+"/api/oauth/device/code", map[string]string{"client_id": tt.clientID})
			oauthErr(t, resp, body, http.StatusUnauthorized, "invalid_client")
		})
	}
}

// Without --cimd-allow-private a document on loopback is never fetched: the
// page says why and the host sees no connection.
func TestCIMDGuardRefusesLoopback(t *testing.T) {
	t.Parallel()
	host := newDocHost(t)
	docURL := host.serve("/client.json", clientDoc(host.URL+"/client.json"), nil)
	env := servertest.New(t, servertest.Options{MetadataDocuments: server.MetadataDocumentConfig{RootCAs: host.roots()}})
	c := &testClient{t: t, env: env, ID: docURL, RedirectURI: "http://127.0.0.1:4567/callback"}
	u, _ := c.authURL(nil)
	resp, body := do(t, http.MethodGet, u, "", "", nil)
	htmlPage(t, resp, body, http.StatusBadRequest)
	if !strings.Contains(string(body), "private or reserved address") {
		t.Fatalf("error page does not name the guard:\n%s", body)
	}
	if n := host.conns.Load(); n != 0 {
		t.Fatalf("the server connected %d times to a loopback document host", n)
	}
}

// The cache lives in the store: a second instance on the same store uses
// the document the first fetched.
func TestCIMDCacheSharedByInstances(t *testing.T) {
	t.Parallel()
	host := newDocHost(t)
	docURL := host.serve("/client.json", clientDoc(host.URL+"/client.json"), nil)
	st := memory.New()
	envs := []*servertest.Env{cimdEnv(t, host, servertest.Options{Store: st}), cimdEnv(t, host, servertest.Options{Store: st})}
	for _, env := range envs {
		c := &testClient{t: t, env: env, ID: docURL, RedirectURI: "http://127.0.0.1:4567/callback"}
		u, _ := c.authURL(nil)
		resp, body := do(t, http.MethodGet, u, "", "", nil)
		// Not signed in: the valid request is sent to sign in, not refused.
		if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("authorize: status %d: %.300s", resp.StatusCode, body)
		}
	}
	if n := host.hits.Load(); n != 1 {
		t.Fatalf("two instances on one store fetched the document %d times, want once", n)
	}
}
