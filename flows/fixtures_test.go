package flows_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
)

// fixture reads a shared example document from the module's testdata/,
// with {{base}} replaced by base.
func fixture(t *testing.T, name, base string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "metadata", name))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(string(b), "{{base}}", base))
}

// The example metadata documents in testdata/metadata, served over
// loopback as a server would, are discovered as what they say.
func TestDiscoverExampleMetadata(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/mcp":
			challenge401(`Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)(w, r)
			return
		case "/.well-known/oauth-protected-resource/mcp":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(fixture(t, "protected-resource.json", srv.URL))
		case "/.well-known/oauth-authorization-server":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(fixture(t, "authorization-server.json", srv.URL))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	d, err := flows.Discover(context.Background(), flows.DiscoverConfig{HTTPClient: srv.Client()}, srv.URL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	as := d.AuthServer
	switch {
	case d.Resource != srv.URL+"/mcp", d.Issuer != srv.URL, d.ResourceMetadata.ResourceName != "Example MCP server":
		t.Errorf("resource %q issuer %q prm %+v", d.Resource, d.Issuer, d.ResourceMetadata)
	case as.TokenEndpoint != srv.URL+"/oauth/token", !d.SupportsDeviceFlow(), !as.ClientIDMetadataDocumentSupported,
		!as.AuthorizationResponseIssParameterSupported:
		t.Errorf("authorization server %+v", as)
	case d.Scope != "mcp offline_access":
		t.Errorf("scope %q, want the PRM's mcp plus offline_access", d.Scope)
	}
}
