package conformance

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpauth/mcpauth/internal/redact"
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

// wireRecord is one request and its answer as sent and read. It becomes an
// Exchange, secrets masked, only when the check's verdict becomes report
// data: by then the run knows every secret the exchange carries.
type wireRecord struct {
	method, url string
	reqHeader   http.Header
	reqBody     []byte
	status      int
	respHeader  http.Header
	respBody    []byte
}

// keptBody bounds what a record keeps of a body: well over what a report
// shows, so that masking (which changes lengths) happens before the cut.
const keptBody = 64 << 10

func newRecord(req *http.Request, reqBody []byte, resp *Response) wireRecord {
	keep := func(b []byte) []byte { return bytes.Clone(b[:min(len(b), keptBody)]) }
	return wireRecord{method: req.Method, url: req.URL.String(), reqHeader: req.Header.Clone(), reqBody: keep(reqBody),
		status: resp.Status, respHeader: resp.Header.Clone(), respBody: keep(resp.Body)}
}

// transcript collects a check's exchanges; checks may send from several
// goroutines at once.
type transcript struct {
	mu   sync.Mutex
	recs []wireRecord
}

func (t *transcript) add(r wireRecord) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.recs) < maxExchanges {
		t.recs = append(t.recs, r)
	}
}

// exchanges are the check's records as report data, secrets masked.
func (t *transcript) exchanges(secrets *redact.Secrets) []Exchange {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Exchange, len(t.recs))
	for i, r := range t.recs {
		out[i] = Exchange{
			Method: r.method, URL: secrets.Mask(r.url),
			RequestHeaders: reportHeaders(r.reqHeader, secrets), RequestBody: reportBody(r.reqBody, secrets),
			Status: r.status, ResponseHeaders: reportHeaders(r.respHeader, secrets), ResponseBody: reportBody(r.respBody, secrets),
		}
	}
	return out
}

// remask masks in x the secrets the run learnt after x was built.
func (x *Exchange) remask(secrets *redact.Secrets) {
	x.URL, x.RequestBody, x.ResponseBody = secrets.Mask(x.URL), secrets.Mask(x.RequestBody), secrets.Mask(x.ResponseBody)
	for _, h := range []map[string]string{x.RequestHeaders, x.ResponseHeaders} {
		for k, v := range h {
			h[k] = secrets.Mask(v)
		}
	}
}

var (
	// Credential headers are masked whole, whatever the run knows: the
	// scheme of Authorization and the names and attributes of cookies
	// stay, since they can be what a verdict is about.
	secretHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "Dpop"}
	// shownHeaders are the headers worth a reader's time; the rest is noise.
	shownHeaders = []string{"Accept", "Authorization", "Cache-Control", "Content-Type", "Cookie", "Location",
		"Mcp-Method", "Mcp-Protocol-Version", "Mcp-Session-Id", "Pragma", "Set-Cookie", "Www-Authenticate", "Dpop"}
)

func reportHeaders(h http.Header, secrets *redact.Secrets) map[string]string {
	out := map[string]string{}
	for _, k := range shownHeaders {
		vs := slices.Clone(h.Values(k))
		if len(vs) == 0 {
			continue
		}
		if slices.Contains(secretHeaders, k) {
			for i, v := range vs {
				vs[i] = maskCredential(k, v)
			}
		}
		out[k] = secrets.Mask(strings.Join(vs, ", "))
	}
	return out
}

// maskCredential masks the credential in a value of header k.
func maskCredential(k, v string) string {
	switch k {
	case "Authorization", "Proxy-Authorization":
		if scheme, cred, ok := strings.Cut(v, " "); ok {
			return scheme + " " + redact.Redacted(cred)
		}
	case "Set-Cookie":
		pair, attrs, _ := strings.Cut(v, ";")
		if name, val, ok := strings.Cut(pair, "="); ok {
			return name + "=" + redact.Redacted(val) + strings.TrimSuffix(";"+attrs, ";")
		}
	case "Cookie":
		pairs := strings.Split(v, ";")
		for i, p := range pairs {
			if name, val, ok := strings.Cut(p, "="); ok {
				pairs[i] = name + "=" + redact.Redacted(val)
			}
		}
		return strings.Join(pairs, ";")
	}
	return redact.Redacted(v)
}

// reportBody is a body with its secrets masked whatever its type, cut to
// maxBodyInReport bytes.
func reportBody(b []byte, secrets *redact.Secrets) string {
	s := secrets.Mask(string(b))
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
