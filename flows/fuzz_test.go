package flows

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fuzz targets for what the client reads from servers (and browsers) it does
// not control. Seeds live in f.Add and in testdata/fuzz/<FuzzName>/.

// FuzzTokenResponse: any body, content type and status is parsed without a
// panic; a token comes back only from a 2xx with an access token, and its
// expiry never lies in the past (nor a device authorization's).
func FuzzTokenResponse(f *testing.F) {
	f.Add(200, "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":86400}`)
	f.Add(200, "application/x-www-form-urlencoded", `access_token=a&token_type=bearer&expires_in=60`)
	f.Add(400, "application/json", `{"error":"invalid_grant"}`)
	f.Add(200, "application/json", `{"error":"slow_down"}`)
	f.Add(200, "text/html", `<html>`)
	f.Add(200, "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":"1e999"}`)
	f.Add(200, "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":1e18}`)
	f.Add(200, "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":"9223372036854775807"}`)
	f.Add(200, "application/json", `{"access_token":"","token_type":"Bearer"}`)
	f.Add(200, "application/json", `{"access_token":7,"token_type":"Bearer"}`)
	f.Add(201, "text/plain", `access_token=a&token_type=x&access_token=b`)
	f.Add(302, "application/json", `{"access_token":"a","token_type":"Bearer"}`)
	f.Add(500, "", `error=server_error&error_description=%ff`)
	f.Add(200, "application/json", `{"device_code":"d","user_code":"u","verification_uri":"https://v","expires_in":9223372036854775807,"interval":1e18}`)
	f.Add(200, "application/json", `{"device_code":"d","user_code":"u","verification_url":"https://v","expires_in":"-5"}`)
	now := time.Unix(1e9, 0)
	f.Fuzz(func(t *testing.T, status int, ctype, body string) {
		if status < 100 || status > 999 {
			return
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {ctype}}}
		tok, err := parseToken(resp, []byte(body), now)
		if err == nil {
			if !isSuccess(status) || tok.AccessToken == "" || tok.TokenType == "" {
				t.Fatalf("token %+v from status %d", tok, status)
			}
			if tok.ExpiresIn > 0 && !tok.Expiry.After(now) {
				t.Fatalf("expires_in %d gave expiry %s, before receipt", tok.ExpiresIn, tok.Expiry)
			}
		}
		if e := ParseOAuthError(resp, []byte(body)); e != nil && e.Code == "" {
			t.Fatalf("an OAuth error without a code from %q", body)
		}
		if da, err := parseDeviceAuthorization([]byte(body), now); err == nil && !da.Expiry.After(now) {
			t.Fatalf("device authorization expiry %s from %q, before receipt", da.Expiry, body)
		}
		if !isSuccess(status) {
			if e := responseError(resp, []byte(body)); e == nil || e.StatusCode != status {
				t.Fatalf("status %d: error %+v", status, e)
			}
		}
	})
}

// FuzzLoopbackCallback: a code comes out only when the state (and iss, if
// present) match exactly, both from checkCallback and from the listener a
// browser talks to; the listener's page never echoes markup from the query.
func FuzzLoopbackCallback(f *testing.F) {
	f.Add("code=abc&state=s3cr3t&iss=https%3A%2F%2Fas")
	f.Add("code=abc&state=s3cr3t")
	f.Add("error=access_denied&state=s3cr3t&error_description=%3Cscript%3Ealert(1)%3C/script%3E")
	f.Add("error=%3Cimg%20src=x%20onerror=alert(1)%3E&state=s3cr3t")
	f.Add("code=abc&state=s3cr3t&state=other")
	f.Add("code=abc&state=other&state=s3cr3t")
	f.Add("code=abc&state=S3CR3T")
	f.Add("code=abc&state=s3cr3t%00")
	f.Add("code=abc&state=s3cr3t&iss=https%3A%2F%2Fevil")
	f.Add("code=abc&state=s3cr3t&iss=https%3A%2F%2Fas&iss=https%3A%2F%2Fas")
	f.Add("code=&state=s3cr3t")
	f.Add("code=a;state=s3cr3t")
	f.Add("%zz&code=abc&state=s3cr3t")
	l, err := listenLoopback(0)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { l.Close() })
	check := callbackWant{State: "s3cr3t", Issuer: "https://as"}
	f.Fuzz(func(t *testing.T, raw string) {
		q, _ := url.ParseQuery(raw) // what parses of a malformed query still counts, as in net/http
		accepts := func(code string) bool {
			iss, hasIss := q["iss"]
			return q.Get("state") == "s3cr3t" && code != "" && code == q.Get("code") &&
				(!hasIss || len(iss) == 1 && iss[0] == "https://as")
		}
		if code, err := checkCallback(q, check); err == nil && !accepts(code) {
			t.Fatalf("checkCallback accepted %q", raw)
		}

		// The listener's handler, called directly: the fuzzed query may be
		// one no HTTP client would send. Wait runs beside it.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		type result struct {
			code string
			err  error
		}
		res := make(chan result, 1)
		go func() {
			code, err := l.Wait(ctx, check)
			res <- result{code, err}
		}()
		req := (&http.Request{Method: http.MethodGet, URL: &url.URL{Path: callbackPath, RawQuery: raw}, Header: http.Header{}}).WithContext(ctx)
		rec := httptest.NewRecorder()
		l.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			cancel() // a state mismatch leaves Wait waiting
		}
		r := <-res
		switch {
		case r.err == nil && rec.Code != http.StatusOK:
			t.Fatalf("Wait returned code %q but the page said %d", r.code, rec.Code)
		case r.err == nil && !accepts(r.code):
			t.Fatalf("the listener accepted %q (code %q)", raw, r.code)
		case r.err != nil && rec.Code == http.StatusOK:
			t.Fatalf("page 200 but Wait failed: %v", r.err)
		case r.err != nil && errors.Is(r.err, context.DeadlineExceeded):
			t.Fatalf("the listener never answered %q", raw)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Fatalf("page Content-Type %q", ct)
		}
		// Markup the page template itself never contains must not come
		// through from the query.
		for _, vs := range q {
			for _, v := range vs {
				lv := strings.ToLower(v)
				if (strings.Contains(lv, "<script") || strings.Contains(lv, "<img")) && strings.Contains(rec.Body.String(), v) {
					t.Fatalf("the page echoes %q unescaped", v)
				}
			}
		}
	})
}

// discoveryServer serves fuzzed documents, swapped per input.
type discoveryServer struct {
	mu             sync.Mutex
	prm, asm, www  string
	srv            *httptest.Server
	fill           *strings.Replacer
	base, mcp, res string
}

func (d *discoveryServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	prm, asm, www := d.prm, d.asm, d.www
	d.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp":
		_, _ = w.Write([]byte(prm))
	case "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration":
		_, _ = w.Write([]byte(asm))
	case "/mcp":
		if www != "" {
			w.Header().Set("WWW-Authenticate", www)
		}
		w.WriteHeader(http.StatusUnauthorized)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// secureEndpoint is the client's rule, written apart from oauthwire.CheckSecure: https,
// or http on a loopback IP or localhost.
func secureEndpoint(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		ip := net.ParseIP(h)
		return strings.EqualFold(h, "localhost") || ip != nil && ip.IsLoopback()
	}
	return false
}

// FuzzDiscoveryDocuments serves fuzzed protected resource metadata,
// authorization server metadata and challenge, and checks Discover never
// panics and never trusts what it should not: a foreign resource or issuer,
// an insecure endpoint, no S256. BASE and RES in the inputs stand for the
// server's own origin and MCP URL, so the fuzzer can reach valid documents.
func FuzzDiscoveryDocuments(f *testing.F) {
	d := &discoveryServer{}
	d.srv = httptest.NewServer(d)
	f.Cleanup(d.srv.Close)
	d.base, d.mcp = d.srv.URL, d.srv.URL+"/mcp"
	d.fill = strings.NewReplacer("RES", d.mcp, "BASE", d.base)
	goodAS := `{"issuer":"BASE","authorization_endpoint":"BASE/a","token_endpoint":"BASE/t","code_challenge_methods_supported":["S256"]}`
	f.Add(`{"resource":"RES","authorization_servers":["BASE"]}`, goodAS, `Bearer resource_metadata="BASE/.well-known/oauth-protected-resource/mcp"`)
	f.Add(`{"resource":"RES","authorization_servers":["BASE"],"scopes_supported":["mcp"]}`, goodAS, ``)
	f.Add(`{"resource":"http://evil/mcp","authorization_servers":["BASE"]}`, goodAS, `Bearer resource_metadata="http://evil.example/prm"`)
	f.Add(`{"resource":"RES","authorization_servers":["BASE"]}`, `{"issuer":"BASE/","authorization_endpoint":"http://evil.example/a","token_endpoint":"BASE/t","code_challenge_methods_supported":["plain"]}`, ``)
	f.Add(`{"resource":"RES","authorization_servers":["BASE"]}`, `{"issuer":"BASE","authorization_endpoint":"http://localhost.evil.example/a","token_endpoint":"BASE/t","code_challenge_methods_supported":["S256"]}`, ``)
	f.Add(`{"resource":"RES","authorization_servers":["http://evil.example"]}`, goodAS, ``)
	f.Add(`{"resource":"RES","authorization_servers":["BASE"]}`, `{"issuer":"https://evil.example","token_endpoint":"BASE/t","code_challenge_methods_supported":["S256"]}`, ``)
	f.Add(`not json`, goodAS, `Bearer scope="mcp"`)
	f.Add(`[]`, `null`, `Bearer resource_metadata=BASE`)
	f.Fuzz(func(t *testing.T, prm, asm, www string) {
		d.mu.Lock()
		d.prm, d.asm, d.www = d.fill.Replace(prm), d.fill.Replace(asm), d.fill.Replace(www)
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		got, err := Discover(ctx, DiscoverConfig{}, d.mcp)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("discovery hung: %v", err)
			}
			return
		}
		if !sameURL(got.Issuer, d.base) {
			t.Fatalf("accepted issuer %q from %s", got.Issuer, d.base)
		}
		if !sameURL(got.Resource, d.mcp) {
			t.Fatalf("accepted resource %q for %s", got.Resource, d.mcp)
		}
		as := got.AuthServer
		if as == nil || as.TokenEndpoint == "" {
			t.Fatalf("accepted metadata without a token endpoint: %+v", as)
		}
		for name, ep := range as.endpoints() {
			if ep != "" && !secureEndpoint(ep) {
				t.Fatalf("accepted insecure %s %q", name, ep)
			}
		}
		hasS256 := false
		for _, m := range as.CodeChallengeMethodsSupported {
			hasS256 = hasS256 || m == "S256"
		}
		if !hasS256 {
			t.Fatal("accepted metadata without S256")
		}
	})
}
