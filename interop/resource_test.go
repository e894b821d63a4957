package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// resourceServer is the small MCP server in front of each authorization
// server of the lab: it publishes protected resource metadata (RFC 9728)
// naming that AS, accepts only JWT access tokens signed by a key of the
// AS's JWKS, issued by it, for audience and not expired, and has one tool,
// whoami, that answers the token's subject.
type resourceServer struct {
	MCPURL string
}

// resourceConfig says whose tokens the resource server accepts.
type resourceConfig struct {
	Issuer   string // the AS's issuer, named in the metadata and checked as iss
	JWKSURL  string
	Audience string // the aud a token must carry
	Scopes   []string
}

// startResourceServer serves on ln (its MCP endpoint is <ln>/mcp) until
// the test ends.
func startResourceServer(t *testing.T, ln net.Listener, cfg resourceConfig) *resourceServer {
	t.Helper()
	base := urlOf(ln)
	rs := &resourceServer{MCPURL: base + "/mcp"}
	keys := oidc.NewRemoteKeySet(context.Background(), cfg.JWKSURL)

	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpauth-interop-resource", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "the subject of the access token"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, whoami, error) {
			info := req.Extra.TokenInfo
			if info == nil {
				return nil, whoami{}, fmt.Errorf("no token")
			}
			return nil, whoami{Subject: info.UserID}, nil
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	metadataURL := base + "/.well-known/oauth-protected-resource/mcp"
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		info, err := verifyJWT(ctx, keys, cfg, token)
		if err != nil {
			t.Logf("resource server: refused a token: %v", err)
		}
		return info, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metadataURL})(mcpHandler))
	// At the path-suffixed well-known URL (RFC 9728 §3.1) and, for clients
	// that look only there, at the origin's.
	prm := auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               rs.MCPURL,
		AuthorizationServers:   []string{cfg.Issuer},
		ScopesSupported:        cfg.Scopes,
		BearerMethodsSupported: []string{"header"},
	})
	mux.Handle("/.well-known/oauth-protected-resource/mcp", prm)
	mux.Handle("/.well-known/oauth-protected-resource", prm)
	hs := httptest.NewUnstartedServer(mux)
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	return rs
}

type whoami struct {
	Subject string `json:"sub"`
}

// verifyJWT checks the signature against the JWKS, then iss, aud and exp.
func verifyJWT(ctx context.Context, keys *oidc.RemoteKeySet, cfg resourceConfig, token string) (*auth.TokenInfo, error) {
	payload, err := keys.VerifySignature(ctx, token)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	var c struct {
		Iss   string          `json:"iss"`
		Sub   string          `json:"sub"`
		Aud   json.RawMessage `json:"aud"`
		Exp   int64           `json:"exp"`
		Scope string          `json:"scope"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, fmt.Errorf("%w: claims: %v", auth.ErrInvalidToken, err)
	}
	var aud []string
	if json.Unmarshal(c.Aud, &aud) != nil {
		var one string
		_ = json.Unmarshal(c.Aud, &one)
		aud = []string{one}
	}
	switch {
	case c.Iss != cfg.Issuer:
		return nil, fmt.Errorf("%w: iss %q, want %q", auth.ErrInvalidToken, c.Iss, cfg.Issuer)
	case !slices.Contains(aud, cfg.Audience):
		return nil, fmt.Errorf("%w: aud %q lacks %q", auth.ErrInvalidToken, aud, cfg.Audience)
	case c.Exp == 0:
		return nil, fmt.Errorf("%w: no exp", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{Scopes: strings.Fields(c.Scope), Expiration: time.Unix(c.Exp, 0), UserID: c.Sub}, nil
}
