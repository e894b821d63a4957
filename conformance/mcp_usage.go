package conformance

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// The mcp profile's checks of how the MCP endpoint takes tokens, and of the
// transport's headers.

const (
	srcTransport = "MCP transports §Streamable HTTP"
	// latestMCP is the revision whose routing headers (SEP-2243) the
	// transport checks look for.
	latestMCP = "2026-07-28"
)

// mcpToolsList sends tools/list with tok and the given headers.
func (e *Env) mcpToolsList(ctx context.Context, s *mcpSite, tok string, kv ...string) (*Response, error) {
	h := headers(append([]string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream",
		"Authorization", "Bearer " + tok}, kv...)...)
	// The version in _meta too: from latestMCP on, requests stand alone.
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + latestMCP +
		`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpauth-conformance","version":"0"}}}}`
	return e.Do(ctx, http.MethodPost, s.mcpURL, h, []byte(body))
}

// speaksLatest returns a token when the server serves tools/list at
// latestMCP with its routing headers, and skips the check otherwise.
func (e *Env) speaksLatest(ctx context.Context, s *mcpSite) (string, error) {
	tok, err := e.mcpAccessToken(ctx, s)
	if err != nil {
		return "", err
	}
	r, err := e.mcpToolsList(ctx, s, tok, "MCP-Protocol-Version", latestMCP, "Mcp-Method", "tools/list")
	if err != nil {
		return "", err
	}
	if r.Status != 200 {
		return "", Skip("the server does not serve MCP " + latestMCP + " requests without a session (" + r.Snippet() + ")")
	}
	return tok, nil
}

func mcpUsageChecks() []Check {
	approval := []Need{NeedApproval}
	const srcHeaders = srcTransport + " " + latestMCP + " (SEP-2243 routing headers: MUST validate, 400 on mismatch)"
	return []Check{
		mcpTokenCheck("MCP-07", areaTokenUsage, "the code flow with PKCE and resource gives a token the MCP endpoint accepts",
			srcMCPAuth+" §Access token usage; RFC 8707 §2", Must, func(ctx context.Context, e *Env, s *mcpSite, tok string) error {
				return e.mcpWantServed(ctx, s, "Bearer "+tok, "initialize with the token: want HTTP 200")
			}),
		mcpTokenCheck("MCP-13", areaTokenUsage, "a token is accepted only in the Authorization header, not in the query string",
			srcMCPAuth+" §Access token usage; RFC 6750 §2.3", Must, func(ctx context.Context, e *Env, s *mcpSite, tok string) error {
				sep := "?"
				if strings.Contains(s.mcpURL, "?") {
					sep = "&"
				}
				m, err := e.Do(ctx, http.MethodPost, s.mcpURL+sep+"access_token="+url.QueryEscape(tok),
					headers("Content-Type", "application/json", "Accept", "application/json, text/event-stream"), mcpInitialize)
				if err != nil {
					return err
				}
				return wantStatus(m, 401)
			}),
		mcpTokenCheck("MCP-73", areaTokenUsage, "a token in a form-encoded body is not accepted (only the Authorization header is)",
			srcTokenUse+" (MUST use the Authorization header); RFC 6750 §2.2", Must, func(ctx context.Context, e *Env, s *mcpSite, tok string) error {
				r, err := e.Do(ctx, http.MethodPost, s.mcpURL, headers("Content-Type", "application/x-www-form-urlencoded",
					"Accept", "application/json, text/event-stream"), []byte(url.Values{"access_token": {tok}}.Encode()))
				if err != nil {
					return err
				}
				return wantStatus(r, 401)
			}),
		mcpTokenCheck("MCP-74", areaTransport, "with a valid token, initialize is answered as application/json or text/event-stream",
			srcTransport+" (sending messages to the server)", Must, func(ctx context.Context, e *Env, s *mcpSite, tok string) error {
				r, err := e.postMCPAt(ctx, s.mcpURL, "Bearer "+tok)
				if err != nil {
					return err
				}
				if ct := r.ContentType(); r.Status != 200 || (ct != "application/json" && ct != "text/event-stream") {
					return Fail("want HTTP 200 as application/json or text/event-stream, got %s (%q)", r.Snippet(), r.Header.Get("Content-Type"))
				}
				return nil
			}),
		mcpTokenCheck("MCP-75", areaTransport, "an unsupported MCP-Protocol-Version gets 400 Bad Request",
			srcTransport+" §Protocol version header (2025-06-18 on: MUST respond 400)", Must, func(ctx context.Context, e *Env, s *mcpSite, tok string) error {
				r, err := e.mcpToolsList(ctx, s, tok, "MCP-Protocol-Version", "1999-01-01", "Mcp-Method", "tools/list")
				if err != nil {
					return err
				}
				return wantStatus(r, 400)
			}),
		mcpCheck("MCP-76", areaTransport, "at "+latestMCP+", an Mcp-Method header that does not match the body's method gets 400",
			srcHeaders, Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				tok, err := e.speaksLatest(ctx, s)
				if err != nil {
					return err
				}
				r, err := e.mcpToolsList(ctx, s, tok, "MCP-Protocol-Version", latestMCP, "Mcp-Method", "prompts/list")
				if err != nil {
					return err
				}
				if r.Status != 400 {
					return Fail("want HTTP 400 for Mcp-Method: prompts/list on a tools/list body, got %s", r.Snippet())
				}
				return nil
			}),
		mcpCheck("MCP-77", areaTransport, "at "+latestMCP+", a request without the Mcp-Method header gets 400",
			srcHeaders, Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				tok, err := e.speaksLatest(ctx, s)
				if err != nil {
					return err
				}
				r, err := e.mcpToolsList(ctx, s, tok, "MCP-Protocol-Version", latestMCP)
				if err != nil {
					return err
				}
				if r.Status != 400 {
					return Fail("want HTTP 400 without Mcp-Method, got %s", strings.TrimSpace(r.Snippet()))
				}
				return nil
			}),
	}
}
