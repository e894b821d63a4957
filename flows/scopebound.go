package flows

import (
	"fmt"
	"strings"
)

// MaxScopeLength bounds the scope of an authorization request, in
// characters. The scope rides in the authorization URL, and URLs are capped
// along the way: RFC 9110 §4.1 asks senders and recipients only for 8,000
// octets of request line, and common front ends (nginx, Apache) stop near
// 8 KiB. Even if every character needed percent-encoding (three octets),
// 2,048 of them take 6,144, leaving room for the rest of the URL (endpoint,
// client_id, redirect_uri, state, PKCE challenge, resource). Real scopes
// are a few dozen characters; a longer one is a server's mistake or attack
// (a 20,000-token step-up scope made a 129,223-character URL).
const MaxScopeLength = 2048

// CheckScopeLength returns an ErrScopeTooLong error when scope exceeds
// MaxScopeLength.
func CheckScopeLength(scope string) error {
	if n := len(scope); n > MaxScopeLength {
		return fmt.Errorf("%w: %d characters (%s), more than the %d mcpauth sends", ErrScopeTooLong, n, AbbrevScope(scope), MaxScopeLength)
	}
	return nil
}

// AbbrevScope shortens a scope for a message: a server's scope may be
// thousands of tokens long.
func AbbrevScope(scope string) string {
	const keep = 100
	if len(scope) <= keep+20 {
		return fmt.Sprintf("%q", scope)
	}
	head := scope[:keep]
	if i := strings.LastIndexByte(head, ' '); i > 0 {
		head = head[:i]
	}
	return fmt.Sprintf("%q… (%d scopes, %d characters)", head, len(strings.Fields(scope)), len(scope))
}

// StepUpScope returns the scope a step-up asks for: granted plus required,
// the scope a 403 insufficient_scope named (SEP-2350: the union, so
// nothing granted is lost). Required comes from the resource and is not to
// be trusted for size: when the union exceeds MaxScopeLength and the
// resource's or its authorization server's metadata lists
// scopes_supported, the required tokens neither lists are left out and
// returned as dropped, as what the server offers is preferred to what a
// resource demands. It fails when nothing required is left, or when the
// result still exceeds MaxScopeLength.
func StepUpScope(granted, required string, disc *Discovery) (scope string, dropped []string, err error) {
	scope = UnionScopes(granted, required)
	if CheckScopeLength(scope) == nil {
		return scope, nil, nil
	}
	supported := map[string]bool{}
	if disc.ResourceMetadata != nil {
		for _, s := range disc.ResourceMetadata.ScopesSupported {
			supported[s] = true
		}
	}
	if disc.AuthServer != nil {
		for _, s := range disc.AuthServer.ScopesSupported {
			supported[s] = true
		}
	}
	want := strings.Fields(required)
	if len(supported) > 0 {
		var kept []string
		for _, tok := range want {
			if supported[tok] {
				kept = append(kept, tok)
			} else {
				dropped = append(dropped, tok)
			}
		}
		if len(kept) == 0 && len(want) > 0 {
			return "", dropped, fmt.Errorf("the server asks for scope %s, none of which it or its authorization server lists in scopes_supported", AbbrevScope(required))
		}
		want = kept
	}
	scope = UnionScopes(granted, strings.Join(want, " "))
	if err := CheckScopeLength(scope); err != nil {
		return "", dropped, err
	}
	return scope, dropped, nil
}
