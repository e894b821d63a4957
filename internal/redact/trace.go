// Package redact keeps secrets and terminal control out of what the CLI
// prints: Trace is the --debug HTTP trace with credentials, tokens, codes
// and secrets redacted, and the printing rule (printable.go) escapes
// control characters in, and bounds, text a server or a token chose.
package redact

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Trace returns a RoundTripper that writes every request and response
// through next to out, with every secret redacted: credentials in headers,
// and tokens, codes, verifiers and secrets in query strings and bodies
// (JSON or form). Server text is made Printable.
func Trace(next http.RoundTripper, out io.Writer) http.RoundTripper {
	return &trace{next: next, out: out}
}

type trace struct {
	next http.RoundTripper
	out  io.Writer
	mu   sync.Mutex
}

const debugBodyLimit = 4 << 10

func (d *trace) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			reqBody, _ = io.ReadAll(io.LimitReader(b, debugBodyLimit))
			b.Close()
		}
	}
	resp, err := d.next.RoundTrip(req)
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out, "> %s %s\n", req.Method, Printable(RedactURL(req.URL)))
	for k, vs := range req.Header {
		fmt.Fprintf(d.out, "> %s: %s\n", Printable(k), Printable(redactHeader(k, strings.Join(vs, ", "))))
	}
	if len(reqBody) > 0 {
		fmt.Fprintf(d.out, "> %s\n", Printable(RedactBody(string(reqBody))))
	}
	if err != nil {
		// A *url.Error repeats the URL, query and all.
		fmt.Fprintf(d.out, "< error: %s\n", Printable(RedactBody(err.Error())))
		return nil, err
	}
	fmt.Fprintf(d.out, "< %s\n", Printable(resp.Status))
	for k, vs := range resp.Header {
		fmt.Fprintf(d.out, "< %s: %s\n", Printable(k), Printable(redactHeader(k, strings.Join(vs, ", "))))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		// A stream may never end (the proxy's): reading it here would
		// hold every event back until it did.
		fmt.Fprintf(d.out, "< (event stream: not traced)\n")
		return resp, nil
	}
	body, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr == nil && len(body) > 0 {
		shown := body
		if len(shown) > debugBodyLimit {
			shown = shown[:debugBodyLimit]
		}
		fmt.Fprintf(d.out, "< %s\n", Printable(RedactBody(string(shown))))
	}
	return resp, rerr
}

// isSecretHeader reports a header whose value is a credential.
func isSecretHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Authorization", "Cookie", "Set-Cookie", "Proxy-Authorization", "Dpop":
		return true
	}
	return false
}

func redactHeader(name, value string) string {
	if isSecretHeader(name) {
		if scheme, _, ok := strings.Cut(value, " "); ok && name != "Cookie" && name != "Set-Cookie" {
			return scheme + " [REDACTED]"
		}
		return "[REDACTED]"
	}
	// Location and friends can carry ?code=... on a redirect.
	return RedactBody(value)
}

// traceParams are the parameter and member names whose values never reach
// a trace: the secrets, and what ties a trace to a user's session.
func traceParams() []string { return append(secretParams(), "user_code", "state", "nonce") }

// The redaction patterns are compiled on first use, not at start-up: every
// command paid for them (70 KB, a tenth of a millisecond) though only
// --debug traces use them.
var (
	jsonSecret = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`"(` + strings.Join(traceParams(), "|") + `)"\s*:\s*"(?:[^"\\]|\\.)*"`)
	})
	formSecret = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(^|[&?])(` + strings.Join(traceParams(), "|") + `)=[^&\s]*`)
	})
	bareSecret = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`mcpa_[0-9A-Za-z]+|eyJ[0-9A-Za-z_-]+\.[0-9A-Za-z_-]+\.[0-9A-Za-z_-]*`)
	})
)

// RedactBody hides secret values in a JSON or form body, and anything that
// looks like a JWT or an mcpauth API key wherever it appears.
func RedactBody(s string) string {
	s = jsonSecret().ReplaceAllString(s, `"$1":"[REDACTED]"`)
	s = formSecret().ReplaceAllString(s, `$1$2=[REDACTED]`)
	return bareSecret().ReplaceAllString(s, "[REDACTED]")
}

// RedactURL hides secret query parameters.
func RedactURL(u *url.URL) string {
	c := *u
	c.RawQuery = formSecret().ReplaceAllString(u.RawQuery, `$1$2=[REDACTED]`)
	return c.String()
}
