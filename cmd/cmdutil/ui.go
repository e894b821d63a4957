package cmdutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/secretflag"
	"github.com/mcpauth/mcpauth/keyring"
)

// UI writes human messages to stderr, styled only when colour is on, and
// not at all with --quiet (warnings and errors still show).
type UI struct {
	f                         *Factory
	info, ok, warn, bad, code lipgloss.Style
	box, faint                lipgloss.Style
}

// NewUI returns the UI for f's streams and flags.
func NewUI(f *Factory) *UI {
	r := lipgloss.NewRenderer(f.IO.ErrOut)
	if !f.IO.Color {
		r.SetColorProfile(termenv.Ascii)
	}
	return &UI{
		f:     f,
		info:  r.NewStyle(),
		ok:    r.NewStyle().Foreground(lipgloss.Color("2")).Bold(true),
		warn:  r.NewStyle().Foreground(lipgloss.Color("3")).Bold(true),
		bad:   r.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		code:  r.NewStyle().Bold(true),
		box:   r.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 2),
		faint: r.NewStyle().Foreground(lipgloss.Color("6")),
	}
}

func (u *UI) Info(format string, args ...any) {
	if !u.f.Globals.Quiet {
		fmt.Fprintln(u.f.IO.ErrOut, u.info.Render(fmt.Sprintf(format, args...)))
	}
}

func (u *UI) Success(format string, args ...any) {
	if !u.f.Globals.Quiet {
		fmt.Fprintln(u.f.IO.ErrOut, u.ok.Render("✓ ")+fmt.Sprintf(format, args...))
	}
}

func (u *UI) Warn(format string, args ...any) {
	fmt.Fprintln(u.f.IO.ErrOut, u.warn.Render("! ")+fmt.Sprintf(format, args...))
}

// Unsafe prints a red warning that is never silenced: the user turned off
// a protection.
func (u *UI) Unsafe(format string, args ...any) {
	fmt.Fprintln(u.f.IO.ErrOut, u.bad.Render("UNSAFE: "+fmt.Sprintf(format, args...)))
}

// Faint styles transient status text (the device countdown).
func (u *UI) Faint(s string) string { return u.faint.Render(s) }

// Box renders lines in a rounded box (the device code).
func (u *UI) Box(title string, lines ...string) string {
	body := u.code.Render(title)
	if len(lines) > 0 {
		body += "\n\n" + strings.Join(lines, "\n")
	}
	return u.box.Render(body)
}

// FlowError attaches the documented exit code to an error from flows.
func FlowError(doing string, err error) error {
	return FlowErrorRetry(doing, "", err)
}

// FlowErrorRetry is FlowError for a flow the user may simply run again
// (retry is that command): a denied or expired attempt says so.
func FlowErrorRetry(doing, retry string, err error) error {
	if err == nil {
		return nil
	}
	code := CodeFor(err)
	again := ""
	if retry != "" {
		again = "; run: " + retry + " to try again"
	}
	switch {
	case errors.Is(err, flows.ErrAccessDenied):
		return WithExit(code, fmt.Errorf("%s: access was denied%s", doing, again))
	case errors.Is(err, flows.ErrExpiredToken), errors.Is(err, flows.ErrDeviceCodeExpired):
		if again == "" {
			again = "; start again"
		}
		return WithExit(code, fmt.Errorf("%s: the code expired before it was approved%s", doing, again))
	}
	return WithExit(code, withNextStep(fmt.Errorf("%s: %w", doing, err), false))
}

// CodeFor is the documented exit code for an error that carries none: the
// flows sentinels, network failures and keyring failures; else ExitFailure.
func CodeFor(err error) int {
	var ee *ExitError
	var netErr net.Error
	switch {
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, secretflag.ErrUsage):
		return ExitUsage
	case errors.Is(err, creds.ErrAuthRequired):
		return ExitAuthRequired
	case errors.Is(err, creds.ErrStorage):
		return ExitStorage
	case errors.Is(err, creds.ErrInput), errors.As(err, new(*creds.AmbiguousError)):
		return ExitUsage
	case errors.Is(err, creds.ErrRefresh):
		return ExitNetwork
	case errors.Is(err, flows.ErrCrossOrigin):
		return ExitNetwork // the server's answer was not its own
	case errors.Is(err, context.Canceled):
		return ExitCancelled
	case errors.Is(err, flows.ErrAccessDenied), errors.Is(err, flows.ErrInsufficientScope):
		return ExitDenied
	case errors.Is(err, flows.ErrExpiredToken), errors.Is(err, flows.ErrDeviceCodeExpired), errors.Is(err, flows.ErrTimeout):
		return ExitExpired
	case errors.Is(err, flows.ErrUnauthorized):
		return ExitAuthRequired
	case errors.Is(err, keyring.ErrKeyringUnavailable), errors.Is(err, keyring.ErrLocked):
		return ExitStorage
	case errors.As(err, &netErr):
		return ExitNetwork
	}
	return ExitFailure
}

// WriteJSON writes v as indented JSON (data goes to stdout).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
