package loginflow

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

func TestBoundedStepUpScope(t *testing.T) {
	listed := &flows.Discovery{
		ResourceMetadata: &flows.ProtectedResourceMetadata{ScopesSupported: []string{"mcp", "files:read"}},
		AuthServer:       &flows.AuthServerMetadata{ScopesSupported: []string{"mcp", "files:write"}},
	}
	unlisted := &flows.Discovery{AuthServer: &flows.AuthServerMetadata{}} // legacy: no PRM
	long := strings.Repeat("x", oauthwire.MaxScopeLength)
	for _, tc := range []struct {
		name, granted, required string
		disc                    *flows.Discovery
		want, dropped, err      string
	}{
		{"within the bound all is kept (SEP-2350)", "mcp", "files:read files:write other", listed, "mcp files:read files:write other", "", ""},
		{"over it either list counts", "mcp", "files:read files:write " + long, listed, "mcp files:read files:write", long, ""},
		{"nothing listed keeps all", "mcp", "a b", unlisted, "mcp a b", "", ""},
		{"nothing left", "mcp", long + " other", listed, "", "", "none of which"},
		{"too long", "mcp", long, unlisted, "", "", "more than the 2048 mcpauth sends"},
		{"duplicates collapse", "mcp", strings.Repeat("mcp ", 10000), unlisted, "mcp", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, dropped, err := boundedStepUpScope(tc.granted, tc.required, tc.disc)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || len(err.Error()) > 300 {
					t.Fatalf("error %v, want one naming %q, short", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want || strings.Join(dropped, " ") != tc.dropped {
				t.Errorf("got %q, dropped %q, %v; want %q, dropped %q", got, dropped, err, tc.want, tc.dropped)
			}
		})
	}
	if err := oauthwire.CheckScopeLength(long + " y"); !errors.Is(err, oauthwire.ErrScopeTooLong) {
		t.Errorf("CheckScopeLength: %v", err)
	}
}
