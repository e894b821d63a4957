package loginflow

import (
	"fmt"
	"strings"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// boundedStepUpScope returns the scope a step-up asks for: granted plus
// required, the scope a 403 insufficient_scope named (SEP-2350: the union, so
// nothing granted is lost). Required comes from the resource and is not to
// be trusted for size: when the union exceeds oauthwire.MaxScopeLength and the
// resource's or its authorization server's metadata lists
// scopes_supported, the required tokens neither lists are left out and
// returned as dropped, as what the server offers is preferred to what a
// resource demands. It fails when nothing required is left, or when the
// result still exceeds oauthwire.MaxScopeLength.
func boundedStepUpScope(granted, required string, disc *flows.Discovery) (scope string, dropped []string, err error) {
	scope = oauthwire.UnionScopes(granted, required)
	if oauthwire.CheckScopeLength(scope) == nil {
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
			return "", dropped, fmt.Errorf("the server asks for scope %s, none of which it or its authorization server lists in scopes_supported", oauthwire.AbbrevScope(required))
		}
		want = kept
	}
	scope = oauthwire.UnionScopes(granted, strings.Join(want, " "))
	if err := oauthwire.CheckScopeLength(scope); err != nil {
		return "", dropped, err
	}
	return scope, dropped, nil
}
