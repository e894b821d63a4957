package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The Go MCP SDK's OAuth client (auth.AuthorizationCodeHandler on a
// StreamableClientTransport, the go-sdk version in go.mod) against the
// reference server: dynamic registration or a client metadata document,
// the browser step (its AuthorizationCodeFetcher) done by the test as
// alice, then tools/list and whoami.
func labGoSDKClient(t *testing.T, g *grid) {
	srv := newServeEnv(t)
	r := g.row("Go MCP SDK client (`auth`)", moduleVersion(t, "github.com/modelcontextprotocol/go-sdk"))
	const redirect = "http://127.0.0.1:9/callback" // the fetcher carries the code
	var browsed atomic.Int64
	handler := func(t *testing.T, metadataURL string) *auth.AuthorizationCodeHandler {
		cfg := &auth.AuthorizationCodeHandlerConfig{
			RedirectURL:         redirect,
			RequestRefreshToken: true,
			AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
				browsed.Add(1)
				back, err := srv.env.Browser("alice").Consent(ctx, args.URL, "approve")
				if err != nil {
					return nil, fmt.Errorf("approving: %w", err)
				}
				q := back.Query()
				return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
			},
		}
		if metadataURL != "" {
			cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: metadataURL}
		} else {
			cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none",
				GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
				ClientName: "mcpauth interop lab (go-sdk)",
			}}
		}
		h, err := auth.NewAuthorizationCodeHandler(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	session := func(t *testing.T, h *auth.AuthorizationCodeHandler) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		client := mcp.NewClient(&mcp.Implementation{Name: "mcpauth-interop-go-sdk", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.env.URL + "/mcp", OAuthHandler: h}, nil)
		if err != nil {
			t.Fatalf("initialize: %v", err)
		}
		defer cs.Close()
		checkWhoami(t, ctx, cs, func() string { return "" })
	}
	var registered *auth.AuthorizationCodeHandler
	g.flow(t, r, "login (registration)", func(t *testing.T) outcome {
		registered = handler(t, "")
		session(t, registered)
		if browsed.Load() != 1 {
			t.Fatalf("%d browser authorizations, want 1", browsed.Load())
		}
		return pass("")
	})
	g.flow(t, r, "tools", func(t *testing.T) outcome {
		session(t, registered)
		if browsed.Load() != 1 {
			t.Fatalf("a second session went back to the browser")
		}
		return pass("")
	})
	g.flow(t, r, "refresh", func(t *testing.T) outcome {
		srv.env.Clock.Advance(25 * time.Hour)
		before, refreshes := browsed.Load(), srv.refreshes.Load()
		session(t, registered)
		if srv.refreshes.Load() > refreshes {
			return pass("")
		}
		if browsed.Load() == before {
			t.Fatalf("after the clock moved: no refresh grant and no new authorization, yet the call passed")
		}
		return known("the SDK refreshes on its own clock only (`oauth2.ReuseTokenSource` against `expires_in`); a token the server refuses before then (401 `invalid_token`, RFC 6750 §3.1) sends it back to the browser, though it holds a refresh token. The SDK's behaviour, not the server's")
	})
	g.flow(t, r, "login (metadata document)", func(t *testing.T) outcome {
		doc := srv.metadataDocument(t, redirect)
		before := browsed.Load()
		session(t, handler(t, doc))
		if browsed.Load() != before+1 {
			t.Fatalf("no browser authorization with the metadata document")
		}
		return pass("")
	})
	g.flow(t, r, "device", func(t *testing.T) outcome { return na("the `auth` package has no device flow") })
}

// moduleVersion is the version go.mod requires of module path.
func moduleVersion(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	t.Fatalf("go.mod requires no %s", path)
	return ""
}
