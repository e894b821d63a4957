package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/cmd/proxy"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// hugeScope is a step-up scope of n tokens, as a hostile resource might put
// in its 403 insufficient_scope challenge; want is among them.
func hugeScope(n int, want string) string {
	toks := make([]string, 0, n)
	for i := range n - 1 {
		toks = append(toks, fmt.Sprintf("junk:%d", i))
	}
	return strings.Join(append(toks, want), " ")
}

// browserLog records the authorization URLs the proxy opened.
type browserLog struct {
	mu   sync.Mutex
	urls []string
}

func (b *browserLog) opened() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.urls...)
}

// stepUpAt logs in to as's /mcp for scope mcp, then returns the proxy's
// step-up (as --login builds it) and its current credential, with browse
// standing in for the browser from then on.
func stepUpAt(t *testing.T, as *flowstest.Server, browse func(string) error) (func(ctx context.Context, token, scope string) (bool, error), func() creds.Credential, *browserLog, *strings.Builder) {
	t.Helper()
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	mcp := as.URL + "/mcp"
	if code, _, stderr := c.Run("login", mcp, "--scope", "mcp"); code != 0 {
		t.Fatalf("login: exit %d: %s", code, stderr)
	}
	b := &browserLog{}
	c.Open = func(authURL string) error {
		b.mu.Lock()
		b.urls = append(b.urls, authURL)
		b.mu.Unlock()
		return browse(authURL)
	}
	var logged strings.Builder
	var mu sync.Mutex
	log := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&logged, format+"\n", args...)
	}
	f := c.Factory(&clitest.Buffer{}, &clitest.Buffer{})
	f.Globals.Storage, f.Globals.StorageSet = "file", true
	step, current, err := proxy.StepUpSource(f, mcp, log)
	if err != nil {
		t.Fatal(err)
	}
	return step, current, b, &logged
}

// A resource asks for 20,000 scopes, one of which the authorization server
// lists: the step-up asks for that one (scopes_supported is preferred to
// the resource's demand) and the authorization URL stays short.
func TestProxyStepUpPrefersScopesSupported(t *testing.T) {
	as := flowstest.NewServer(t)
	as.ScopesSupported = []string{"mcp", flows.ScopeOfflineAccess, "files:write"}
	step, current, browser, logged := stepUpAt(t, as, clitest.Follow)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if ok, err := step(ctx, current().Token, hugeScope(20000, "files:write")); !ok || err != nil {
		t.Fatalf("step-up: %v %v\n%s", ok, err, logged)
	}
	urls := browser.opened()
	if len(urls) != 1 {
		t.Fatalf("%d browser logins, want 1", len(urls))
	}
	u, err := url.Parse(urls[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("authorization URL: %d characters", len(urls[0]))
	if got := u.Query().Get("scope"); got != "mcp offline_access files:write" {
		t.Errorf("asked for scope %s, want the granted scope plus files:write", oauthwire.AbbrevScope(got))
	}
	// 2,048 characters of scope, percent-encoded, within 8,000 (RFC 9110).
	if len(urls[0]) > 8000 {
		t.Errorf("authorization URL of %d characters", len(urls[0]))
	}
	if s := current().Scope; !strings.Contains(s, "files:write") {
		t.Errorf("scope after the step-up %q", s)
	}
}

// Where neither metadata lists scopes, nothing narrows the resource's
// 20,000 scopes: the step-up fails at once, naming the bound, without
// opening the browser.
func TestProxyStepUpRefusesAnUnboundedScope(t *testing.T) {
	as := flowstest.NewServer(t)
	as.ScopesSupported, as.PRMScopes = []string{}, []string{}
	step, current, browser, logged := stepUpAt(t, as, clitest.Follow)
	asked := as.Count("/oauth/authorize", "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := step(ctx, current().Token, hugeScope(20000, "files:write"))
	if !errors.Is(err, flows.ErrScopeTooLong) || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d mcpauth sends", oauthwire.MaxScopeLength)) {
		t.Fatalf("step-up: %v, want the scope bound\n%s", err, logged)
	}
	if urls := browser.opened(); len(urls) != 0 {
		t.Errorf("the browser opened %d time(s), the first at a URL of %d characters", len(urls), len(urls[0]))
	}
	if as.Count("/oauth/authorize", "") != asked {
		t.Error("the authorization endpoint was asked")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the refusal took %s", d)
	}
	if len(err.Error()) > 500 {
		t.Errorf("the error repeats the scope (%d characters)", len(err.Error()))
	}
}

// The authorization endpoint refuses the step-up request, with a 414 page
// or with an error redirect that the browser cannot bring back (it runs on
// another machine): the login ends within a second or two with the
// refusal, not at its timeout (5 minutes; the test allows 10 s).
func TestProxyStepUpRefusalEndsTheLoginPromptly(t *testing.T) {
	for _, tc := range []struct {
		name      string
		authorize http.HandlerFunc
		want      string
	}{
		{"414", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "URI Too Long", http.StatusRequestURITooLong)
		}, "HTTP 414 URI Too Long"},
		{"error redirect", func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			back := q.Get("redirect_uri") + "?" + url.Values{"error": {"invalid_scope"}, "error_description": {"no such scope"}, "state": {q.Get("state")}}.Encode()
			http.Redirect(w, r, back, http.StatusFound)
		}, "invalid_scope: no such scope"},
		{"400 page", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "<html>Bad scope</html>", http.StatusBadRequest)
		}, "HTTP 400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := flowstest.NewServer(t)
			as.ScopesSupported = []string{"mcp", flows.ScopeOfflineAccess, "files:write"}
			// The browser shows whatever the endpoint answers, and nothing
			// reaches the CLI's listener.
			stays := func(authURL string) error {
				hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
				resp, err := hc.Get(authURL)
				if err == nil {
					resp.Body.Close()
				}
				return nil
			}
			step, current, _, logged := stepUpAt(t, as, stays)
			as.AuthorizeHandler = tc.authorize
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err := step(ctx, current().Token, "files:write")
			d := time.Since(start)
			t.Logf("ended after %s: %v", d.Round(time.Millisecond), err)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "refused") {
				t.Errorf("step-up: %v, want the refusal (%s)\n%s", err, tc.want, logged)
			}
			if d > 2*time.Second {
				t.Errorf("the login took %s to end", d)
			}
		})
	}
}
