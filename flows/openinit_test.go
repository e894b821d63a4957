package flows_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
)

// Servers whose first request says nothing about scope: one that leaves
// initialize open and protects what follows it, and a 2026-07-28 server
// that refuses initialize (400) and challenges server/discover. Discovery
// asks the protected method, the way the server speaks, and the login asks
// for the challenge's scope rather than the metadata's scopes_supported.
func TestDiscoverLearnsScopeBehindOpenFirstRequest(t *testing.T) {
	// answer answers what is open, and reports whether it did; the rest
	// gets the challenge.
	for name, answer := range map[string]func(w http.ResponseWriter, method, version, meta string) bool{
		"initialize open": func(w http.ResponseWriter, method, version, _ string) bool {
			if method != "initialize" {
				return false
			}
			w.Header().Set("Mcp-Session-Id", "s1")
			writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"protocolVersion": version}})
			return true
		},
		"2026-07-28 stateless": func(w http.ResponseWriter, method, version, meta string) bool {
			if method != "initialize" && meta == "2026-07-28" && version == "2026-07-28" {
				return false
			}
			http.Error(w, "missing _meta", http.StatusBadRequest)
			return true
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv, mux := newServer(t)
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var m struct {
					Method string `json:"method"`
					Params struct {
						Meta map[string]any `json:"_meta"`
					} `json:"params"`
				}
				_ = json.Unmarshal(body, &m)
				meta, _ := m.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string)
				if answer(w, m.Method, r.Header.Get("MCP-Protocol-Version"), meta) {
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp", scope="mcp:basic"`)
				w.WriteHeader(http.StatusUnauthorized)
			})
			mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
				doc := prmDoc(srv.URL+"/mcp", srv.URL)
				doc["scopes_supported"] = []string{"mcp:profile", "mcp:basic"}
				writeJSON(w, 200, doc)
			})
			mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, asMeta(srv.URL, srv.URL))
			})
			d, err := flows.Discover(context.Background(), flows.DiscoverConfig{}, srv.URL+"/mcp")
			if err != nil {
				t.Fatal(err)
			}
			if d.ChallengeScope != "mcp:basic" || !strings.Contains(d.Scope, "mcp:basic") || strings.Contains(d.Scope, "mcp:profile") {
				t.Fatalf("challenge scope %q, scope %q; probes %+v", d.ChallengeScope, d.Scope, d.Probes)
			}
		})
	}
}
