package oauthwire

import "testing"

func TestUnionScopes(t *testing.T) {
	if got := UnionScopes("a b", "", "b  c", "a"); got != "a b c" {
		t.Errorf("UnionScopes = %q", got)
	}
	if !ScopeCovers("a b c", "c a") || ScopeCovers("a", "a b") {
		t.Error("ScopeCovers")
	}
}
