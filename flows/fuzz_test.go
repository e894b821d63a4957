package flows

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Fuzz targets for what the client reads from servers it does not control.

// FuzzWWWAuthenticate: the challenge parser never panics, yields bounded
// output, and round-trips simple challenges.
func FuzzWWWAuthenticate(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://a/.well-known/oauth-protected-resource", scope="mcp"`,
		`Basic realm="x", Bearer error="invalid_token", error_description="a \"quoted\" \\ thing"`,
		`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`,
		`Bearer abc123==, Bearer x="unterminated`, `,,,`, `Bearer`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		cs := ParseWWWAuthenticate(v)
		if len(cs) > len(v)+1 {
			t.Fatalf("%d challenges from %d bytes", len(cs), len(v))
		}
		for _, c := range cs {
			if c.Scheme == "" {
				t.Fatalf("challenge without scheme from %q", v)
			}
			// Re-serialise with every value quoted: must parse back the same.
			var b strings.Builder
			b.WriteString(c.Scheme)
			first := true
			for k, val := range c.Params {
				if !isToken(k) {
					continue
				}
				if first {
					b.WriteString(" ")
				} else {
					b.WriteString(", ")
				}
				first = false
				b.WriteString(k + `="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(val) + `"`)
			}
			if !isToken(c.Scheme) || c.Token68 != "" {
				continue
			}
			back := ParseWWWAuthenticate(b.String())
			if len(back) != 1 {
				t.Fatalf("re-serialised %q parsed into %d challenges", b.String(), len(back))
			}
		}
	})
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 126 || r <= 32 || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// FuzzTokenResponse: any body, content type and status is parsed without a
// panic, and a token comes back only from a 2xx with an access token.
func FuzzTokenResponse(f *testing.F) {
	f.Add(200, "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":86400}`)
	f.Add(200, "application/x-www-form-urlencoded", `access_token=a&token_type=bearer&expires_in=60`)
	f.Add(400, "application/json", `{"error":"invalid_grant"}`)
	f.Add(200, "application/json", `{"error":"slow_down"}`)
	f.Add(200, "text/html", `<html>`)
	f.Add(200, "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":"1e999"}`)
	f.Fuzz(func(t *testing.T, status int, ctype, body string) {
		if status < 100 || status > 999 {
			return
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {ctype}}}
		tok, err := parseToken(resp, []byte(body), time.Unix(1e9, 0))
		if err == nil {
			if status < 200 || status > 299 || tok.AccessToken == "" {
				t.Fatalf("token %+v from status %d", tok, status)
			}
		}
		_ = ParseOAuthError(resp, []byte(body))
	})
}

// FuzzLoopbackCallback: the callback's query never yields a code unless
// the state matches exactly (and iss, when present, too).
func FuzzLoopbackCallback(f *testing.F) {
	f.Add("code=abc&state=s3cr3t&iss=https%3A%2F%2Fas")
	f.Add("error=access_denied&state=s3cr3t")
	f.Add("code=abc&state=s3cr3t&state=other")
	f.Add("code=abc&state=S3CR3T")
	f.Add("code=abc&state=s3cr3t&iss=https%3A%2F%2Fevil")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		check := CallbackCheck{State: "s3cr3t", Issuer: "https://as"}
		code, err := CheckCallback(q, check)
		if err == nil {
			if q.Get("state") != "s3cr3t" || code == "" || code != q.Get("code") {
				t.Fatalf("accepted %q", raw)
			}
			if iss, ok := q["iss"]; ok && (len(iss) != 1 || iss[0] != "https://as") {
				t.Fatalf("accepted a foreign iss in %q", raw)
			}
		}
	})
}

// FuzzDiscoveryDocuments serves fuzzed metadata and checks Discover never
// panics and never accepts a document it should distrust.
func FuzzDiscoveryDocuments(f *testing.F) {
	f.Add(`{"resource":"RES","authorization_servers":["BASE"]}`, `{"issuer":"BASE","authorization_endpoint":"BASE/a","token_endpoint":"BASE/t","code_challenge_methods_supported":["S256"]}`)
	f.Add(`{"resource":"http://evil/mcp","authorization_servers":["BASE"]}`, `{}`)
	f.Add(`{"resource":"RES","authorization_servers":["BASE"]}`, `{"issuer":"BASE/","authorization_endpoint":"http://evil.example/a","token_endpoint":"BASE/t","code_challenge_methods_supported":["plain"]}`)
	f.Add(`[]`, `null`)
	f.Fuzz(func(t *testing.T, prm, asm string) {
		var srv *httptest.Server
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fill := strings.NewReplacer("RES", srv.URL+"/mcp", "BASE", srv.URL)
			w.Header().Set("Content-Type", "application/json")
			switch r.URL.Path {
			case "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp":
				_, _ = w.Write([]byte(fill.Replace(prm)))
			case "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration":
				_, _ = w.Write([]byte(fill.Replace(asm)))
			default:
				w.WriteHeader(http.StatusUnauthorized)
			}
		}))
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		d, err := Discover(ctx, DiscoverConfig{}, srv.URL+"/mcp")
		if err != nil {
			return
		}
		if d.Issuer != srv.URL {
			t.Fatalf("accepted issuer %q from %s", d.Issuer, srv.URL)
		}
		as := d.AuthServer
		for _, ep := range []string{as.AuthorizationEndpoint, as.TokenEndpoint, as.RegistrationEndpoint, as.DeviceAuthorizationEndpoint} {
			if ep != "" && !strings.HasPrefix(ep, "https://") && !strings.HasPrefix(ep, "http://127.") && !strings.HasPrefix(ep, "http://localhost") && !strings.HasPrefix(ep, "http://[::1]") {
				t.Fatalf("accepted insecure endpoint %q", ep)
			}
		}
		ok := false
		for _, m := range as.CodeChallengeMethodsSupported {
			ok = ok || m == "S256"
		}
		if !ok {
			t.Fatal("accepted metadata without S256")
		}
	})
}
