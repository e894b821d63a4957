package conformance

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Exchange is one HTTP request the suite sent for a check and the answer it
// got, with secrets redacted, so a report shows a server developer what
// their server answered. Requests the approver sends as the browser are not
// in it.
type Exchange struct {
	Method          string            `json:"method"`
	URL             string            `json:"url"`
	RequestHeaders  map[string]string `json:"request_headers,omitempty"`
	RequestBody     string            `json:"request_body,omitempty"`
	Status          int               `json:"status"`
	ResponseHeaders map[string]string `json:"response_headers,omitempty"`
	ResponseBody    string            `json:"response_body,omitempty"`
}

// A check's transcript is bounded: the first exchanges explain a verdict,
// and a report must stay readable.
const (
	maxExchanges    = 40
	maxBodyInReport = 4 << 10
)

// transcript collects a check's exchanges; checks may send from several
// goroutines at once.
type transcript struct {
	mu  sync.Mutex
	exs []Exchange
}

func (t *transcript) add(x Exchange) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.exs) < maxExchanges {
		t.exs = append(t.exs, x)
	}
}

func (t *transcript) list() []Exchange {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.exs)
}

// Secrets are redacted by name wherever they appear: headers, query and
// form parameters, JSON members.
var (
	secretHeaders = []string{"Authorization", "Cookie", "Set-Cookie", "Dpop", "Proxy-Authorization"}
	secretParams  = []string{"access_token", "refresh_token", "id_token", "code", "code_verifier", "client_secret",
		"password", "token", "assertion", "client_assertion", "subject_token", "device_code", "api_key"}
	// shownHeaders are the headers worth a reader's time; the rest is noise.
	shownHeaders = []string{"Accept", "Authorization", "Cache-Control", "Content-Type", "Cookie", "Location",
		"Mcp-Method", "Mcp-Protocol-Version", "Mcp-Session-Id", "Pragma", "Set-Cookie", "Www-Authenticate", "Dpop"}
	jwtLike = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)
	}) // compiled on first use, not at start-up
)

const redacted = "[redacted]"

// newExchange records req and its answer, redacted.
func newExchange(req *http.Request, reqBody []byte, resp *Response) Exchange {
	return Exchange{
		Method: req.Method, URL: redactURL(req.URL.String()),
		RequestHeaders: redactHeaders(req.Header), RequestBody: redactBody(req.Header.Get("Content-Type"), reqBody),
		Status: resp.Status, ResponseHeaders: redactHeaders(resp.Header), ResponseBody: redactBody(resp.Header.Get("Content-Type"), resp.Body),
	}
}

func redactHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for _, k := range shownHeaders {
		vs := h.Values(k)
		if len(vs) == 0 {
			continue
		}
		v := strings.Join(vs, ", ")
		switch {
		case slices.Contains(secretHeaders, k):
			// Keep the scheme: "Bearer" against "bearer" is a verdict.
			if scheme, _, ok := strings.Cut(v, " "); ok && (k == "Authorization" || k == "Proxy-Authorization") {
				v = scheme + " " + redacted
			} else {
				v = redacted
			}
		case k == "Location":
			v = redactURL(v)
		}
		out[k] = v
	}
	return out
}

// redactURL hides secret query parameters and fragments.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return jwtLike().ReplaceAllString(raw, redacted)
	}
	if u.RawQuery != "" {
		u.RawQuery = redactValues(u.Query())
	}
	if u.Fragment != "" {
		if f, err := url.ParseQuery(u.Fragment); err == nil {
			u.Fragment = redactValues(f)
		}
	}
	return u.String()
}

// redactValues encodes v with its secret parameters redacted; the marker
// stays readable rather than percent-encoded.
func redactValues(v url.Values) string {
	for _, k := range secretParams {
		if v.Has(k) {
			v.Set(k, redacted)
		}
	}
	return strings.ReplaceAll(v.Encode(), url.QueryEscape(redacted), redacted)
}

// redactBody hides secrets in a form or JSON body, and any JWT elsewhere;
// it keeps the first maxBodyInReport bytes.
func redactBody(contentType string, b []byte) string {
	if len(b) == 0 {
		return ""
	}
	s := string(b)
	switch {
	case strings.HasPrefix(contentType, "application/x-www-form-urlencoded"):
		if v, err := url.ParseQuery(s); err == nil {
			s = redactValues(v)
		}
	case strings.Contains(contentType, "json"):
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			for k := range m {
				if slices.Contains(secretParams, k) {
					m[k] = redacted
				}
			}
			if out, err := json.Marshal(m); err == nil {
				s = string(out)
			}
		}
	}
	s = jwtLike().ReplaceAllString(s, redacted)
	if len(s) > maxBodyInReport {
		s = s[:maxBodyInReport] + "… (cut)"
	}
	return s
}

// Text renders the exchange as curl -v does: "> " the request, "< " the
// answer.
func (x Exchange) Text() string {
	var b strings.Builder
	b.WriteString("> " + x.Method + " " + x.URL + "\n")
	writeHeaders(&b, "> ", x.RequestHeaders)
	if x.RequestBody != "" {
		b.WriteString("> " + x.RequestBody + "\n")
	}
	b.WriteString("< " + strconv.Itoa(x.Status) + " " + http.StatusText(x.Status) + "\n")
	writeHeaders(&b, "< ", x.ResponseHeaders)
	if x.ResponseBody != "" {
		b.WriteString("< " + strings.ReplaceAll(strings.TrimRight(x.ResponseBody, "\n"), "\n", "\n< ") + "\n")
	}
	return b.String()
}

func writeHeaders(b *strings.Builder, prefix string, h map[string]string) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(prefix + k + ": " + h[k] + "\n")
	}
}

// transcriptText renders exchanges one after another.
func transcriptText(exs []Exchange) string {
	parts := make([]string, len(exs))
	for i, x := range exs {
		parts[i] = x.Text()
	}
	return strings.Join(parts, "\n")
}
