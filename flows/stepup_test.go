package flows_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

func insufficient(scope string) error {
	h := http.Header{}
	h.Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, scope))
	return fmt.Errorf("ping: %w", flows.NewResourceError(&http.Response{StatusCode: http.StatusForbidden, Header: h}))
}

// A resource that needs a scope the token lacks: one re-authorization for
// the union of the granted and required scopes, then success.
func TestStepUpUnion(t *testing.T) {
	var asked []string
	granted := "mcp"
	err := flows.StepUp(context.Background(), flows.StepUpConfig{
		Granted: granted,
		Call: func(context.Context) error {
			if !oauthwire.ScopeCovers(granted, "files:read") {
				return insufficient("files:read")
			}
			return nil
		},
		Authorize: func(_ context.Context, scope string) (string, error) {
			asked = append(asked, scope)
			granted = scope
			return scope, nil
		},
	})
	if err != nil || len(asked) != 1 || asked[0] != "mcp files:read" {
		t.Fatalf("err %v, asked %q", err, asked)
	}
}

// A resource that always wants more: at most two re-authorizations, then an
// error naming what was asked for and what was refused.
func TestStepUpBounded(t *testing.T) {
	calls, auths := 0, 0
	err := flows.StepUp(context.Background(), flows.StepUpConfig{
		Granted: "mcp",
		Call: func(context.Context) error {
			calls++
			return insufficient(fmt.Sprintf("s%d", calls))
		},
		Authorize: func(_ context.Context, scope string) (string, error) {
			auths++
			return "mcp", nil // the authorization server grants nothing more
		},
	})
	var se *flows.StepUpError
	if !errors.As(err, &se) || !errors.Is(err, flows.ErrInsufficientScope) {
		t.Fatalf("err %v", err)
	}
	if auths != 2 || calls != 3 {
		t.Errorf("%d authorizations, %d calls; want 2 and 3", auths, calls)
	}
	if se.Asked != "mcp s2" || se.Refused != "s3" || se.Granted != "mcp" {
		t.Errorf("error %+v", se)
	}
}

// Other errors, and insufficient_scope without a scope, are not stepped up.
func TestStepUpOnlyWithScope(t *testing.T) {
	for _, callErr := range []error{errors.New("boom"), insufficient(""), nil} {
		err := flows.StepUp(context.Background(), flows.StepUpConfig{
			Call:      func(context.Context) error { return callErr },
			Authorize: func(context.Context, string) (string, error) { t.Error("authorized"); return "", nil },
		})
		if !errors.Is(err, callErr) && err != callErr {
			t.Errorf("err %v, want %v", err, callErr)
		}
	}
}
