package serve_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/serve"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// MCPAUTH_TRUSTED_PROXIES reaches the server: from the trusted 127.0.0.9,
// X-Forwarded-For names the client, so two forwarded clients get a
// device-code budget each; from 127.0.0.2 the same header changes nothing.
func TestTrustedProxiesFlag(t *testing.T) {
	base, _ := startServe(t, map[string]string{"MCPAUTH_TRUSTED_PROXIES": "127.0.0.9, 10.0.0.0/8"}, "--limits", "device=0.001:1")
	post := func(from, forwardedFor string) int {
		t.Helper()
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
		req, _ := http.NewRequest(http.MethodPost, base+"/api/oauth/device/code", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", forwardedFor)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, step := range []struct {
		from, xff string
		limited   bool
	}{
		{"127.0.0.9", "198.51.100.1", false},
		{"127.0.0.9", "198.51.100.1", true},
		{"127.0.0.9", "198.51.100.2", false},
		{"127.0.0.2", "198.51.100.3", false},
		{"127.0.0.2", "198.51.100.4", true},
	} {
		if got := post(step.from, step.xff) == http.StatusTooManyRequests; got != step.limited {
			t.Errorf("from %s for %s: limited %v, want %v", step.from, step.xff, got, step.limited)
		}
	}
}

// A network that is not one is refused before anything listens.
func TestTrustedProxiesFlagRefusesBadNetworks(t *testing.T) {
	for _, bad := range []string{"proxy.internal", "0.0.0.0/0"} {
		ios, _, _, _ := iostreams.Test()
		f := cmdutil.New(ios, func(string) string { return "" })
		cmd := serve.NewCmd(f, func(ctx context.Context, o *serve.Options) error {
			o.Ready = func(string) { t.Errorf("%s: the server started", bad) }
			return serve.Run(ctx, o)
		})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		cmd.SetArgs([]string{"--addr", "127.0.0.1:0", "--db", ":memory:", "--trusted-proxies", bad})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := cmd.ExecuteContext(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "--trusted-proxies") {
			t.Errorf("--trusted-proxies %s: %v, want a refusal naming the flag", bad, err)
		}
	}
}
