package flows_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// A protected resource metadata document at the root well-known location
// may name the origin or a path prefix of the MCP URL; any other resource
// is refused. (A path-inserted document must name the MCP URL itself: the existing
// TestDiscoverValidation cases.)
func TestDiscoverRootResource(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, mcpPath, resource string
		rootOnly, ok            bool
	}{
		{"origin", "/mcp", "", true, true},
		{"origin with slash", "/mcp", "/", true, true},
		{"path prefix", "/tenant/a/mcp", "/tenant", true, true},
		{"path prefix with slash", "/tenant/a/mcp", "/tenant/", true, true},
		{"not a segment prefix", "/tenant/a/mcp", "/ten", true, false},
		{"sibling path", "/tenant/a/mcp", "/other", true, false},
		{"longer than the MCP URL", "/mcp", "/mcp/x", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := flowstest.NewServer(t)
			s.RootPRMOnly = c.rootOnly
			s.PRMResource = s.URL + c.resource
			d, err := flows.Discover(ctx, flows.DiscoverConfig{}, s.URL+c.mcpPath)
			if c.ok {
				if err != nil || d.Resource != s.URL+c.resource || d.Issuer != s.URL {
					t.Fatalf("got %+v, %v", d, err)
				}
				return
			}
			if !errors.Is(err, flows.ErrResourceMismatch) {
				t.Fatalf("err %v, want ErrResourceMismatch", err)
			}
		})
	}
	t.Run("foreign origin", func(t *testing.T) {
		s := flowstest.NewServer(t)
		s.RootPRMOnly = true
		s.PRMResource = "https://other.example/"
		if _, err := flows.Discover(ctx, flows.DiscoverConfig{}, s.URL+"/mcp"); !errors.Is(err, flows.ErrResourceMismatch) {
			t.Fatalf("err %v, want ErrResourceMismatch", err)
		}
	})
}

// MCP 2025-03-26 servers: no protected resource metadata, so the
// authorization server metadata at the origin root; without that either,
// the default endpoints with a warning, but only for a server that asked
// for authorization.
func TestDiscover20250326(t *testing.T) {
	ctx := context.Background()
	t.Run("metadata at the origin root", func(t *testing.T) {
		s := flowstest.NewServer(t)
		s.Legacy = true
		d, err := flows.Discover(ctx, flows.DiscoverConfig{}, s.URL+"/mcp")
		if err != nil || !d.Legacy || d.AuthServer.TokenEndpoint != s.URL+"/oauth/token" || len(d.Warnings) != 0 {
			t.Fatalf("got %+v, %v", d, err)
		}
	})
	t.Run("default endpoints", func(t *testing.T) {
		s := flowstest.NewServer(t)
		s.Legacy, s.NoASMetadata = true, true
		d, err := flows.Discover(ctx, flows.DiscoverConfig{}, s.URL+"/mcp")
		if err != nil {
			t.Fatal(err)
		}
		md := d.AuthServer
		if d.Issuer != s.URL || md.AuthorizationEndpoint != s.URL+"/authorize" || md.TokenEndpoint != s.URL+"/token" ||
			md.RegistrationEndpoint != s.URL+"/register" || len(d.Warnings) != 1 {
			t.Fatalf("got %+v", d)
		}
	})
	t.Run("issuer mismatch is not papered over by defaults", func(t *testing.T) {
		s := flowstest.NewServer(t)
		s.Legacy, s.IssuerOverride = true, "https://other.example"
		if _, err := flows.Discover(ctx, flows.DiscoverConfig{}, s.URL+"/mcp"); !errors.Is(err, flows.ErrIssuerMismatch) {
			t.Fatalf("err %v, want ErrIssuerMismatch", err)
		}
	})
}

func TestResourceCovers(t *testing.T) {
	for _, c := range []struct {
		r, m string
		want bool
	}{
		{"https://a.example/mcp", "https://a.example/mcp", true},
		{"https://A.example:443", "https://a.example/mcp", true},
		{"https://a.example/x", "https://a.example/x/mcp", true},
		{"https://a.example/x", "https://a.example/xy/mcp", false},
		{"http://a.example", "https://a.example/mcp", false},
		{"https://b.example", "https://a.example/mcp", false},
		{"https://a.example/?q=1", "https://a.example/mcp", false},
	} {
		if got := flows.ResourceCovers(c.r, c.m); got != c.want {
			t.Errorf("ResourceCovers(%q, %q) = %v", c.r, c.m, got)
		}
	}
}
