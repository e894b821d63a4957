package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/cmd/root"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// movingResource is a hostile MCP server: it answers every MCP request 401,
// and its protected resource metadata names the authorization servers of
// pick, asked afresh on every fetch (say, alternating between two).
type movingResource struct {
	*httptest.Server
	mu   sync.Mutex
	pick func() string
}

func newMovingResource(t *testing.T, pick func() string) *movingResource {
	m := &movingResource{pick: pick}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"):
			m.mu.Lock()
			as := m.pick()
			m.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": m.URL + "/mcp", "authorization_servers": []string{as}, "scopes_supported": []string{"mcp"}})
		case r.URL.Path == "/mcp":
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+m.URL+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(m.Close)
	return m
}

// setPick changes which authorization server the metadata names.
func (m *movingResource) setPick(pick func() string) {
	m.mu.Lock()
	m.pick = pick
	m.mu.Unlock()
}

// stdioHost is a desktop host on the proxy's stdin and stdout: it sends one
// request at a time and waits for its answer.
type stdioHost struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *clitest.Buffer
	done chan int
}

func startProxy(t *testing.T, c *clitest.CLI, errOut *clitest.Buffer, args ...string) *stdioHost {
	pr, pw := io.Pipe()
	h := &stdioHost{t: t, in: pw, out: &clitest.Buffer{}, done: make(chan int, 1)}
	f := c.Factory(h.out, errOut)
	f.IO.In = pr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	go func() {
		defer cancel()
		h.done <- root.Run(ctx, f, append([]string{"proxy"}, args...))
	}()
	t.Cleanup(func() {
		pw.Close()
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			t.Error("the proxy did not exit after stdin closed")
		}
	})
	return h
}

// call sends request id and returns the proxy's answer to it.
func (h *stdioHost) call(id int, method, params string) string {
	h.t.Helper()
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	if _, err := io.WriteString(h.in, msg); err != nil {
		h.t.Fatal(err)
	}
	return h.out.WaitFor(h.t, regexp.MustCompile(fmt.Sprintf(`(?m)^.*"id":%d[,}].*$`, id)))[0]
}

const initParams = `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}`

// A resource whose metadata alternates between two authorization servers
// while it refuses every token: the proxy (--login) follows one move with
// one browser login, and after that gives the host an error naming the
// command to run instead of a browser login per request.
func TestProxyMigrationLoginsAreBounded(t *testing.T) {
	as1, as2 := flowstest.NewServer(t), flowstest.NewServer(t)
	res := newMovingResource(t, func() string { return as1.URL })
	mcp := res.URL + "/mcp"
	c := clitest.New(t, nil)
	var logins atomic.Int32
	c.Open = func(authURL string) error {
		logins.Add(1)
		return clitest.Follow(authURL)
	}
	if code, _, stderr := c.Run("login", mcp); code != 0 {
		t.Fatalf("login: exit %d: %s", code, stderr)
	}
	logins.Store(0)
	n := 0
	res.setPick(func() string {
		n++
		return []string{as1.URL, as2.URL}[n%2]
	})

	errOut := &clitest.Buffer{}
	host := startProxy(t, c, errOut, mcp, "--login")
	const requests = 10
	var last string
	for id := 1; id <= requests; id++ {
		method, params := "tools/list", "{}"
		if id == 1 {
			method, params = "initialize", initParams
		}
		last = host.call(id, method, params)
	}
	t.Logf("%d browser logins for %d host requests", logins.Load(), requests)
	if got := logins.Load(); got != 1 {
		t.Errorf("%d browser logins during the proxy run, want 1\n%s", got, errOut.String())
	}
	t.Logf("stderr:\n%s\nlast answer: %s", errOut.String(), last)
	if !strings.Contains(last, "changed again") || !strings.Contains(last, "run: mcpauth login "+mcp) {
		t.Errorf("the host's last answer does not name the command to run: %s", last)
	}
}

// The resource moves from alice's authorization server to one where the
// browser signs in as mallory: the proxy's stderr (even with --quiet) names
// the new server before the browser opens and mallory after, and the new
// server receives nothing the old one issued.
func TestProxyMigrationNamesTheNewServerAndAccount(t *testing.T) {
	as1, as2 := flowstest.NewServer(t), flowstest.NewServer(t)
	as1.TokenSubject, as2.TokenSubject = "alice", "mallory"
	res := newMovingResource(t, func() string { return as1.URL })
	mcp := res.URL + "/mcp"
	c := clitest.New(t, nil)
	c.Open = clitest.Follow
	if code, _, stderr := c.Run("login", mcp); code != 0 {
		t.Fatalf("login: exit %d: %s", code, stderr)
	}
	old := c.Stored(mcp)
	res.setPick(func() string { return as2.URL })

	errOut := &clitest.Buffer{}
	var beforeBrowser string
	c.Open = func(authURL string) error {
		beforeBrowser = errOut.String()
		return clitest.Follow(authURL)
	}
	host := startProxy(t, c, errOut, "--quiet", mcp, "--login")
	host.call(1, "initialize", initParams)
	if !strings.Contains(beforeBrowser, "moved from "+as1.URL+" to "+as2.URL+": logging in at "+as2.URL) {
		t.Errorf("before the browser opened, stderr did not name the new authorization server:\n%s", beforeBrowser)
	}
	if !strings.Contains(errOut.String(), "now logged in at "+as2.URL+" as mallory (before: alice at "+as1.URL+")") {
		t.Errorf("stderr does not name the new account:\n%s", errOut.String())
	}
	if leaked := as2.Leaked(map[string]string{"old client id": old.Client.ClientID, "old access token": old.AccessToken,
		"old refresh token": old.RefreshToken}); len(leaked) > 0 {
		t.Errorf("the new authorization server received: %v", leaked)
	}
	if now := c.Stored(mcp); now.UserID != "mallory" || now.Issuer != as2.URL {
		t.Errorf("stored %q at %s, want mallory at %s", now.UserID, now.Issuer, as2.URL)
	}
}
