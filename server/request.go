package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mcpauth/mcpauth/server/store"
)

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

func jsonEncode(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

// clientAddr is the address rate limits charge a request to: its peer, or
// behind a trusted proxy the client the proxy names, worked out once by
// withRequestContext. Every limit reads it here, never RemoteAddr (which is
// only the fallback for a request that did not pass through it).
func clientAddr(r *http.Request) string {
	if st := stateFrom(r.Context()); st != nil {
		return st.client
	}
	return r.RemoteAddr
}

// clientAddrFrom is clientAddr for code below the handlers, which has only
// the request's context.
func clientAddrFrom(ctx context.Context) string {
	if st := stateFrom(ctx); st != nil {
		return st.client
	}
	return ""
}

func hostOf(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}

func mediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

func hasMediaType(r *http.Request, want string) bool { return mediaType(r) == want }

// bodyError turns a body read failure into the right client error: 413 for
// an oversized body, 400 otherwise.
func bodyError(err error) *oauthError {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return newError(http.StatusRequestEntityTooLarge, errInvalidRequest, "request body larger than %d bytes", maxBodyBytes)
	}
	return invalidRequest("could not read request body")
}

// decodeJSONBody decodes exactly one JSON value from the body into v.
func decodeJSONBody(r *http.Request, v any) *oauthError {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return bodyError(err)
	}
	if !utf8.Valid(body) {
		return invalidRequest("body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return invalidRequest("body is not valid JSON of the expected shape")
	}
	if dec.More() {
		return invalidRequest("body has trailing data after the JSON value")
	}
	return nil
}

// readClientParams reads a form a client posts to the token or revocation
// endpoint; a client_id sent as HTTP Basic counts as the form's
// (RFC 6749 §2.3.1; our clients are public, the secret is ignored).
func readClientParams(r *http.Request) (map[string]string, *oauthError) {
	p, oerr := readParams(r, false)
	if oerr != nil {
		return nil, oerr
	}
	if id, _, ok := r.BasicAuth(); ok && p["client_id"] == "" {
		p["client_id"] = id
	}
	return p, nil
}

// readParams reads a flat parameter set from a JSON object of strings or a
// form-encoded body (the device endpoints accept both, decisions.md). A
// parameter given twice is invalid_request (RFC 6749 §3.1), as is any other
// content type.
func readParams(r *http.Request, allowJSON bool) (map[string]string, *oauthError) {
	switch mt := mediaType(r); {
	case mt == "application/x-www-form-urlencoded":
		return readFormParams(r)
	case mt == "application/json" && allowJSON:
		var raw map[string]any
		if err := decodeJSONBody(r, &raw); err != nil {
			return nil, err
		}
		out := make(map[string]string, len(raw))
		for k, v := range raw {
			switch v := v.(type) {
			case string:
				out[k] = v
			case nil:
			default:
				return nil, invalidRequest("parameter %q must be a string", truncate(k, 40))
			}
		}
		return out, nil
	case allowJSON:
		return nil, invalidRequest("Content-Type must be application/json or application/x-www-form-urlencoded")
	default:
		return nil, invalidRequest("Content-Type must be application/x-www-form-urlencoded")
	}
}

func readFormParams(r *http.Request) (map[string]string, *oauthError) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, bodyError(err)
	}
	return parseFormParams(string(body))
}

// maxFormParams is url.ParseQuery's default limit on parameters.
const maxFormParams = 10000

// parseFormParams is url.ParseQuery followed by singleValues, in one pass
// into the map the handlers read (token requests are small and frequent):
// the same pairs, the same errors with the same precedence (FuzzParseFormParams).
func parseFormParams(body string) (map[string]string, *oauthError) {
	out := make(map[string]string, 8)
	// As url.ParseQuery: at most maxFormParams pairs.
	badEncoding := strings.Count(body, "&") >= maxFormParams
	if badEncoding {
		body = ""
	}
	repeated, hasRepeat := "", false
	for body != "" {
		var pair string
		pair, body, _ = strings.Cut(body, "&")
		if strings.Contains(pair, ";") {
			badEncoding = true // as url.ParseQuery: no semicolon separators
			continue
		}
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			badEncoding = true
			continue
		}
		if _, dup := out[k]; dup && !hasRepeat {
			repeated, hasRepeat = k, true
		}
		out[k] = v
	}
	switch {
	case badEncoding:
		return nil, invalidRequest("body is not valid form encoding")
	case hasRepeat:
		return nil, invalidRequest("parameter %q is repeated", truncate(repeated, 40))
	}
	for k, v := range out {
		if !utf8.ValidString(v) {
			return nil, invalidRequest("parameter %q is not valid UTF-8", truncate(k, 40))
		}
	}
	return out, nil
}

// singleValues flattens url.Values, refusing repeated parameters.
func singleValues(vals url.Values) (map[string]string, *oauthError) {
	out := make(map[string]string, len(vals))
	for k, v := range vals {
		if len(v) > 1 {
			return nil, invalidRequest("parameter %q is repeated", truncate(k, 40))
		}
		if !utf8.ValidString(v[0]) {
			return nil, invalidRequest("parameter %q is not valid UTF-8", truncate(k, 40))
		}
		out[k] = v[0]
	}
	return out, nil
}

// readFormBody parses a form body (browser pages), refusing other types.
func readFormBody(r *http.Request) (url.Values, *oauthError) {
	if !hasMediaType(r, "application/x-www-form-urlencoded") {
		return nil, invalidRequest("Content-Type must be application/x-www-form-urlencoded")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, bodyError(err)
	}
	vals, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, invalidRequest("body is not valid form encoding")
	}
	return vals, nil
}

func isAlreadyExists(err error) bool { return errors.Is(err, store.ErrAlreadyExists) }

var errCollisions = errors.New("random identifier collided repeatedly")
