package server_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/server/servertest"
)

// htmlAccepting adds what a browser's navigation sends.
type htmlAccepting struct{ next http.RoundTripper }

func (h htmlAccepting) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	return h.next.RoundTrip(r)
}

// aliasBrowser is env's browser reaching the server as localhost:PORT:
// every connection still goes to 127.0.0.1, only the name differs.
func aliasBrowser(t *testing.T, env *servertest.Env) (*servertest.Browser, string) {
	t.Helper()
	alias := strings.Replace(env.URL, "127.0.0.1", "localhost", 1)
	b := env.Browser("lia")
	dial := &net.Dialer{}
	b.Client.Transport = htmlAccepting{&http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, port, _ := net.SplitHostPort(addr)
		return dial.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", port))
	}}}
	b.Client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 20 {
			return errors.New("too many redirects")
		}
		switch req.URL.Scheme + "://" + req.URL.Host {
		case env.URL, env.IdPURL, alias:
			return nil
		}
		return http.ErrUseLastResponse
	}
	return b, alias
}

// The development server on 127.0.0.1 reached as localhost: a browser is
// sent to the base URL before anything sets a cookie, so signing in works
// (it ended at "This sign-in link has expired" on every try, since the
// login cookie was set for localhost and the callback came to 127.0.0.1).
func TestLoopbackAliasSignsInAtTheBaseURL(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	b, alias := aliasBrowser(t, env)
	p, err := b.Get(t.Context(), alias+"/auth/login?return_to=%2Fsettings")
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != http.StatusOK || p.URL.String() != env.URL+"/settings" || strings.Contains(string(p.Body), "expired") {
		t.Fatalf("sign-in through %s ended at %s with status %d:\n%.400s", alias, p.URL, p.Status, p.Body)
	}
}

// Only browsers are redirected: a client asking for JSON at the alias gets
// the metadata, which names the base URL.
func TestLoopbackAliasAnswersAPIClients(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	alias, _ := url.Parse(strings.Replace(env.URL, "127.0.0.1", "localhost", 1))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, env.URL+"/.well-known/oauth-protected-resource/mcp", nil)
	req.Host = alias.Host
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("metadata at %s: HTTP %d, want 200", alias.Host, resp.StatusCode)
	}
	req.Header.Set("Accept", "text/html")
	resp, err = http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusTemporaryRedirect || loc != env.URL+"/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("a browser at %s: HTTP %d to %q, want 307 to the base URL", alias.Host, resp.StatusCode, loc)
	}
}
