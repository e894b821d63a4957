package mcpproxy

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// headerTransport adds the extra headers to every request.
type headerTransport struct {
	next    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 {
		return t.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		r.Header[k] = v
	}
	return t.next.RoundTrip(r)
}

// credentialed is next with the credential (flows.Transport), when there
// is one. A renewal that fails is logged, and the refusal goes to the host.
func credentialed(next http.RoundTripper, origin flows.Origin, cfg Config) http.RoundTripper {
	if cfg.Auth == nil {
		return next
	}
	return &flows.Transport{Base: next, Origin: origin, Source: cfg.Auth, OnRenewError: func(r flows.Refusal, err error) {
		if r.Why == flows.RenewScope {
			cfg.Log("the server needs more scope and logging in for it failed: %v", err)
			return
		}
		cfg.Log("the server refused the token and renewing it failed: %v", err)
	}}
}

// insufficientScope returns the scope a 403 insufficient_scope challenge
// asks for, or "".
func insufficientScope(h http.Header) string {
	for _, c := range oauthwire.ParseChallenges(h) {
		if c.Params["error"] == "insufficient_scope" {
			return strings.TrimSpace(c.Params["scope"])
		}
	}
	return ""
}

// guardTransport stands between the SDK's Streamable HTTP client connection
// and the server. The SDK treats an answer it cannot read (an HTML error
// page, a 500 without a JSON-RPC body, a broken JSON body) as the end of the
// whole connection; a proxy must instead answer that one request with a
// JSON-RPC error and carry on. It also sends MCP-Protocol-Version after an
// initialize the SDK did not see (see Proxy.noteResponse).
type guardTransport struct {
	next     http.RoundTripper
	max      int64
	url      string
	authHint func(*http.Response) string
	// scopeHint says how to get scope (see Config.ScopeHint).
	scopeHint func(scope string) string
	log       func(string, ...any)

	mu      sync.Mutex
	version string // negotiated by an initialize the host sent
	session string // the first Mcp-Session-Id the server gave
}

func (t *guardTransport) sessionID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.session
}

type probeKey struct{}

// probe records the status of the first POST in auto mode, which is passed
// on unchanged so that a 4xx can send the proxy to the legacy SSE transport.
type probe struct{ status int }

func (t *guardTransport) setVersion(v string) {
	t.mu.Lock()
	t.version = v
	t.mu.Unlock()
}

func (t *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost {
		req = t.stampHeaders(req)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		return resp, err
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.mu.Lock()
		if t.session == "" {
			t.session = id
		}
		t.mu.Unlock()
	}
	if p, ok := req.Context().Value(probeKey{}).(*probe); ok {
		p.status = resp.StatusCode
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != 401 && resp.StatusCode != 403 {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			if m, err := jsonrpc.DecodeMessage(body); err != nil || !isErrorResponse(m) {
				return resp, nil // not a Streamable HTTP endpoint: the caller tries SSE
			}
		}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		return resp, nil
	case resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "":
		return resp, nil // the session is gone: the SDK ends the connection, and so does the proxy
	case resp.StatusCode/100 == 2 && ct == "text/event-stream":
		return resp, nil
	}
	// The answer is read here: a JSON-RPC message goes on as 200 JSON,
	// anything else becomes a JSON-RPC error for the request.
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, t.max+1))
	resp.Body.Close()
	status := resp.StatusCode
	var reason string
	switch {
	case rerr != nil:
		reason = fmt.Sprintf("reading the answer (HTTP %d): %v", status, rerr)
	case int64(len(body)) > t.max:
		reason = fmt.Sprintf("the answer (HTTP %d) is larger than %d bytes", status, t.max)
	default:
		m, derr := jsonrpc.DecodeMessage(body)
		if derr == nil && (status/100 == 2 && ct == "application/json" || isErrorResponse(m)) {
			if status/100 != 2 {
				t.log("%s answered HTTP %d with a JSON-RPC error; passed to the host", t.url, status)
			}
			return jsonResponse(req, resp.Header.Get("Mcp-Session-Id"), body), nil
		}
		reason = fmt.Sprintf("the server answered HTTP %d (%s), not a JSON-RPC message: %q", status, orNone(ct), snippet(bytes.TrimSpace(body)))
		if status == http.StatusUnauthorized {
			reason = fmt.Sprintf("the server refused the credential (HTTP 401%s)", challengeError(resp.Header))
			if t.authHint != nil {
				reason += t.authHint(resp)
			}
		} else if status == http.StatusForbidden {
			reason = fmt.Sprintf("the server refused access (HTTP 403%s)", challengeError(resp.Header))
			if scope := insufficientScope(resp.Header); scope != "" {
				reason = fmt.Sprintf("the server needs scope %s for this (HTTP 403 insufficient_scope)", oauthwire.AbbrevScope(scope))
				if t.scopeHint != nil {
					reason += t.scopeHint(scope)
				}
			}
		}
	}
	id := requestID(req)
	t.log("%s: %s", t.url, reason)
	if !id.IsValid() {
		// A notification or a response: nothing to answer.
		return &http.Response{StatusCode: http.StatusAccepted, Status: "202 Accepted", Header: http.Header{},
			Body: http.NoBody, Request: req, ProtoMajor: 1, ProtoMinor: 1}, nil
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpauth proxy: " + reason}})
	if err != nil {
		return nil, err
	}
	return jsonResponse(req, "", data), nil
}

func isErrorResponse(m jsonrpc.Message) bool {
	r, ok := m.(*jsonrpc.Response)
	return ok && r.Error != nil
}

func jsonResponse(req *http.Request, session string, body []byte) *http.Response {
	h := http.Header{"Content-Type": {"application/json"}}
	if session != "" {
		h.Set("Mcp-Session-Id", session)
	}
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: h, ProtoMajor: 1, ProtoMinor: 1,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req}
}

func requestID(req *http.Request) jsonrpc.ID {
	if req.GetBody == nil {
		return jsonrpc.ID{}
	}
	b, err := req.GetBody()
	if err != nil {
		return jsonrpc.ID{}
	}
	data, _ := io.ReadAll(b)
	m, err := jsonrpc.DecodeMessage(data)
	if r, ok := m.(*jsonrpc.Request); err == nil && ok {
		return r.ID
	}
	return jsonrpc.ID{}
}

func challengeError(h http.Header) string {
	v := h.Get("WWW-Authenticate")
	if i := strings.Index(v, "error="); i >= 0 {
		e := strings.Trim(strings.SplitN(v[i+len("error="):], ",", 2)[0], `" `)
		return " " + e
	}
	return ""
}

func orNone(ct string) string {
	if ct == "" {
		return "no Content-Type"
	}
	return ct
}
