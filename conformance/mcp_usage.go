package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
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

// speaksLatest returns a token when the server negotiates latestMCP, and
// skips the check otherwise: a server of an earlier revision owes nothing
// to latestMCP's headers, and one that serves any request whatever its
// headers say fails MCP-75, not these checks as well.
func (e *Env) speaksLatest(ctx context.Context, s *mcpSite) (string, error) {
	tok, err := e.mcpAccessToken(ctx, s)
	if err != nil {
		return "", err
	}
	v, seen, err := e.negotiatedVersion(ctx, s, tok)
	if err != nil {
		return "", err
	}
	if v != latestMCP {
		return "", Skip("the server does not speak MCP " + latestMCP + ": " + seen)
	}
	return tok, nil
}

// negotiatedVersion is the protocol version the server agrees to, as
// latestMCP negotiates it (server/discover's supportedVersions), else as
// earlier revisions do (the protocolVersion initialize answers); seen says
// where it came from.
func (e *Env) negotiatedVersion(ctx context.Context, s *mcpSite, tok string) (version, seen string, err error) {
	discover := `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + latestMCP +
		`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpauth-conformance","version":"0"}}}}`
	r, err := e.Do(ctx, http.MethodPost, s.mcpURL, headers("Content-Type", "application/json", "Accept", "application/json, text/event-stream",
		"Authorization", "Bearer "+tok, "MCP-Protocol-Version", latestMCP, "Mcp-Method", "server/discover"), []byte(discover))
	if err != nil {
		return "", "", err
	}
	var found struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if rpcResult(r, &found) == nil && slices.Contains(found.SupportedVersions, latestMCP) {
		return latestMCP, "", nil
	}
	init := bytes.Replace(mcpInitialize, []byte(`"2025-11-25"`), []byte(`"`+latestMCP+`"`), 1)
	if r, err = e.Do(ctx, http.MethodPost, s.mcpURL, headers("Content-Type", "application/json", "Accept", "application/json, text/event-stream",
		"Authorization", "Bearer "+tok), init); err != nil {
		return "", "", err
	}
	var answered struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := rpcResult(r, &answered); err != nil {
		return "", fmt.Sprintf("server/discover does not list it, and initialize asking for it was not answered with a version (%v)", err), nil
	}
	return answered.ProtocolVersion, fmt.Sprintf("server/discover does not list it, and initialize asking for it was answered with protocolVersion %q", answered.ProtocolVersion), nil
}

// rpcResult decodes the result of the JSON-RPC response r carries, as
// JSON or as the first event of an event stream.
func rpcResult(r *Response, v any) error {
	if r.Status != http.StatusOK {
		return fmt.Errorf("HTTP %d", r.Status)
	}
	body := r.Body
	if r.ContentType() == "text/event-stream" {
		body = nil
		for _, line := range strings.Split(string(r.Body), "\n") {
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:"); ok {
				body = []byte(strings.TrimSpace(data))
				break
			}
		}
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || len(msg.Result) == 0 {
		return fmt.Errorf("no JSON-RPC result: %s", r.Snippet())
	}
	return json.Unmarshal(msg.Result, v)
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
