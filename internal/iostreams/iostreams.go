// Package iostreams is a command's standard streams, decided once: which
// are terminals, whether to color, how wide the terminal is (as gh's
// pkg/iostreams). Commands get them injected, so every command runs in
// tests without a terminal.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"github.com/charmbracelet/x/term"
	"github.com/mattn/go-isatty"
)

// IOStreams are a command's standard streams. Human output goes to ErrOut;
// data (tokens, JSON) goes to Out, so scripts can pipe stdout.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	StdinTTY, StdoutTTY, StderrTTY bool
	// Color is decided once: a terminal, and NO_COLOR unset.
	Color bool
	// Width is stdout's width in columns, COLUMNS first; 0 when unknown.
	Width int
}

// System returns the process's streams.
func System(getenv func(string) string) *IOStreams {
	tty := func(f *os.File) bool { return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()) }
	s := &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdinTTY: tty(os.Stdin), StdoutTTY: tty(os.Stdout), StderrTTY: tty(os.Stderr),
	}
	s.Color = s.StderrTTY && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
	s.Width = Columns(getenv)
	if s.Width == 0 && s.StdoutTTY {
		if w, _, err := term.GetSize(os.Stdout.Fd()); err == nil && w > 0 {
			s.Width = w
		}
	}
	return s
}

// Columns is the COLUMNS override of the terminal width, or 0.
func Columns(getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// TerminalWidth is how wide tables may be: Width when known, 80 on a
// terminal that did not say, and 0 (unlimited) for a pipe, so scripts
// get whole URLs.
func (s *IOStreams) TerminalWidth() int {
	switch {
	case s.Width > 0:
		return s.Width
	case s.StdoutTTY:
		return 80
	}
	return 0
}

// Test returns streams backed by buffers, with no terminal and no color.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// CanPrompt reports whether a person can answer questions.
func (s *IOStreams) CanPrompt() bool { return s.StdinTTY && s.StderrTTY }
