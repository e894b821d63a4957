package probe

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPCheckResult is what CheckMCP learned.
type MCPCheckResult struct {
	ServerName string `json:"server_name,omitempty"`
	Tools      int    `json:"tools"`
}

// CheckMCP checks token against any MCP server: it initializes a session at
// mcpURL over Streamable HTTP and lists the tools, through the
// modelcontextprotocol/go-sdk client, with token as the Bearer credential
// ("" when hc carries the credential: Transport.Client). A 401 or 403
// comes back as *flows.ResourceError, as from Ping.
func CheckMCP(ctx context.Context, hc *http.Client, mcpURL, token string) (*MCPCheckResult, error) {
	var err error
	if token != "" {
		if hc, err = bearerClient(hc, mcpURL, token); err != nil {
			return nil, fmt.Errorf("MCP server: %w", err)
		}
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	rec := &answerRecorder{next: hc.Transport}
	client, err := flows.ConfineTo(&http.Client{Transport: rec, Timeout: hc.Timeout}, mcpURL)
	if err != nil {
		return nil, fmt.Errorf("MCP server: %w", err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpauth", Version: "1"}, nil)
	session, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: client,
		MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, rec.wrap(mcpURL, "initialize", err)
	}
	defer session.Close()
	res, err := session.ListTools(ctx, nil)
	if err != nil {
		return nil, rec.wrap(mcpURL, "tools/list", err)
	}
	out := &MCPCheckResult{Tools: len(res.Tools)}
	if ir := session.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		out.ServerName = ir.ServerInfo.Name
	}
	return out, nil
}

// answerRecorder remembers the first 401 or 403, whose challenge the SDK's
// error does not carry, and the first 5xx.
type answerRecorder struct {
	next http.RoundTripper

	mu     sync.Mutex
	denied *flows.ResourceError
	failed *flows.OAuthError // the first 5xx answer
}

func (t *answerRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		t.mu.Lock()
		if t.denied == nil {
			t.denied = flows.NewResourceError(resp)
		}
		t.mu.Unlock()
	}
	if err == nil && resp.StatusCode >= 500 {
		// The SDK's error keeps only the status text; keep the answer.
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, oauthwire.MaxBody))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		t.mu.Lock()
		if t.denied == nil && rerr == nil {
			t.failed = responseError(resp, body)
		}
		t.mu.Unlock()
	}
	return resp, err
}

func (t *answerRecorder) wrap(mcpURL, step string, err error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.denied != nil {
		return fmt.Errorf("MCP %s at %s: %w", step, mcpURL, t.denied)
	}
	if t.failed != nil {
		return fmt.Errorf("MCP %s at %s: %w", step, mcpURL, t.failed)
	}
	return fmt.Errorf("MCP %s at %s: %w", step, mcpURL, err)
}
