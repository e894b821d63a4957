// Package apikey implements `mcpauth apikey set`: store a personal API key.
package apikey

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/keyring"
)

// Options are apikey set's arguments.
type Options struct {
	F      *cmdutil.Factory
	Server string
}

// NewCmd builds `apikey` with its `set` subcommand; runF replaces RunSet.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	cmd := &cobra.Command{Use: "apikey", Short: "Manage stored API keys"}
	opts := &Options{F: f}
	cmd.AddCommand(&cobra.Command{
		Use:   "set <mcp-url>",
		Short: "Store an API key read from standard input",
		Long: `Read an API key (from the server's Settings page) from standard input and
store it for the server. It is never echoed; ping and token then use it.`,
		Example: "  mcpauth apikey set http://127.0.0.1:8080/mcp < key.txt\n  pbpaste | mcpauth apikey set https://mcp.example.com/mcp",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Server = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunSet(cmd.Context(), opts)
		},
	})
	return cmd
}

// readKey reads one line from stdin; on a terminal with echo turned off, so
// the key never shows on screen.
func readKey(f *cmdutil.Factory) (string, error) {
	if fd, ok := f.IO.In.(interface{ Fd() uintptr }); ok && f.IO.StdinTTY {
		fmt.Fprint(f.IO.ErrOut, "Paste the API key and press Enter (it is not shown): ")
		b, err := term.ReadPassword(fd.Fd())
		fmt.Fprintln(f.IO.ErrOut)
		if err != nil {
			return "", fmt.Errorf("reading the key: %w", err)
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(io.LimitReader(f.IO.In, 8<<10)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the key: %w", err)
	}
	return line, nil
}

// RunSet stores the key.
func RunSet(_ context.Context, opts *Options) error {
	f := opts.F
	line, err := readKey(f)
	if err != nil {
		return err
	}
	key := strings.TrimSpace(line)
	if key == "" {
		return cmdutil.FlagErrorf("no API key on standard input")
	}
	if strings.ContainsAny(key, " \t") {
		return cmdutil.FlagErrorf("the API key must be a single word")
	}
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	server := cmdutil.ServerKey(opts.Server)
	if !strings.HasSuffix(server, "/mcp") {
		server = cmdutil.ServerKey(strings.TrimSuffix(opts.Server, "/") + "/mcp")
	}
	if err := st.Save(server, f.Globals.Account, keyring.TokenBundle{Kind: keyring.KindAPIKey, Resource: server, APIKey: key}); err != nil {
		return cmdutil.WithExit(cmdutil.ExitStorage, fmt.Errorf("storing the key: %w", err))
	}
	cmdutil.NewUI(f).Success("API key stored for %s (%s)", server, st.Storage())
	return nil
}
