package flows_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/internal/probe"
)

func TestOriginSpellings(t *testing.T) {
	same := [][]string{
		{"https://example.com", "https://EXAMPLE.com:443/x?y#z", "HTTPS://example.com./", "https://user:pw@example.com", "https://example.com:0443"},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080", "http://u@127.0.0.1:8080/other"},
		{"http://[::1]/", "http://[0:0:0:0:0:0:0:1]:80", "http://[::1]:80/mcp"},
		{"https://[2001:DB8::1]:8443", "https://[2001:db8:0::1]:8443/a"},
	}
	for _, group := range same {
		for _, a := range group {
			for _, b := range group {
				if !flows.SameOrigin(a, b) {
					t.Errorf("SameOrigin(%q, %q) = false", a, b)
				}
			}
		}
	}
	differ := [][2]string{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8081"},
		{"http://example.com", "https://example.com"},
		{"https://example.com", "https://example.com:8443"},
		{"http://127.0.0.1:8080", "http://localhost:8080"},
		{"https://example.com", "https://example.com.evil.test"},
		{"https://example.com", "https://evil.test/@example.com"},
		{"https://example.com@evil.test", "https://example.com"},
		{"http://[::1]:8080", "http://127.0.0.1:8080"},
		{"http://[fe80::1%25eth0]", "http://[fe80::1%25eth1]"},
	}
	for _, d := range differ {
		if flows.SameOrigin(d[0], d[1]) || flows.SameOrigin(d[1], d[0]) {
			t.Errorf("SameOrigin(%q, %q) = true", d[0], d[1])
		}
	}
	for _, bad := range []string{"", "ftp://example.com", "https://", "https://example.com:99999", "https://example.com:x", "https://example..", "/relative", "mailto:a@b",
		"http://[fe80::1%25%20]/", "http://[::%25%FF]/"} { // zones that name no interface (found by FuzzOrigin)
		if _, err := flows.OriginOf(bad); err == nil {
			t.Errorf("OriginOf(%q) succeeded", bad)
		}
		if flows.SameOrigin(bad, bad) {
			t.Errorf("SameOrigin(%q, itself) = true for an unusable URL", bad)
		}
	}
	o, _ := flows.OriginOf("https://User@Example.com:443/path")
	if o.String() != "https://example.com" {
		t.Errorf("String() = %q", o.String())
	}
	o, _ = flows.OriginOf("http://[0::1]:8080/")
	if o.String() != "http://[::1]:8080" || !o.Secure() {
		t.Errorf("String() = %q, Secure %v", o.String(), o.Secure())
	}
	if o, _ := flows.OriginOf("http://example.com"); o.Secure() {
		t.Error("plain http off loopback counted as secure")
	}
}

// FuzzOrigin holds the origin rule to properties over any URL spelling: an
// origin survives its own String, holds its own URL, is symmetric, and two
// URLs share one only if an independent reading (net/netip for addresses)
// finds the same scheme, host and port.
func FuzzOrigin(f *testing.F) {
	for _, s := range []string{"https://example.com", "HTTP://Example.COM.:80/x", "http://[::1]:8080/", "http://[0:0::1]",
		"https://u:p@h:443", "http://127.0.0.1:0080", "http://[fe80::1%25en0]:1/", "https://xn--nxasmq6b.example/", "http://1.2.3.4:65535"} {
		f.Add(s, "https://example.com:443")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		oa, errA := flows.OriginOf(a)
		ob, errB := flows.OriginOf(b)
		if flows.SameOrigin(a, b) != flows.SameOrigin(b, a) {
			t.Fatalf("not symmetric: %q %q", a, b)
		}
		if errA != nil {
			return
		}
		again, err := flows.OriginOf(oa.String())
		if err != nil || again != oa {
			t.Fatalf("%q: String %q reads back as %+v (%v)", a, oa.String(), again, err)
		}
		ua, _ := url.Parse(a)
		if !oa.Holds(ua) {
			t.Fatalf("%q does not hold its own URL", a)
		}
		if errB != nil || oa != ob {
			return
		}
		// Independently: same scheme, port and host.
		ub, _ := url.Parse(b)
		if !strings.EqualFold(ua.Scheme, ub.Scheme) || port(ua) != port(ub) || !sameHost(ua.Hostname(), ub.Hostname()) {
			t.Fatalf("%q and %q share origin %v, but differ", a, b, oa)
		}
	})
}

func port(u *url.URL) int {
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return n
	}
	if strings.EqualFold(u.Scheme, "https") {
		return 443
	}
	return 80
}

func sameHost(a, b string) bool {
	if pa, err := netip.ParseAddr(a); err == nil {
		pb, err := netip.ParseAddr(b)
		return err == nil && pa.Unmap() == pb.Unmap()
	}
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// recorder is an origin nobody should reach: it counts what arrives.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.reqs = append(r.reqs, req)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"stolen","token_type":"Bearer","status":"ok","user_id":"evil"}`))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// redirector answers every request with status to target+path.
func redirector(t *testing.T, status int, target string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path, status)
	}))
	t.Cleanup(s.Close)
	return s
}

// otherHost spells the recorder's origin with "localhost": another host
// name, where Go itself would drop a Bearer header but still follow.
func otherHost(r *recorder) string {
	return strings.Replace(r.URL, "127.0.0.1", "localhost", 1)
}

// Token, revocation and registration requests never follow a redirect to
// another origin (another port, another host name), and say so: the code
// and verifier, the refresh token, the client secret and the token being
// revoked stay where they belong, and nothing from the other origin is
// taken as an answer.
func TestTokenRequestsStayOnTheirOrigin(t *testing.T) {
	ctx := context.Background()
	client := flows.Client{ID: "c1", Secret: "s3cret", AuthMethod: flows.AuthMethodPost}
	basic := flows.Client{ID: "c1", Secret: "s3cret", AuthMethod: flows.AuthMethodBasic}
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, hostOf := range []func(*recorder) string{func(r *recorder) string { return r.URL }, otherHost} {
			other := newRecorder(t)
			as := redirector(t, status, hostOf(other))
			calls := map[string]func() error{
				"refresh": func() error {
					_, err := flows.Refresh(ctx, flows.RefreshConfig{TokenURL: as.URL + "/token", Client: client}, "refresh-secret")
					return err
				},
				"client credentials": func() error {
					_, err := flows.ClientCredentials(ctx, flows.GrantConfig{Client: basic, Discovery: &flows.Discovery{Resource: as.URL + "/mcp",
						AuthServer: &flows.AuthServerMetadata{Issuer: as.URL, TokenEndpoint: as.URL + "/token"}}})
					return err
				},
				"revoke": func() error {
					return flows.Revoke(ctx, nil, as.URL+"/revoke", client, "token-to-revoke", "refresh_token")
				},
				"register": func() error {
					_, err := flows.Register(ctx, nil, as.URL+"/register", flows.ClientMetadata{ClientName: "x", RedirectURIs: []string{"http://127.0.0.1:1/cb"}})
					return err
				},
				"code exchange": func() error {
					cfg := flows.AuthCodeConfig{Client: client, Discovery: &flows.Discovery{Resource: as.URL + "/mcp", Issuer: as.URL,
						AuthServer: &flows.AuthServerMetadata{Issuer: as.URL, AuthorizationEndpoint: as.URL + "/authorize", TokenEndpoint: as.URL + "/token",
							CodeChallengeMethodsSupported: []string{"S256"}}}}
					_, err := cfg.Exchange(ctx, &flows.AuthRequest{RedirectURI: "http://127.0.0.1:1/cb", Verifier: strings.Repeat("v", 43)}, "the-code")
					return err
				},
			}
			for name, call := range calls {
				err := call()
				var re *flows.RedirectError
				if !errors.As(err, &re) || !errors.Is(err, flows.ErrCrossOrigin) || re.Status != status || !strings.Contains(err.Error(), "another origin") {
					t.Errorf("%s, HTTP %d to %s: err = %v, want a RedirectError", name, status, hostOf(other), err)
				}
			}
			if n := other.count(); n != 0 {
				t.Errorf("HTTP %d to %s: the other origin received %d request(s)", status, hostOf(other), n)
			}
		}
	}
}

// A redirect within the origin is still followed.
func TestSameOriginRedirectFollowed(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/old/token", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/token", http.StatusPermanentRedirect)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.PostForm.Get("refresh_token") != "rt" {
			http.Error(w, "no body", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"at","token_type":"Bearer","expires_in":60}`))
	})
	s := httptest.NewServer(mux)
	defer s.Close()
	tok, err := flows.Refresh(context.Background(), flows.RefreshConfig{TokenURL: s.URL + "/old/token", Client: flows.Client{ID: "c"}}, "rt")
	if err != nil || tok.AccessToken != "at" {
		t.Fatalf("%+v %v", tok, err)
	}
}

// ping's credential never reaches another origin through a redirect, and
// the other origin's answer is not reported as the server's: Bearer (where
// Go would keep the header across ports) and DPoP (where the transport
// would add it on every hop, to any host).
func TestResourceRequestsStayOnTheirOrigin(t *testing.T) {
	ctx := context.Background()
	for _, hostOf := range []func(*recorder) string{func(r *recorder) string { return r.URL }, otherHost} {
		other := newRecorder(t)
		mcp := redirector(t, http.StatusTemporaryRedirect, hostOf(other))
		d := newDPoP(t)
		clients := map[string]*http.Client{"bearer": nil, "dpop": d.Client(nil, mustOrigin(t, mcp.URL), "bound-token")}
		for name, hc := range clients {
			if res, err := probe.Ping(ctx, hc, mcp.URL, "the-token"); !errors.Is(err, flows.ErrCrossOrigin) {
				t.Errorf("%s ping redirected to %s: %+v, %v", name, hostOf(other), res, err)
			}
			if _, err := probe.CheckMCP(ctx, hc, mcp.URL+"/mcp", "the-token"); !errors.Is(err, flows.ErrCrossOrigin) {
				t.Errorf("%s MCP check redirected to %s: %v", name, hostOf(other), err)
			}
		}
		if n := other.count(); n != 0 {
			t.Errorf("redirect to %s: the other origin received %d request(s)", hostOf(other), n)
		}
	}
}

// A client confined to one origin refuses any request to another before
// sending it, and confining again never widens it.
func TestConfineRefusesOtherOrigins(t *testing.T) {
	other := newRecorder(t)
	home := mustOrigin(t, "http://127.0.0.1:1")
	hc := flows.Confine(nil, home)
	req, _ := http.NewRequest(http.MethodGet, other.URL, nil)
	req.Header.Set("Authorization", "Bearer x")
	_, err := hc.Do(req)
	var ce *flows.CrossOriginError
	if !errors.As(err, &ce) || ce.Origin != home {
		t.Fatalf("err = %v", err)
	}
	widened := flows.Confine(hc, mustOrigin(t, other.URL))
	req, _ = http.NewRequest(http.MethodGet, other.URL, nil)
	if _, err := widened.Do(req); !errors.Is(err, flows.ErrCrossOrigin) {
		t.Fatalf("re-confining widened the client: %v", err)
	}
	if n := other.count(); n != 0 {
		t.Fatalf("the other origin received %d request(s)", n)
	}
}

// A negative expires_in is no "never expires": the token counts as expired.
func TestNegativeExpiresInIsExpired(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"at","token_type":"Bearer","expires_in":-3600,"refresh_token":"rt2"}`))
	}))
	defer s.Close()
	clk := flowstest.NewFakeClock(t0)
	client := flows.Client{ID: "c"}
	refreshed, err := flows.Refresh(context.Background(), flows.RefreshConfig{TokenURL: s.URL, Client: client, Clock: clk}, "rt")
	if err != nil {
		t.Fatal(err)
	}
	cfg := flows.AuthCodeConfig{Client: client, Clock: clk, Discovery: &flows.Discovery{Resource: s.URL + "/mcp", Issuer: s.URL,
		AuthServer: &flows.AuthServerMetadata{Issuer: s.URL, AuthorizationEndpoint: s.URL + "/a", TokenEndpoint: s.URL, CodeChallengeMethodsSupported: []string{"S256"}}}}
	exchanged, err := cfg.Exchange(context.Background(), &flows.AuthRequest{RedirectURI: "http://127.0.0.1:1/cb", Verifier: strings.Repeat("v", 43)}, "code")
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]*flows.Token{"refresh": refreshed, "exchange": exchanged} {
		if tok.Expiry.IsZero() || tok.Expiry.After(t0) || !flows.NeedsRefresh(tok.Expiry, t0, 0) {
			t.Errorf("%s: expiry %v for expires_in -3600 at %v", name, tok.Expiry, t0)
		}
	}
}
