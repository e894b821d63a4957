package flows

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// DefaultMaxStepUps bounds the re-authorizations one command makes for a
// resource that keeps answering insufficient_scope.
const DefaultMaxStepUps = 2

// StepUpError ends a step-up that did not satisfy the resource: after
// Attempts re-authorizations it still answered 403 insufficient_scope. It
// matches ErrInsufficientScope.
type StepUpError struct {
	Attempts int
	Asked    string // the scope of the last authorization request
	Granted  string // the scope the authorization server granted
	Refused  string // what the resource still requires and was not granted (or, when all was granted, what it required)
}

func (e *StepUpError) Error() string {
	return fmt.Sprintf("the server still answers insufficient_scope after %d re-authorization(s): asked for %q, granted %q, still required %q",
		e.Attempts, e.Asked, e.Granted, e.Refused)
}

// Is matches ErrInsufficientScope.
func (e *StepUpError) Is(target error) bool { return target == ErrInsufficientScope }

// RequiredScope returns the scope a 403 insufficient_scope challenge asks
// for (RFC 6750 §3.1, SEP-2350); ok is false for any other error or a
// challenge without a scope.
func RequiredScope(err error) (string, bool) {
	var re *ResourceError
	if !errors.As(err, &re) || !errors.Is(re, ErrInsufficientScope) {
		return "", false
	}
	s := strings.TrimSpace(re.Challenge.Params["scope"])
	return s, s != ""
}

// StepUpConfig configures StepUp.
type StepUpConfig struct {
	// Max is the most re-authorizations; 0 means DefaultMaxStepUps.
	Max int
	// Granted is the scope of the current token.
	Granted string
	// Call uses the current token against the resource.
	Call func(ctx context.Context) error
	// Authorize obtains a new token for scope (a new authorization, which
	// the caller stores so the next Call uses it) and returns the scope
	// granted: the token response's scope, or scope itself when the
	// response had none (RFC 6749 §5.1).
	Authorize func(ctx context.Context, scope string) (granted string, err error)
}

// StepUp runs Call; when it fails with a 403 insufficient_scope naming a
// scope, StepUp re-authorizes for the union of the granted and required
// scopes (SEP-2350) and calls again, at most Max times. Other errors, and
// insufficient_scope without a scope, come back as they are.
func StepUp(ctx context.Context, cfg StepUpConfig) error {
	maxN := cfg.Max
	if maxN <= 0 {
		maxN = DefaultMaxStepUps
	}
	granted, asked := cfg.Granted, ""
	for attempt := 0; ; attempt++ {
		err := cfg.Call(ctx)
		required, ok := RequiredScope(err)
		if !ok {
			return err
		}
		if attempt == maxN {
			return NewStepUpError(attempt, asked, granted, required)
		}
		asked = oauthwire.UnionScopes(granted, required)
		g, aerr := cfg.Authorize(ctx, asked)
		if aerr != nil {
			return fmt.Errorf("re-authorizing for scope %q: %w", asked, aerr)
		}
		if g == "" {
			g = asked
		}
		granted = g
	}
}

// NewStepUpError is the end of a step-up after attempts re-authorizations,
// the last for asked, that granted what the resource, still requiring
// required, does not take.
func NewStepUpError(attempts int, asked, granted, required string) *StepUpError {
	refused := missing(granted, required)
	if refused == "" {
		refused = required
	}
	return &StepUpError{Attempts: attempts, Asked: asked, Granted: granted, Refused: refused}
}

// missing returns the tokens of want that granted lacks.
func missing(granted, want string) string {
	var out []string
	for _, tok := range strings.Fields(want) {
		if !oauthwire.ScopeCovers(granted, tok) {
			out = append(out, tok)
		}
	}
	return strings.Join(out, " ")
}
