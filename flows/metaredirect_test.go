package flows_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
)

// elsewhere is another origin (a second loopback server) serving metadata
// that names its own authorization server, and counting what it receives.
func elsewhere(t *testing.T, mcpResource, issuer string) (base string, hits *atomic.Int32) {
	srv, mux := newServer(t)
	hits = &atomic.Int32{}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if strings.Contains(r.URL.Path, "oauth-protected-resource") {
			writeJSON(w, 200, prmDoc(mcpResource, srv.URL))
			return
		}
		writeJSON(w, 200, asMeta(issuer, srv.URL))
	})
	return srv.URL, hits
}

// Metadata URLs that redirect, to another origin or within their own, are
// not followed (RFC 8414 §3, RFC 9728 §3: the document is at that URL):
// the other origin receives nothing, discover shows the redirect and its
// Location rather than "ok", and the error names the Location.
func TestDiscoverDoesNotFollowMetadataRedirects(t *testing.T) {
	t.Run("authorization server metadata to another origin", func(t *testing.T) {
		srv, mux := newServer(t)
		other, hits := elsewhere(t, srv.URL+"/mcp", srv.URL)
		mux.HandleFunc("/mcp", challenge401(`Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`))
		mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", serveJSON(prmDoc(srv.URL+"/mcp", srv.URL)))
		mux.HandleFunc("/.well-known/", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other+r.URL.Path, http.StatusFound)
		})
		d, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, srv.URL+"/mcp")
		if !errors.Is(err, flows.ErrNoMetadata) || !strings.Contains(err.Error(), "redirected to "+other+"/.well-known/oauth-authorization-server: not followed") {
			t.Fatalf("err = %v, want ErrNoMetadata naming the Location", err)
		}
		if p := findProbe(t, d, srv.URL+"/.well-known/oauth-authorization-server"); p.Status != http.StatusFound || !strings.HasPrefix(p.Verdict, "redirected to "+other) {
			t.Fatalf("probe %+v, want 302 and the redirect", p)
		}
		if n := hits.Load(); n != 0 || d.AuthServer != nil {
			t.Fatalf("the other origin got %d requests; authorization server %+v", n, d.AuthServer)
		}
	})
	t.Run("resource metadata to another origin", func(t *testing.T) {
		srv, mux := newServer(t)
		other, hits := elsewhere(t, srv.URL+"/mcp", "")
		mux.HandleFunc("/mcp", challenge401(`Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`))
		mux.HandleFunc("/.well-known/oauth-protected-resource/", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other+r.URL.Path, http.StatusTemporaryRedirect)
		})
		d, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, srv.URL+"/mcp")
		if p := findProbe(t, d, srv.URL+"/.well-known/oauth-protected-resource/mcp"); p.Status != http.StatusTemporaryRedirect || !strings.Contains(p.Verdict, "not followed") {
			t.Fatalf("probe %+v, want 307 not followed", p)
		}
		if n := hits.Load(); n != 0 {
			t.Fatalf("the other origin got %d requests", n)
		}
		if err == nil && (d.ResourceMetadata != nil || strings.HasPrefix(d.Issuer, other)) {
			t.Fatalf("discovery took the other origin's word: %+v", d)
		}
	})
	t.Run("within the origin", func(t *testing.T) {
		srv, mux := newServer(t)
		mux.HandleFunc("/mcp", challenge401(`Bearer resource_metadata="`+srv.URL+`/prm"`))
		mux.HandleFunc("/prm", serveJSON(prmDoc(srv.URL+"/mcp", srv.URL)))
		mux.HandleFunc("/.well-known/", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusMovedPermanently)
		})
		mux.HandleFunc("/moved/", serveJSON(asMeta(srv.URL, srv.URL)))
		_, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, srv.URL+"/mcp")
		if !errors.Is(err, flows.ErrNoMetadata) || !strings.Contains(err.Error(), "redirected to "+srv.URL+"/moved/.well-known/") {
			t.Fatalf("err = %v, want ErrNoMetadata naming the Location", err)
		}
	})
}

// The metadata's issuer must be identical to the one the URL was built
// from (RFC 8414 §3.3), as the authorization response's iss is: a
// trailing slash or another case is another issuer.
func TestDiscoverComparesTheIssuerExactly(t *testing.T) {
	for _, mod := range []func(string) string{
		func(iss string) string { return iss + "/" },
		func(iss string) string { return strings.Replace(iss, "http://", "HTTP://", 1) },
	} {
		srv, mux := newServer(t)
		mux.HandleFunc("/mcp", challenge401(`Bearer resource_metadata="`+srv.URL+`/prm"`))
		mux.HandleFunc("/prm", serveJSON(prmDoc(srv.URL+"/mcp", srv.URL)))
		mux.HandleFunc("/.well-known/", serveJSON(asMeta(mod(srv.URL), srv.URL)))
		d, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, srv.URL+"/mcp")
		if !errors.Is(err, flows.ErrIssuerMismatch) || d.AuthServer != nil {
			t.Fatalf("issuer %q for %s: %v, want ErrIssuerMismatch", mod(srv.URL), srv.URL, err)
		}
	}
}
