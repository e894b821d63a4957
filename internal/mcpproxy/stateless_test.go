package mcpproxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// strictHeaders answers 400 to a POST without MCP-Protocol-Version, as a
// 2026-07-28 server may (the header is required on every request there,
// the first included), and records the MCP headers of each POST.
type strictHeaders struct {
	mu   sync.Mutex
	seen []http.Header
}

func (s *strictHeaders) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			s.mu.Lock()
			s.seen = append(s.seen, r.Header.Clone())
			s.mu.Unlock()
			if r.Header.Get("Mcp-Protocol-Version") == "" {
				http.Error(w, "Missing MCP-Protocol-Version header", http.StatusBadRequest)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// A go-sdk server of revision 2026-07-28 on the stateless transport, behind
// the proxy: a host of revision 2025-11-25 (initialize) and one of
// 2026-07-28 (server/discover, per-request metadata) both list and call
// tools. Every request carries MCP-Protocol-Version, initialize included,
// and 2026-07-28 requests carry Mcp-Method (and Mcp-Name for a tool call).
func TestStatelessServerBehindProxy(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			strict := &strictHeaders{}
			srv := httptest.NewServer(strict.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
				&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})))
			defer srv.Close()
			p := start(t, Config{URL: srv.URL + "/mcp", Auth: &staticAuth{tok: "t1"}})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated %s", got)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 1 {
				t.Fatalf("tools/list: %v %v", tools, err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi " + version}})
			if err != nil || res.Content[0].(*mcp.TextContent).Text != "hi "+version {
				t.Fatalf("tools/call: %v %v", res, err)
			}
			strict.mu.Lock()
			defer strict.mu.Unlock()
			calls := 0
			for _, h := range strict.seen {
				if h.Get("Mcp-Protocol-Version") != version {
					t.Errorf("a POST with MCP-Protocol-Version %q", h.Get("Mcp-Protocol-Version"))
				}
				if version >= "2026-07-28" && h.Get("Mcp-Method") == "" {
					t.Errorf("a 2026-07-28 POST without Mcp-Method: %v", h)
				}
				if h.Get("Mcp-Method") == "tools/call" {
					calls++
					if h.Get("Mcp-Name") != "echo" {
						t.Errorf("tools/call with Mcp-Name %q", h.Get("Mcp-Name"))
					}
				}
			}
			if version >= "2026-07-28" && calls != 1 {
				t.Errorf("%d tools/call POSTs named by Mcp-Method", calls)
			}
			if !strings.Contains(strict.seen[0].Get("Authorization"), "t1") {
				t.Error("the first POST had no credential")
			}
		})
	}
}

// A host that negotiated 2026-07-28 through initialize sends requests
// without per-request metadata: the negotiated revision goes in the header,
// with the standard headers that name the request; what the SDK set stays.
func TestStampHeadersFromNegotiatedVersion(t *testing.T) {
	g := &guardTransport{version: "2026-07-28"}
	post := func(body string, hdr ...string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:1/mcp", strings.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		return g.stampHeaders(r)
	}
	r := post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if r.Header.Get("Mcp-Protocol-Version") != "2026-07-28" || r.Header.Get("Mcp-Method") != "tools/call" || r.Header.Get("Mcp-Name") != "echo" {
		t.Errorf("tools/call: %v", r.Header)
	}
	r = post(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"file:///a"}}`, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read")
	if r.Header.Get("Mcp-Name") != "" {
		t.Errorf("headers the SDK set were changed: %v", r.Header)
	}
	g.version = "2025-11-25"
	r = post(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	if r.Header.Get("Mcp-Protocol-Version") != "2025-11-25" || r.Header.Get("Mcp-Method") != "" {
		t.Errorf("2025-11-25: %v", r.Header)
	}
	r = post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	if r.Header.Get("Mcp-Protocol-Version") != "2025-06-18" {
		t.Errorf("initialize: %v", r.Header)
	}
}
