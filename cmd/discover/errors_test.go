package discover_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
)

// noDial is a transport that fails the test if anything is sent: a URL
// refused before any connection must never reach it.
type noDial struct{ t *testing.T }

func (n noDial) RoundTrip(r *http.Request) (*http.Response, error) {
	n.t.Errorf("dialed %s; the URL should have been refused first", r.URL)
	return nil, fmt.Errorf("test transport: no dialing %s", r.URL)
}

// Errors that name what went wrong and the next step, one golden file for
// them all: the exact stderr line and exit code of each mistake.
func TestErrorsNameTheNextStep(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + dead.Addr().String() + "/mcp"
	dead.Close() // a closed loopback port: connection refused
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Acme</title><p>Welcome")
	}))
	defer html.Close()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/status" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok"}`)
	}))
	defer api.Close()
	noDCR := otherServer(t, map[string]func(string) any{
		"/.well-known/oauth-protected-resource": func(base string) any {
			return map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}}
		},
		"/.well-known/oauth-authorization-server": asMetadata,
	})

	var got strings.Builder
	for _, tt := range []struct {
		args   []string
		noDial bool
	}{
		{args: []string{"discover", deadURL}},
		{args: []string{"discover", html.URL + "/docs"}},
		{args: []string{"login", html.URL + "/mcp"}},
		{args: []string{"discover", notFound.URL + "/api"}},
		{args: []string{"device", notFound.URL}},
		{args: []string{"discover", api.URL + "/v1/status"}},
		{args: []string{"login", noDCR.URL + "/mcp"}},
		{args: []string{"discover", "http://mcp.example.com/mcp"}, noDial: true},
		{args: []string{"login", "http://mcp.example.com/mcp"}, noDial: true},
		{args: []string{"apikey", "set", "http://mcp.example.com/mcp"}, noDial: true},
	} {
		c := clitest.New(t, nil)
		c.Stdin = "mcpa_" + strings.Repeat("x", 43) + "\n"
		if tt.noDial {
			c.Wrap = func(f *cmdutil.Factory) {
				f.HTTPClient = func() (*http.Client, error) { return &http.Client{Transport: noDial{t}}, nil }
			}
		}
		code, _, stderr := c.Run(tt.args...)
		fmt.Fprintf(&got, "$ mcpauth %s\nexit %d\n%s\n", strings.Join(tt.args, " "), code, stderr)
	}
	clitest.Golden(t, "errors.txt", got.String())
}
