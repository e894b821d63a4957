package conformance

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/server/browsertest"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// badTokenIs500 makes the MCP endpoint answer a token it does not know with
// a server error, as some SDK examples do: a real FAIL for the report.
func badTokenIs500(next http.Handler) http.Handler {
	return rewriteAnswer(next, func(r *http.Request) bool {
		return r.URL.Path == "/mcp" && r.Header.Get("Authorization") != ""
	}, func(status int, h http.Header, body []byte) (int, []byte) {
		if status != http.StatusUnauthorized {
			return status, body
		}
		h.Del("WWW-Authenticate")
		h.Set("Content-Type", "application/json")
		return http.StatusInternalServerError, []byte(`{"error":"server_error"}`)
	})
}

// The HTML report of a run with failures, opened in headless Chromium: the
// verdict, the failing check and the answer that failed it are on the page,
// no secret is, and a screenshot is kept ($MCPAUTH_ARTIFACTS, or a
// mcpauth-artifacts folder in the temporary directory).
func TestHTMLReportInChromium(t *testing.T) {
	ctx := browsertest.Start(t, browsertest.Options{})
	inst, err := local.Start(context.Background(), local.Options{Store: memory.New(), Wrap: badTokenIs500})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	path := filepath.Join(t.TempDir(), "report.html")
	res := runCmd(t, nil, nil, "--profile", "mcp", inst.URL+"/mcp", "--approve=form", "--html", path)
	if res.code != clierr.ExitCheckFailed {
		t.Fatalf("exit %d, want %d (MCP-14 fails)\n%s", res.code, clierr.ExitCheckFailed, res.stderr)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "Bearer invalid-") {
		t.Errorf("the report shows a bearer token")
	}
	if _, err := chromedp.RunResponse(ctx, chromedp.Navigate("file://"+path)); err != nil {
		t.Fatalf("opening the report: %v", err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body"), chromedp.NodeVisible))
	if err != nil {
		t.Fatalf("reading the report: %v", err)
	}
	for _, want := range []string{"FAIL", "MCP-14", "a token the server never issued gets 401", "< 500 Internal Server Error",
		"Authorization: Bearer [redacted ", "resource-metadata", "transport"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	if shot := browsertest.Screenshot(t, ctx, "report"); shot != "" {
		if fi, err := os.Stat(shot); err != nil {
			t.Error(err)
		} else if fi.Size() < 10_000 {
			t.Errorf("screenshot %s: %d bytes, want a page", shot, fi.Size())
		}
	}
}
