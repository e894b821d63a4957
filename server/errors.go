package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// OAuth error codes (RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 8628 §3.5,
// RFC 8707 §2).
const (
	errInvalidRequest          = "invalid_request"
	errInvalidClient           = "invalid_client"
	errInvalidGrant            = "invalid_grant"
	errUnauthorizedClient      = "unauthorized_client"
	errUnsupportedGrantType    = "unsupported_grant_type"
	errUnsupportedResponseType = "unsupported_response_type"
	errInvalidScope            = "invalid_scope"
	errAccessDenied            = "access_denied"
	errServerError             = "server_error"
	errTemporarilyUnavailable  = "temporarily_unavailable"
	errAuthorizationPending    = "authorization_pending"
	errSlowDown                = "slow_down"
	errExpiredToken            = "expired_token"
	errInvalidRedirectURI      = "invalid_redirect_uri"
	errInvalidClientMetadata   = "invalid_client_metadata"
	errInvalidTarget           = "invalid_target"
	errInvalidToken            = "invalid_token"
	errRateLimited             = "rate_limited"
)

// oauthError is the one error type the handlers return to clients. It is
// rendered in exactly one place (writeOAuthError), so every error response
// has the same shape, content type and cache headers.
type oauthError struct {
	Code        string
	Description string
	Status      int
	RetryAfter  time.Duration // for 429: sent as Retry-After
}

func (e *oauthError) Error() string { return e.Code + ": " + e.Description }

// Constructors return fresh values so no shared error is ever mutated.
func newError(status int, code, format string, args ...any) *oauthError {
	text := format // no formatting without arguments: the frequent answers (authorization_pending) are constants
	if len(args) > 0 {
		text = fmt.Sprintf(format, args...)
	}
	return &oauthError{Code: code, Description: errorText(text), Status: status}
}

// errorText keeps a description within the characters RFC 6749 §5.2 allows
// (%x20-21 / %x23-5B / %x5D-7E), since descriptions may quote client input:
// a double quote becomes an apostrophe, a backslash a slash, anything else
// outside the set a question mark.
func errorText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '"':
			return '\''
		case r == '\\':
			return '/'
		case r < 0x20 || r > 0x7e:
			return '?'
		}
		return r
	}, s)
}

func invalidRequest(format string, args ...any) *oauthError {
	return newError(http.StatusBadRequest, errInvalidRequest, format, args...)
}

func invalidGrant(format string, args ...any) *oauthError {
	return newError(http.StatusBadRequest, errInvalidGrant, format, args...)
}

// invalidClient is 401 (decisions.md, RFC 6749 §5.2).
func invalidClient(format string, args ...any) *oauthError {
	return newError(http.StatusUnauthorized, errInvalidClient, format, args...)
}

func rateLimited(retryAfter time.Duration) *oauthError {
	e := newError(http.StatusTooManyRequests, errRateLimited, "too many requests; retry later")
	e.RetryAfter = retryAfter
	return e
}

// writeOAuthError renders e as an RFC 6749 §5.2 JSON error body.
func writeOAuthError(w http.ResponseWriter, e *oauthError) {
	h := w.Header()
	setJSONHeaders(h)
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds(e.RetryAfter)))
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(oauthErrorBody(e))
}

// oauthErrorBody is the JSON body of e, as encoding/json writes it, but
// appended: device-flow polls, answered with an error every few seconds by
// design, spent a tenth of their time on encoding/json's reflection.
func oauthErrorBody(e *oauthError) []byte {
	b := make([]byte, 0, len(`{"error":"","error_description":""}`)+len(e.Code)+len(e.Description)+1)
	b = appendMember(b, `{"error":`, e.Code)
	if e.Description != "" {
		b = appendMember(b, `,"error_description":`, e.Description)
	}
	return append(b, "}\n"...)
}

// writeJSON writes v with status and the no-store headers every OAuth
// response carries (RFC 6749 §5.1).
func writeJSON(w http.ResponseWriter, status int, v any) {
	setJSONHeaders(w.Header())
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// The header values every JSON response carries, shared: each slice has
// len == cap, so appending to one (Header.Add) copies instead of writing
// into the shared array, and net/http only reads them.
var (
	jsonContentType = []string{"application/json"}
	noStore         = []string{"no-store"}
	noCache         = []string{"no-cache"}
)

// setJSONHeaders is three Header.Set calls without their three allocations.
func setJSONHeaders(h http.Header) {
	h["Content-Type"] = jsonContentType[:1:1]
	h["Cache-Control"] = noStore[:1:1]
	h["Pragma"] = noCache[:1:1]
}

func retryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}
