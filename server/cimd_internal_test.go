package server

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store/memory"
)

// Every class the guard must refuse, next to neighbours it must allow. No
// address here is ever dialled: this is the classification alone.
func TestBlockedAddr(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		addr    string
		blocked bool
	}{
		// loopback
		{"127.0.0.1", true}, {"127.255.255.254", true}, {"::1", true},
		// RFC 1918 with their edges
		{"10.0.0.1", true}, {"10.255.255.255", true}, {"9.255.255.255", false}, {"11.0.0.0", false},
		{"172.16.0.0", true}, {"172.31.255.255", true}, {"172.15.255.255", false}, {"172.32.0.0", false},
		{"192.168.0.1", true}, {"192.168.255.255", true}, {"192.167.255.255", false}, {"192.169.0.0", false},
		// carrier-grade NAT
		{"100.64.0.1", true}, {"100.127.255.255", true}, {"100.63.255.255", false}, {"100.128.0.0", false},
		// link-local, the cloud metadata address among them
		{"169.254.169.254", true}, {"169.254.0.1", true}, {"fe80::1", true}, {"febf::1", true}, {"fe80::1%eth0", true},
		// unique local
		{"fc00::1", true}, {"fd12:3456::1", true}, {"fbff:ffff::1", false}, {"fec0::1", true},
		// unspecified, "this network", broadcast and reserved
		{"0.0.0.0", true}, {"0.1.2.3", true}, {"::", true}, {"255.255.255.255", true}, {"240.0.0.1", true},
		// multicast
		{"224.0.0.1", true}, {"239.255.255.250", true}, {"ff02::1", true}, {"ff0e::1", true}, {"ff01::1", true},
		// IPv4-mapped and -compatible IPv6 are judged by their IPv4 address
		{"::ffff:127.0.0.1", true}, {"::ffff:10.1.2.3", true}, {"::ffff:169.254.169.254", true}, {"::ffff:8.8.8.8", false},
		{"::ffff:100.64.0.1", true}, {"::ffff:198.18.0.1", true}, {"::127.0.0.1", true},
		// NAT64 and 6to4 reach the IPv4 address they embed
		{"64:ff9b::a00:1", true}, {"64:ff9b::7f00:1", true}, {"64:ff9b::808:808", false}, {"64:ff9b:1::1", true},
		{"2002:c0a8:101::1", true}, {"2002:808:808::1", false},
		// documentation and benchmarking ranges
		{"192.0.2.1", true}, {"198.51.100.1", true}, {"203.0.113.1", true}, {"198.18.0.1", true}, {"2001:db8::1", true},
		// public
		{"8.8.8.8", false}, {"1.1.1.1", false}, {"93.184.216.34", false}, {"2606:4700:4700::1111", false}, {"2a00:1450::1", false},
	} {
		ip, err := netip.ParseAddr(tt.addr)
		if err != nil {
			t.Fatalf("%s: %v", tt.addr, err)
		}
		if got := blockedAddr(ip); got != tt.blocked {
			t.Errorf("blockedAddr(%s) = %v, want %v", tt.addr, got, tt.blocked)
		}
	}
	if !blockedAddr(netip.Addr{}) {
		t.Error("the zero address is not blocked")
	}
}

// docServer is a loopback TLS server for metadata documents; hits counts
// requests that reached a handler, conns connections accepted.
type docServer struct {
	*httptest.Server
	hits, conns atomic.Int64
	accept      atomic.Value // last Accept header
}

func newDocServer(t *testing.T, h http.HandlerFunc) *docServer {
	t.Helper()
	d := &docServer{}
	d.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.hits.Add(1)
		d.accept.Store(r.Header.Get("Accept"))
		h(w, r)
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

func (d *docServer) roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(d.Certificate())
	return p
}

// loopbackOnly resolves the given names to 127.0.0.1 and loopback literals
// to themselves, and refuses everything else, so no test ever asks real DNS
// or reaches another host.
func loopbackOnly(names ...string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		for _, n := range names {
			if host == n {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
		}
		if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().IsLoopback() {
			return []netip.Addr{ip}, nil
		}
		return nil, fmt.Errorf("test resolver: unknown host %q", host)
	}
}

func wantCIMDError(t *testing.T, err error, substr string) {
	t.Helper()
	var ce *cimdError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a metadata document error", err)
	}
	if !strings.Contains(ce.reason, substr) {
		t.Fatalf("reason %q does not mention %q", ce.reason, substr)
	}
}

// The guard refuses at dial time: a name that resolves to loopback, and
// loopback literals, never get a connection unless private addresses are
// allowed.
func TestCIMDGuardAtDialTime(t *testing.T) {
	t.Parallel()
	srv := newDocServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{}`)
	})
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	strict := newCIMDFetcher(MetadataDocumentConfig{RootCAs: srv.roots(), Timeout: 2 * time.Second, LookupIP: loopbackOnly("client.example")}, nil)
	// The resolved address is refused before any socket exists (the
	// reason names both, which the socket-level check below cannot).
	_, _, err := strict.fetch(t.Context(), fmt.Sprintf("https://client.example:%d/c.json", port))
	wantCIMDError(t, err, "client.example resolves to 127.0.0.1, a private or reserved address")
	for _, u := range []string{
		fmt.Sprintf("https://127.0.0.1:%d/c.json", port),
		fmt.Sprintf("https://[::1]:%d/c.json", port),
		fmt.Sprintf("https://[::ffff:127.0.0.1]:%d/c.json", port),
	} {
		_, _, err := strict.fetch(t.Context(), u)
		wantCIMDError(t, err, "private or reserved address")
	}
	if n := srv.conns.Load(); n != 0 {
		t.Fatalf("the guarded fetcher opened %d connections to loopback", n)
	}

	// The same name with private addresses allowed is dialled (at
	// 127.0.0.1: the certificate, made for 127.0.0.1 and example.com, then
	// fails, which proves the resolver's answer was used).
	relaxed := newCIMDFetcher(MetadataDocumentConfig{AllowPrivateAddresses: true, RootCAs: srv.roots(), Timeout: 2 * time.Second, LookupIP: loopbackOnly("client.example")}, nil)
	_, _, err = relaxed.fetch(t.Context(), fmt.Sprintf("https://client.example:%d/c.json", port))
	var be *blockedAddrError
	if errors.As(err, &be) {
		t.Fatalf("relaxed fetch of a loopback name was refused by the guard: %v", err)
	}
	wantCIMDError(t, err, "TLS certificate could not be verified")
	if !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("relaxed fetch of a loopback name: %v, want a certificate error", err)
	}
	if srv.conns.Load() == 0 {
		t.Fatal("the relaxed fetcher did not connect to the address the resolver gave")
	}

	// No proxy: a proxy would dial the document host itself, past the guard.
	if tr := strict.client.Transport.(*http.Transport); tr.Proxy != nil {
		t.Error("the fetcher's transport uses a proxy")
	}

	// The socket-level check refuses on its own too.
	g := &guardedDialer{}
	for _, a := range []string{"127.0.0.1:443", "[::1]:443", "10.0.0.1:443", "[fe80::1]:443", "169.254.169.254:80"} {
		if err := g.control("tcp", a, nil); !errors.As(err, &be) {
			t.Errorf("control(%s) = %v, want a refusal", a, err)
		}
	}
	if err := (&guardedDialer{allowPrivate: true}).control("tcp", "127.0.0.1:443", nil); err != nil {
		t.Errorf("control with private addresses allowed: %v", err)
	}
}

// Fetching against a loopback TLS server, with the guard relaxed only to
// reach it: every rule of the fetch.
func TestCIMDFetch(t *testing.T) {
	t.Parallel()
	doc := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprint(w, `{"client_id":"x"}`)
	}
	srv := newDocServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Header().Set("Cache-Control", "public, max-age=600")
			doc(w)
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/permanent":
			http.Redirect(w, r, "/ok", http.StatusPermanentRedirect)
		case "/missing":
			http.NotFound(w, r)
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `{"client_id":"x"}`)
		case "/untyped":
			w.Header()["Content-Type"] = nil
			fmt.Fprint(w, `{"client_id":"x"}`)
		case "/exact":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"p":"`+strings.Repeat("a", cimdMaxBytes-8)+`"}`)
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"p":"`+strings.Repeat("a", cimdMaxBytes-7)+`"}`)
		case "/big-chunked":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"p":"`)
			w.(http.Flusher).Flush() // no Content-Length: the limit applies while reading
			fmt.Fprint(w, strings.Repeat("a", cimdMaxBytes))
		case "/slow-headers":
			time.Sleep(400 * time.Millisecond)
			doc(w)
		case "/slow-body":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"client_id":`)
			w.(http.Flusher).Flush()
			time.Sleep(400 * time.Millisecond)
			fmt.Fprint(w, `"x"}`)
		}
	})
	f := newCIMDFetcher(MetadataDocumentConfig{AllowPrivateAddresses: true, RootCAs: srv.roots(), Timeout: 200 * time.Millisecond, LookupIP: loopbackOnly()}, nil)

	body, maxAge, err := f.fetch(t.Context(), srv.URL+"/ok")
	if err != nil || string(body) != `{"client_id":"x"}` || maxAge != 10*time.Minute {
		t.Fatalf("fetch /ok = %q, %v, %v", body, maxAge, err)
	}
	if a := srv.accept.Load(); a != "application/json" {
		t.Errorf("Accept = %q, want application/json", a)
	}
	if body, _, err := f.fetch(t.Context(), srv.URL+"/exact"); err != nil || len(body) != cimdMaxBytes {
		t.Errorf("a document of exactly 64 KiB: %d bytes, %v", len(body), err)
	}

	// A loopback port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	_, _, err = f.fetch(t.Context(), "https://"+closed+"/c.json")
	wantCIMDError(t, err, "refused the connection")

	for _, tt := range []struct{ path, reason string }{
		{"/redirect", "redirects are not followed"},
		{"/permanent", "redirects are not followed"},
		{"/missing", "HTTP 404"},
		{"/html", "not application/json"},
		{"/untyped", "not application/json"},
		{"/big", "larger than 64 KiB"},
		{"/big-chunked", "larger than 64 KiB"},
		{"/slow-headers", "within 200ms"},
		{"/slow-body", "within 200ms"},
	} {
		before := srv.hits.Load()
		_, _, err := f.fetch(t.Context(), srv.URL+tt.path)
		wantCIMDError(t, err, tt.reason)
		if tt.path == "/redirect" && srv.hits.Load() != before+1 {
			t.Errorf("the redirect was followed")
		}
	}
}

func TestCacheLifetime(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cc   []string
		want time.Duration
	}{
		{nil, 5 * time.Minute},
		{[]string{"max-age=600"}, 10 * time.Minute},
		{[]string{"public, max-age=120"}, 2 * time.Minute},
		{[]string{`max-age="120"`}, 2 * time.Minute},
		{[]string{"MAX-AGE=120"}, 2 * time.Minute},
		{[]string{"public", "max-age=120"}, 2 * time.Minute},
		{[]string{"max-age=0"}, time.Minute},
		{[]string{"max-age=59"}, time.Minute},
		{[]string{"max-age=86400"}, 24 * time.Hour},
		{[]string{"max-age=86401"}, 24 * time.Hour},
		{[]string{"max-age=99999999999999999999999"}, 24 * time.Hour},
		{[]string{"max-age=-5"}, 5 * time.Minute},
		{[]string{"max-age=soon"}, 5 * time.Minute},
		{[]string{"no-store"}, time.Minute},
		{[]string{"no-cache, max-age=3600"}, time.Minute},
		{[]string{"s-maxage=3600"}, 5 * time.Minute},
	} {
		h := http.Header{"Cache-Control": tt.cc}
		if got := cacheLifetime(h); got != tt.want {
			t.Errorf("cacheLifetime(%q) = %v, want %v", tt.cc, got, tt.want)
		}
	}
}

func TestCheckMetadataDocumentURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		url, reason string
	}{
		{"https://client.example/app.json", ""},
		{"https://client.example:8443/a/b/metadata", ""},
		{"https://client.example/app.json?v=1", ""},
		{"https://client.example", "must have a path"},
		{"https://client.example/", "must have a path"},
		{"https://client.example/a#frag", "fragment"},
		{"https://client.example/a#", "fragment"},
		{"https://user@client.example/a", "user info"},
		{"https://user:pw@client.example/a", "user info"},
		{"https:///a", "needs a host"},
		{"https://client.example/a/../b", ". or .."},
		{"https://client.example/./b", ". or .."},
		{"https://client.example/a b", "spaces"},
		{"https://client.example/a\x00", "control"},
		{"https://client.example/" + strings.Repeat("a", cimdMaxURLLen), "longer"},
		{"https://client.example/%zz", "not a valid URL"},
	} {
		got := checkMetadataDocumentURL(tt.url)
		if tt.reason == "" && got != "" || tt.reason != "" && !strings.Contains(got, tt.reason) {
			t.Errorf("checkMetadataDocumentURL(%q) = %q, want %q", tt.url, got, tt.reason)
		}
	}
}

func TestParseMetadataDocument(t *testing.T) {
	t.Parallel()
	const id = "https://client.example/app.json"
	c, err := parseMetadataDocument(newGrantRegistry(), id, []byte(`{"client_id":"`+id+`","client_name":"  Example  ","redirect_uris":["http://127.0.0.1/cb","com.example.app:/cb"],"scope":"anything","extra":{"x":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != id || c.Name != "Example" || len(c.RedirectURIs) != 2 || len(c.GrantTypes) != 1 || c.GrantTypes[0] != grantAuthCode ||
		len(c.ResponseTypes) != 1 || c.TokenEndpointAuthMethod != "none" || c.Scope != scopeMCP {
		t.Fatalf("parsed client = %+v", c)
	}
	c, err = parseMetadataDocument(newGrantRegistry(), id, []byte(`{"client_id":"`+id+`","redirect_uris":["https://client.example/cb"],"token_endpoint_auth_method":"none","grant_types":["client_credentials","urn:ietf:params:oauth:grant-type:device_code","refresh_token","urn:ietf:params:oauth:grant-type:device_code"]}`))
	if err != nil || fmt.Sprint(c.GrantTypes) != "[urn:ietf:params:oauth:grant-type:device_code refresh_token]" || c.ResponseTypes != nil {
		t.Fatalf("grant types: %+v, %v", c, err)
	}

	valid := `"client_id":"` + id + `","redirect_uris":["http://127.0.0.1/cb"]`
	for _, tt := range []struct{ doc, reason string }{
		{`[]`, "not a JSON object"},
		{`null`, "not a JSON object"},
		{`{"client_id":`, "not a JSON object"},
		{``, "not a JSON object"},
		{`{"redirect_uris":["http://127.0.0.1/cb"]}`, "client_id"},
		{`{"client_id":"` + id + `/","redirect_uris":["http://127.0.0.1/cb"]}`, "not the URL"},
		{`{"client_id":"https://CLIENT.example/app.json","redirect_uris":["http://127.0.0.1/cb"]}`, "not the URL"},
		{`{"client_id":["` + id + `"],"redirect_uris":["http://127.0.0.1/cb"]}`, "client_id has the wrong type"},
		{`{"client_id":"` + id + `"}`, "redirect_uris is missing"},
		{`{"client_id":"` + id + `","redirect_uris":[]}`, "redirect_uris is missing"},
		{`{"client_id":"` + id + `","redirect_uris":"http://127.0.0.1/cb"}`, "redirect_uris has the wrong type"},
		{`{"client_id":"` + id + `","redirect_uris":["http://evil.example/cb"]}`, "loopback"},
		{`{"client_id":"` + id + `","redirect_uris":["https://client.example/cb#x"]}`, "fragment"},
		{`{"client_id":"` + id + `","redirect_uris":["/relative"]}`, "absolute"},
		{`{"client_id":"` + id + `","redirect_uris":[` + strings.Repeat(`"http://127.0.0.1/cb",`, maxRedirectURIs) + `"http://127.0.0.1/cb"]}`, "more than"},
		{`{` + valid + `,"token_endpoint_auth_method":"client_secret_basic"}`, "only none"},
		{`{` + valid + `,"token_endpoint_auth_method":"private_key_jwt"}`, "only none"},
		{`{` + valid + `,"token_endpoint_auth_method":5}`, "wrong type"},
		{`{` + valid + `,"client_secret":"s"}`, "client_secret"},
		{`{` + valid + `,"client_secret_expires_at":0}`, "client_secret_expires_at"},
		{`{` + valid + `,"client_name":"a\u0007b"}`, "printable"},
		{`{` + valid + `,"client_name":"` + strings.Repeat("n", maxClientNameLen+1) + `"}`, "printable"},
		{`{` + valid + `,"grant_types":"authorization_code"}`, "grant_types has the wrong type"},
	} {
		_, err := parseMetadataDocument(newGrantRegistry(), id, []byte(tt.doc))
		if err == nil {
			t.Errorf("document %.80s accepted, want %q", tt.doc, tt.reason)
			continue
		}
		var ce *cimdError
		if !errors.As(err, &ce) || !strings.Contains(ce.reason, tt.reason) {
			t.Errorf("document %.80s: %v, want %q", tt.doc, err, tt.reason)
		}
	}
}

// Relaxing the guard is logged as a warning when the server starts.
func TestCIMDAllowPrivateWarns(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{false, true} {
		var logs strings.Builder
		_, err := New(t.Context(), Config{
			BaseURL: "http://127.0.0.1:1", Store: memory.New(), SigningKey: make([]byte, 32),
			Logger:            slog.New(slog.NewTextHandler(&logs, nil)),
			MetadataDocuments: MetadataDocumentConfig{AllowPrivateAddresses: allow},
		})
		if err != nil {
			t.Fatal(err)
		}
		if warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "--cimd-allow-private"); warned != allow {
			t.Errorf("allow private %v: warned %v: %s", allow, warned, logs.String())
		}
	}
}
