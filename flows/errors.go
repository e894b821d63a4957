package flows

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// Errors the CLI maps to exit codes. Test with errors.Is.
var (
	// ErrAccessDenied: the user or the server refused (error=access_denied),
	// at the device token endpoint or in the authorization callback.
	ErrAccessDenied = errors.New("access denied")
	// ErrExpiredToken: the server said expired_token (RFC 8628 §3.5).
	ErrExpiredToken = errors.New("server reports the code expired")
	// ErrInvalidClient: the server does not know or accept the client.
	ErrInvalidClient = errors.New("client rejected by the authorization server")
	// ErrDeviceCodeExpired: the device code's expires_in elapsed locally
	// before the user approved.
	ErrDeviceCodeExpired = errors.New("device code expired before approval")
	// ErrStateMismatch: a callback carried a missing or wrong state.
	ErrStateMismatch = errors.New("state mismatch in authorization response")
	// ErrIssuerMismatch: an issuer differs from the one expected (RFC 8414
	// §3.3 metadata issuer, or RFC 9207 iss in the authorization response).
	ErrIssuerMismatch = errors.New("issuer mismatch")
	// ErrResourceMismatch: the protected resource metadata names another
	// resource than the one asked for (RFC 9728 §3.3).
	ErrResourceMismatch = errors.New("protected resource metadata names a different resource")
	// ErrInsecureEndpoint: an endpoint is neither https nor loopback http.
	ErrInsecureEndpoint = oauthwire.ErrInsecureEndpoint
	// ErrS256Unsupported: the authorization server does not advertise PKCE
	// S256, which the MCP authorization spec requires.
	ErrS256Unsupported = errors.New("authorization server does not advertise PKCE S256")
	// ErrNoMetadata: discovery found no usable authorization server metadata.
	ErrNoMetadata = errors.New("no authorization server metadata found")
	// ErrNoClient: no client ID was given and the server offers neither
	// client ID metadata documents nor dynamic registration.
	ErrNoClient = errors.New("no client identity available")
	// ErrTimeout: the login did not complete within the timeout.
	ErrTimeout = errors.New("timed out waiting for the authorization response")
	// ErrUnauthorized: the resource answered 401 (credential missing,
	// invalid or expired). *ResourceError carries the challenge.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrInsufficientScope: the resource answered 403 insufficient_scope.
	ErrInsufficientScope = errors.New("insufficient scope")
	// ErrScopeTooLong: the scope to ask for is over 2,048 characters, more
	// than an authorization URL carries safely.
	ErrScopeTooLong = oauthwire.ErrScopeTooLong
	// ErrAuthorizationRefused: the authorization endpoint refused a request
	// a preflight showed it (AuthCodeConfig.Preflight).
	ErrAuthorizationRefused = errors.New("the authorization endpoint refused the request")
)

// ResourceMismatchError is ErrResourceMismatch with both URLs: the
// resource the metadata declared and the one asked for. A server reached
// by another spelling of its host (localhost for 127.0.0.1) declares its
// own, which is the URL to use instead.
type ResourceMismatchError struct {
	Declared, Expected string
}

func (e *ResourceMismatchError) Error() string {
	return fmt.Sprintf("resource %q, expected %q: %v", e.Declared, e.Expected, ErrResourceMismatch)
}

// Is makes errors.Is(err, ErrResourceMismatch) true.
func (e *ResourceMismatchError) Is(target error) bool { return target == ErrResourceMismatch }

// OAuthError is an RFC 6749 §5.2 error response (also RFC 7591 §3.2.2, RFC
// 8628 §3.5 and authorization responses, §4.1.2.1). A response without an
// error code (a 502 from a proxy, say) is an OAuthError with Code "" and the
// status and a body excerpt in Description.
type OAuthError struct {
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
	URI         string `json:"error_uri,omitempty"`
	StatusCode  int    `json:"-"` // 0 when the error came from a redirect
}

func (e *OAuthError) Error() string {
	var b strings.Builder
	if e.Code != "" {
		b.WriteString(e.Code)
	} else {
		b.WriteString("unexpected response")
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	if e.Description != "" {
		b.WriteString(": ")
		b.WriteString(e.Description)
	}
	return b.String()
}

// Is lets errors.Is match the sentinels that stand for well-known codes.
func (e *OAuthError) Is(target error) bool {
	switch target {
	case ErrAccessDenied:
		return e.Code == "access_denied"
	case ErrExpiredToken:
		return e.Code == "expired_token"
	case ErrInvalidClient:
		return e.Code == "invalid_client"
	}
	return false
}

// IsCode reports whether err wraps an *OAuthError with the given code.
func IsCode(err error, code string) bool {
	var oe *OAuthError
	return errors.As(err, &oe) && oe.Code == code
}

// ParseOAuthError reads an error response body, JSON or
// application/x-www-form-urlencoded (some servers, GitHub among them, answer in
// form encoding). It returns nil when the body carries no error code. resp may
// be nil.
func ParseOAuthError(resp *http.Response, body []byte) *OAuthError {
	e := &OAuthError{}
	if resp != nil {
		e.StatusCode = resp.StatusCode
	}
	ct := ""
	if resp != nil {
		ct, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	}
	if ct == "application/x-www-form-urlencoded" || ct == "text/plain" {
		if parseFormError(body, e) {
			return e
		}
	}
	// Decode loosely: a wrong-typed field must not hide the error code.
	var raw map[string]any
	if json.Unmarshal(body, &raw) == nil {
		e.Code, _ = raw["error"].(string)
		e.Description, _ = raw["error_description"].(string)
		e.URI, _ = raw["error_uri"].(string)
		if e.Code != "" {
			return e
		}
		return nil
	}
	if parseFormError(body, e) {
		return e
	}
	return nil
}

func parseFormError(body []byte, e *OAuthError) bool {
	v, err := url.ParseQuery(strings.TrimSpace(string(body)))
	if err != nil || v.Get("error") == "" {
		return false
	}
	e.Code, e.Description, e.URI = v.Get("error"), v.Get("error_description"), v.Get("error_uri")
	return true
}

// responseError turns a non-success response into an *OAuthError, inventing a
// code-less one when the body has none.
func responseError(resp *http.Response, body []byte) *OAuthError {
	if e := ParseOAuthError(resp, body); e != nil {
		return e
	}
	return &OAuthError{StatusCode: resp.StatusCode, Description: oauthwire.Excerpt(body)}
}
