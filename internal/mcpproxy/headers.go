package mcpproxy

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The MCP headers the proxy adds to what the SDK's client connection sends,
// which knows only what a ClientSession would have told it, and a proxy has
// none: MCP-Protocol-Version on every request, the first included (a
// 2026-07-28 server requires it there too), and from 2026-07-28 on the
// standard headers that name the request (Mcp-Method, Mcp-Name), so the
// server and anything in front of it can route without reading the body.

const (
	headerVersion = "Mcp-Protocol-Version"
	headerMethod  = "Mcp-Method"
	headerName    = "Mcp-Name"
	// standardHeadersFrom is the first revision with Mcp-Method and Mcp-Name.
	standardHeadersFrom = "2026-07-28"
	// metaProtocolVersion carries a 2026-07-28 request's revision (SEP-2575).
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
)

// stampHeaders returns req with the MCP headers it lacks. The revision is
// the one the request names (an initialize's protocolVersion, a 2026-07-28
// request's _meta), else the one an initialize negotiated.
func (t *guardTransport) stampHeaders(req *http.Request) *http.Request {
	version := req.Header.Get(headerVersion)
	needVersion := version == ""
	if !needVersion && (version < standardHeadersFrom || req.Header.Get(headerMethod) != "") {
		return req // the SDK set what there is to set: no need to read the body
	}
	msg := peekRequest(req)
	if needVersion {
		version = requestVersion(msg)
	}
	if version == "" {
		t.mu.Lock()
		version = t.version
		t.mu.Unlock()
	}
	method, name := "", ""
	if msg != nil && version >= standardHeadersFrom && req.Header.Get(headerMethod) == "" {
		method, name = msg.Method, requestName(msg)
	}
	if (!needVersion || version == "") && method == "" {
		return req
	}
	req = req.Clone(req.Context())
	if needVersion && version != "" {
		req.Header.Set(headerVersion, version)
	}
	if method != "" {
		req.Header.Set(headerMethod, method)
		if name != "" {
			req.Header.Set(headerName, name)
		}
	}
	return req
}

// peekRequest decodes the JSON-RPC request a POST carries, leaving the body
// to be sent; nil for anything else.
func peekRequest(req *http.Request) *jsonrpc.Request {
	if req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, DefaultMaxMessage+1))
	if err != nil {
		return nil
	}
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil
	}
	r, _ := m.(*jsonrpc.Request)
	return r
}

// requestVersion is the revision a request names, or "".
func requestVersion(r *jsonrpc.Request) string {
	if r == nil || len(r.Params) == 0 {
		return ""
	}
	var p struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Meta            map[string]any `json:"_meta"`
	}
	if json.Unmarshal(r.Params, &p) != nil {
		return ""
	}
	if r.Method == "initialize" && p.ProtocolVersion != "" {
		return p.ProtocolVersion
	}
	v, _ := p.Meta[metaProtocolVersion].(string)
	return v
}

// requestName is what Mcp-Name carries for the methods that name a target.
func requestName(r *jsonrpc.Request) string {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if len(r.Params) == 0 || json.Unmarshal(r.Params, &p) != nil {
		return ""
	}
	switch r.Method {
	case "tools/call", "prompts/get":
		return p.Name
	case "resources/read":
		return p.URI
	}
	return ""
}
