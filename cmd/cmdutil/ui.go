package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// UI writes human messages to stderr, styled only when colour is on, and
// not at all with --quiet (warnings and errors still show). Every argument
// of a message goes through the printing rule (printableArgs): the format
// is the program's, the values may be a server's.
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
		fmt.Fprintln(u.f.IO.ErrOut, u.info.Render(u.sprintf(format, args)))
	}
}

func (u *UI) Success(format string, args ...any) {
	if !u.f.Globals.Quiet {
		fmt.Fprintln(u.f.IO.ErrOut, u.ok.Render("✓ ")+u.sprintf(format, args))
	}
}

func (u *UI) Warn(format string, args ...any) {
	fmt.Fprintln(u.f.IO.ErrOut, u.warn.Render("! ")+u.sprintf(format, args))
}

// Unsafe prints a red warning that is never silenced: the user turned off
// a protection.
func (u *UI) Unsafe(format string, args ...any) {
	fmt.Fprintln(u.f.IO.ErrOut, u.bad.Render("UNSAFE: "+u.sprintf(format, args)))
}

func (*UI) sprintf(format string, args []any) string {
	return fmt.Sprintf(format, printableArgs(args)...)
}

// Faint styles transient status text (the device countdown).
func (u *UI) Faint(s string) string { return u.faint.Render(s) }

// Box renders lines in a rounded box (the device code); the title and each
// line are one value each (Field), as they quote the server.
func (u *UI) Box(title string, lines ...string) string {
	body := u.code.Render(Field(title))
	if len(lines) > 0 {
		shown := make([]string, len(lines))
		for i, l := range lines {
			shown[i] = Field(l)
		}
		body += "\n\n" + strings.Join(shown, "\n")
	}
	return u.box.Render(body)
}

// WriteJSON writes v as indented JSON (data goes to stdout). Strings keep
// their whole value, escaped as JSON escapes (escapeJSON: C1 controls and
// bidi overrides too), so the document is safe on a terminal.
func WriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeJSON(b.Bytes()))
	return err
}
