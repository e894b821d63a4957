package flows

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
)

// describeAnswer says in words what a URL that gave no Bearer challenge
// answered, so a user who gave a web page's or an API's URL learns what
// they reached instead of an MCP endpoint.
func describeAnswer(resp *http.Response, body []byte) string {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	trimmed := bytes.TrimSpace(body)
	lower := bytes.ToLower(trimmed[:min(len(trimmed), 15)])
	var obj map[string]json.RawMessage
	switch {
	case ct == "text/html" || bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html")):
		return "an HTML page"
	case ct == "text/event-stream":
		return "an MCP event stream without asking for authorization"
	case len(trimmed) == 0:
		return "an empty body"
	case json.Unmarshal(trimmed, &obj) == nil && obj["jsonrpc"] != nil && obj["result"] != nil:
		return "an MCP response without asking for authorization"
	case json.Valid(trimmed):
		return "JSON that is not MCP"
	case ct != "":
		return "a " + ct + " body"
	}
	return "a body of unknown type"
}
