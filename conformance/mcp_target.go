package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// NotMCPServerError is the one finding of an mcp profile run against a URL
// that is not an MCP server with authorization: nothing the checks could
// judge, so none runs.
type NotMCPServerError struct {
	URL    string
	Reason string
}

func (e *NotMCPServerError) Error() string {
	return fmt.Sprintf("%s: %s", e.URL, e.Reason)
}

// CheckMCPServer tells whether mcpURL is an MCP server whose authorization
// the mcp profile can check: its MCP endpoint answers a request without a
// token with a 401 Bearer challenge, or it publishes protected resource
// metadata (RFC 9728) at a location an MCP client tries. When it does
// neither, the error is a *NotMCPServerError saying what came instead; a
// transport failure comes back as is. hc nil: a default client.
func CheckMCPServer(ctx context.Context, hc *http.Client, mcpURL string) error {
	c := http.Client{Timeout: 30 * time.Second}
	if hc != nil {
		c = *hc
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	send := func(method, u string, body []byte, hdr ...string) (int, http.Header, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
		if err != nil {
			return 0, nil, nil, fmt.Errorf("building %s %s: %w", method, u, err)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		return resp.StatusCode, resp.Header, b, err
	}
	status, hdr, body, err := send(http.MethodPost, mcpURL, mcpInitialize,
		"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	if err != nil {
		return err
	}
	challenged := false
	metadata := []string{}
	for _, ch := range parseChallenges(hdr.Values("WWW-Authenticate")) {
		if strings.EqualFold(ch.Scheme, "Bearer") {
			challenged = status == http.StatusUnauthorized
			if u := ch.Params["resource_metadata"]; u != "" {
				metadata = append(metadata, u)
			}
		}
	}
	if challenged {
		return nil
	}
	pathInserted, root := prmURLs(mcpURL)
	for _, u := range append(metadata, pathInserted, root) {
		st, _, b, err := send(http.MethodGet, u, nil, "Accept", "application/json")
		var o map[string]json.RawMessage
		if err == nil && st == http.StatusOK && json.Unmarshal(b, &o) == nil && o["resource"] != nil {
			return nil
		}
	}
	answered := fmt.Sprintf("HTTP %d", status)
	if status == http.StatusOK && bytes.Contains(body, []byte(`"jsonrpc"`)) {
		return &NotMCPServerError{URL: mcpURL, Reason: "an MCP server without authorization: it answered initialize without a token (" + answered +
			") and publishes no protected resource metadata; --profile mcp has nothing to check"}
	}
	return &NotMCPServerError{URL: mcpURL, Reason: fmt.Sprintf("not an MCP server: no 401 challenge (initialize without a token got %s) "+
		"and no protected resource metadata at %s or %s; is this the MCP endpoint's URL?", answered, pathInserted, root)}
}
