package loginflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// Again is a login a command starts by itself (proxy --login, ping
// --step-up): before it begins, or again when the server asks for more
// scope or refuses a token nothing else renews. Its output goes to stderr
// and it never reads stdin: in a proxy both belong to the host, whose
// messages wait in the pipe meanwhile.
type Again struct {
	F      *cmdutil.Factory
	Server string
	// Log says what it does, one line each.
	Log func(format string, args ...any)
	// Note ends the line announcing a browser login, e.g. " first
	// (--login)".
	Note string
}

// LogIn logs in for granted plus required, the scope a resource asked
// for (both "" for the server's default; required is narrowed and bounded
// as boundedStepUpScope says): in the browser, as mcpauth login does, or,
// with no browser to open (over SSH, no display), with the device flow
// when the server offers it.
func (a Again) LogIn(ctx context.Context, granted, required string) error {
	lf := *a.F
	streams := *lf.IO
	streams.Out, streams.In, streams.StdinTTY = streams.ErrOut, strings.NewReader(""), false
	lf.IO = &streams
	what, scope := "logging in to "+a.Server, oauthwire.UnionScopes(granted, required)
	if required != "" {
		what = fmt.Sprintf("the server needs scope %s: logging in to %s again", oauthwire.AbbrevScope(scope), a.Server)
	}
	if _, headless := lf.Opener("", false, false); headless != "" {
		a.Log("%s with the device flow (no browser: %s)", what, headless)
		if err := oauthwire.CheckScopeLength(scope); required != "" && err != nil {
			return err
		}
		var phase clierr.Phase
		disc, tok, st, user, err := (&Device{F: &lf, Target: a.Server, Scope: scope}).Run(ctx, &phase)
		if !errors.Is(err, ErrNoDeviceFlow) {
			if err != nil {
				return clierr.Cancelled(ctx, "device login", &phase, err)
			}
			if err := lf.ReportLogin(disc, tok, st, user); err != nil {
				return err
			}
			a.Log("logged in")
			return nil
		}
		a.Log("the server offers no device flow: open the URL below in a browser (forward its port if the browser is elsewhere)")
	} else {
		a.Log("%s in the browser%s", what, a.Note)
	}
	var phase clierr.Phase
	_, tok, _, _, err := (&Browser{F: &lf, Target: a.Server, Scope: granted, StepUp: required, Timeout: flows.DefaultLoginTimeout}).Run(ctx, &phase)
	if err != nil {
		return clierr.Cancelled(ctx, "login", &phase, err)
	}
	a.Log("logged in (token expires %s)", tok.Expiry.Format(time.RFC3339))
	return nil
}
