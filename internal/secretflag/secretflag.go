// Package secretflag is a flag for a secret that never needs to be on the
// command line: --NAME VALUE, --NAME - (standard input), --NAME-file PATH,
// or the environment. Its errors match ErrUsage (the CLI's exit 2).
package secretflag

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpauth/mcpauth/internal/keyfile"
)

// AllowInsecureFlag is the override of Private a command offers: the flag
// that makes it use an owner-readable-by-others file anyway.
const AllowInsecureFlag = "--allow-insecure-key-file"

// SecretFlag is a secret that never needs to be on the command line, where
// other users see it in the process list and shells keep it in history:
// --NAME VALUE, --NAME - (standard input), --NAME-file PATH (- is standard
// input too), or the environment variables MCPAUTH_NAME, then
// MCPAUTH_NAME_FILE (a path: container secrets), in that order.
type SecretFlag struct {
	name  string
	value *string
	file  string
	env   string // the environment variable; EnvName(name) unless Env
	fl    *pflag.FlagSet
	usage string
	// allowOpen is set by Private: its file must then be owner-only
	// unless *allowOpen (keyfile.Check).
	allowOpen *bool
}

// Bind adds --name and --name-file to fl, filling *p on Resolve.
func Bind(fl *pflag.FlagSet, p *string, name, usage string) *SecretFlag {
	s := &SecretFlag{name: name, value: p, env: EnvName(name), fl: fl, usage: usage}
	fl.StringVar(p, name, "", s.help())
	fl.StringVar(&s.file, name+"-file", "", fmt.Sprintf("read --%s from this file (\"-\": standard input)", name))
	return s
}

func (s *SecretFlag) help() string {
	return fmt.Sprintf("%s (\"-\" reads standard input; also --%s-file, env %s)", s.usage, s.name, s.env)
}

// Env reads the secret from the environment variable env (then env_FILE)
// instead of MCPAUTH_NAME: for a name as common as password, which one
// command's variable must not claim for all.
func (s *SecretFlag) Env(env string) *SecretFlag {
	s.env = env
	s.fl.Lookup(s.name).Usage = s.help()
	return s
}

// Private makes Resolve refuse a file group or others may access, unless
// *allow (the command's AllowInsecureFlag): for a credential that
// lets its holder act as the client.
func (s *SecretFlag) Private(allow *bool) *SecretFlag {
	s.allowOpen = allow
	return s
}

// Resolve fills the secret from whichever source was given. Only one
// source may be given on the command line, and "-" may only be used once
// per command (there is one standard input).
func (s *SecretFlag) Resolve(in io.Reader, getenv func(string) string) error {
	switch {
	case *s.value != "" && s.file != "":
		return usagef("give --%s or --%s-file, not both", s.name, s.name)
	case *s.value == "-":
		return s.read(in, "standard input")
	case s.file == "-":
		return s.read(in, "standard input")
	case s.file != "":
		if err := s.checkFile("--"+s.name+"-file", s.file); err != nil {
			return err
		}
		f, err := os.Open(s.file)
		if err != nil {
			return usagef("--%s-file: %v", s.name, err)
		}
		defer f.Close()
		return s.read(f, s.file)
	case *s.value != "" || getenv == nil:
	case getenv(s.env) != "":
		*s.value = strings.TrimSpace(getenv(s.env))
	case getenv(s.env+"_FILE") != "":
		path := getenv(s.env + "_FILE")
		if err := s.checkFile(s.env+"_FILE", path); err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return usagef("%s_FILE: %v", s.env, err)
		}
		defer f.Close()
		return s.read(f, path)
	}
	return nil
}

func (s *SecretFlag) checkFile(flag, path string) error {
	if s.allowOpen == nil {
		return nil
	}
	if *s.allowOpen {
		return nil
	}
	if err := keyfile.Check(path); err != nil {
		return usagef("%s %v: run chmod 600 %s, or pass %s to use it anyway (unsafe)", flag, err, path, AllowInsecureFlag)
	}
	return nil
}

// read takes the first line: a trailing newline from echo or an editor is
// not part of a secret.
func (s *SecretFlag) read(r io.Reader, from string) error {
	line, err := bufio.NewReader(io.LimitReader(r, 64<<10)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return usagef("--%s: reading %s: %v", s.name, from, err)
	}
	if *s.value = strings.TrimSpace(line); *s.value == "" {
		return usagef("--%s: %s is empty", s.name, from)
	}
	return nil
}

// ErrUsage matches every error Resolve returns: the command line or the
// environment named a secret that cannot be read.
var ErrUsage = errors.New("unusable secret flag")

type usageError struct{ err error }

func (e *usageError) Error() string   { return e.err.Error() }
func (e *usageError) Unwrap() []error { return []error{e.err, ErrUsage} }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// EnvName is the environment variable that sets flag name.
func EnvName(flag string) string {
	return "MCPAUTH_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}
