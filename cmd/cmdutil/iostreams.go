// Package cmdutil holds what every command shares: IO streams, the Factory
// of lazily built dependencies, exit codes and output helpers.
package cmdutil

import (
	"bytes"
	"io"
	"os"

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
}

// System returns the process's streams.
func System(getenv func(string) string) *IOStreams {
	tty := func(f *os.File) bool { return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()) }
	s := &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdinTTY: tty(os.Stdin), StdoutTTY: tty(os.Stdout), StderrTTY: tty(os.Stderr),
	}
	s.Color = s.StderrTTY && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
	return s
}

// Test returns streams backed by buffers, with no terminal and no color.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// CanPrompt reports whether a person can answer questions.
func (s *IOStreams) CanPrompt() bool { return s.StdinTTY && s.StderrTTY }
