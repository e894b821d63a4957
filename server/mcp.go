package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type whoamiInput struct{}

type whoamiOutput struct {
	UserID string `json:"user_id" jsonschema:"the id of the authenticated user"`
	Via    string `json:"via" jsonschema:"how the caller authenticated: jwt or api_key"`
	// Name is an extension: the display name, when the identity provider
	// gave one.
	Name string `json:"name,omitempty" jsonschema:"the user's display name, when known"`
}

// newMCPHandler builds the Streamable HTTP MCP server behind the bearer check.
// It is stateless (MCP 2026-07-28): no Mcp-Session-Id, every POST stands on
// its own, so any instance serves any request and no sticky routing is
// needed. 2025-11-25 clients still initialize and are answered in their
// version; their requests, too, need no session.
func (s *Server) newMCPHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpauth-reference", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "whoami",
		Description: "Returns the id of the user whose credential made this request.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, _ whoamiInput) (*mcp.CallToolResult, whoamiOutput, error) {
		ti := req.Extra.TokenInfo
		if ti == nil {
			return nil, whoamiOutput{}, errors.New("no authenticated user")
		}
		via, _ := ti.Extra["via"].(string)
		return nil, whoamiOutput{UserID: ti.UserID, Via: via, Name: s.userName(ctx, ti.UserID)}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true,
		Logger:    s.log,
	})
	// requireBearer has already authenticated the request (with the RFC 6750
	// challenge go-sdk does not give); this hands the result to the SDK so it
	// can expose the user to tools.
	fromContext := func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		p, ok := principalFrom(r.Context())
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.UserID, Scopes: []string{scopeMCP}, Extra: map[string]any{"via": p.Via}}, nil
	}
	return auth.RequireBearerToken(fromContext, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
}
