package flows

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 7235 §2.1).
// Scheme keeps the server's spelling; parameter names are lower-cased (they
// are case-insensitive) and quoted values are unescaped.
type Challenge struct {
	Scheme  string
	Token68 string
	Params  map[string]string
}

// ResourceError is a 401 or 403 from a protected resource, with its Bearer
// challenge (RFC 6750 §3). It matches ErrUnauthorized (401) or
// ErrInsufficientScope (403 error="insufficient_scope").
type ResourceError struct {
	StatusCode int
	Challenge  Challenge // Bearer, else DPoP (RFC 9449 §7.1); zero when neither was sent
	// Schemes are the authentication schemes the answer's challenges
	// offer (Bearer, DPoP, …), as sent.
	Schemes []string
}

// NewResourceError reads a 401 or 403 answer's challenges.
func NewResourceError(resp *http.Response) *ResourceError {
	ch, _ := oauthwire.ResourceChallenge(resp.Header)
	return &ResourceError{StatusCode: resp.StatusCode, Challenge: Challenge(ch), Schemes: oauthwire.ChallengeSchemes(resp.Header)}
}

// RefusesDPoP reports a 401 whose challenges offer no DPoP scheme: a
// resource that takes only Bearer tokens (RFC 9449 §7.1 has DPoP
// resources say DPoP), so a DPoP-bound token will never do there.
func (e *ResourceError) RefusesDPoP() bool {
	if e.StatusCode != http.StatusUnauthorized || len(e.Schemes) == 0 {
		return false
	}
	for _, s := range e.Schemes {
		if strings.EqualFold(s, TokenTypeDPoP) {
			return false
		}
	}
	return true
}

// InvalidToken reports a 401 whose challenge says invalid_token (RFC 6750
// §3.1), or names no error (or there is none): a renewed token may do.
// Other 401s (invalid_request, a nonce asked for) a new token does not fix.
func (e *ResourceError) InvalidToken() bool {
	if e.StatusCode != http.StatusUnauthorized {
		return false
	}
	code := e.Challenge.Params["error"]
	return code == "" || code == "invalid_token"
}

func (e *ResourceError) Error() string {
	msg := fmt.Sprintf("HTTP %d", e.StatusCode)
	if c := e.Challenge.Params["error"]; c != "" {
		msg += ": " + c
	}
	if d := e.Challenge.Params["error_description"]; d != "" {
		msg += ": " + d
	}
	return msg
}

// Is matches ErrUnauthorized and ErrInsufficientScope.
func (e *ResourceError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrInsufficientScope:
		return e.StatusCode == http.StatusForbidden && e.Challenge.Params["error"] == "insufficient_scope"
	}
	return false
}
