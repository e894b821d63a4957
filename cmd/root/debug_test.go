package root_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// secretFields are the wire fields whose values must never reach --debug.
var secretFields = []string{"access_token", "refresh_token", "id_token", "code", "code_verifier", "device_code", "client_secret"}

// recorder sits outside the --debug transport and writes down every secret
// value that actually crossed the wire, so the test can look for the real
// strings in the trace.
type recorder struct {
	next    http.RoundTripper
	mu      sync.Mutex
	secrets map[[2]string]bool // {field, value}
}

func (r *recorder) note(body []byte) {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		v, _ := url.ParseQuery(string(body))
		m = map[string]any{}
		for k := range v {
			m[k] = v.Get(k)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range secretFields {
		if s, ok := m[f].(string); ok && s != "" {
			r.secrets[[2]string{f, s}] = true
		}
	}
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(b)
			r.note(data)
		}
	}
	if h := req.Header.Get("Authorization"); h != "" {
		r.mu.Lock()
		r.secrets[[2]string{"Authorization", strings.TrimPrefix(h, "Bearer ")}] = true
		r.mu.Unlock()
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	r.note(data)
	return resp, nil
}

func recordSecrets(c *clitest.CLI) *recorder {
	rec := &recorder{secrets: map[[2]string]bool{}}
	c.Wrap = func(f *cmdutil.Factory) {
		f.HTTPClient = func() (*http.Client, error) {
			hc, err := cmdutil.NewHTTPClient(f.Globals, f.IO.ErrOut, f.Getenv)
			if err != nil {
				return nil, err
			}
			rec.next, hc.Transport = hc.Transport, rec
			return hc, nil
		}
	}
	return rec
}

func assertNoSecrets(t *testing.T, rec *recorder, trace string, want ...string) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	seen := map[string]bool{}
	for k := range rec.secrets {
		field, s := k[0], k[1]
		seen[field] = true
		if strings.Contains(trace, s) {
			t.Errorf("--debug output contains the %s %q", field, s)
		}
	}
	for _, f := range want {
		if !seen[f] {
			t.Errorf("no %s crossed the wire: the test proves nothing about it", f)
		}
	}
	if !strings.Contains(trace, "[REDACTED]") {
		t.Errorf("no trace at all:\n%s", trace)
	}
}

func TestDebugTraceRedactsEverySecret(t *testing.T) {
	env := servertest.New(t, servertest.Options{})

	c := clitest.New(t, env)
	rec := recordSecrets(c)
	c.Open = clitest.ApprovingBrowser(t, env, "uma", "approve")
	code, _, stderr := c.Run("login", env.URL+"/mcp", "--debug")
	if code != 0 {
		t.Fatalf("login: %s", stderr)
	}
	if !strings.Contains(stderr, "POST "+env.URL+"/oauth/token") {
		t.Fatalf("the token request is not traced:\n%s", stderr)
	}
	code, _, pingTrace := c.Run("ping", "--debug")
	if code != 0 {
		t.Fatal(pingTrace)
	}
	assertNoSecrets(t, rec, stderr+pingTrace, "code", "code_verifier", "access_token", "Authorization")

	c = clitest.New(t, env)
	rec = recordSecrets(c)
	d := clitest.StartDevice(t, c, "--debug")
	d.Approve("uma", "approve")
	d.Poll(5 * time.Second)
	if code := d.Exit(); code != 0 {
		t.Fatalf("device: %s", d.ErrOut.String())
	}
	assertNoSecrets(t, rec, d.ErrOut.String(), "device_code", "access_token")
}
