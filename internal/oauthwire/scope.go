package oauthwire

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrScopeTooLong: the scope to ask for exceeds MaxScopeLength (flows
// returns it as flows.ErrScopeTooLong).
var ErrScopeTooLong = errors.New("scope too long for an authorization request")

// MachineScope is the scope a machine grant (client credentials, JWT
// bearer) asks for when none was given: the discovered scope without
// offline_access, since such grants get no refresh token (RFC 6749
// §4.4.3), and an authorization server may refuse the scope for them.
func MachineScope(discovered string) string {
	var kept []string
	for _, tok := range strings.Fields(discovered) {
		if tok != "offline_access" {
			kept = append(kept, tok)
		}
	}
	return strings.Join(kept, " ")
}

// UnionScopes returns the space-separated union of the scope strings, in
// first-seen order, without duplicates or empty tokens.
func UnionScopes(scopes ...string) string {
	var out []string
	seen := map[string]bool{} // a server's scope may have thousands of tokens
	for _, s := range scopes {
		for _, tok := range strings.Fields(s) {
			if !seen[tok] {
				seen[tok] = true
				out = append(out, tok)
			}
		}
	}
	return strings.Join(out, " ")
}

// ScopeCovers reports whether granted contains every token of want.
func ScopeCovers(granted, want string) bool {
	have := strings.Fields(granted)
	for _, tok := range strings.Fields(want) {
		if !slices.Contains(have, tok) {
			return false
		}
	}
	return true
}

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
