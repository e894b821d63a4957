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
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/probe"
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
store it for the server. It is never echoed; ping and token then use it.

Nothing is stored unless the URL is an MCP server (discovery succeeds) and
the server accepts the key (one authenticated GET /api/ping).`,
		Example: "  mcpauth apikey set http://127.0.0.1:8080/mcp < key.txt\n  pbpaste | mcpauth apikey set https://mcp.example.com/mcp",
		Args:    cmdutil.TargetArgs,
		RunE:    cmdutil.RunE(opts, &opts.Server, runF, RunSet),
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

// RunSet checks the URL and the key, then stores the key.
func RunSet(ctx context.Context, opts *Options) error {
	var phase clierr.Phase
	return clierr.Cancelled(ctx, "apikey set", &phase, runSet(ctx, opts, &phase))
}

func runSet(ctx context.Context, opts *Options, phase *clierr.Phase) error {
	f := opts.F
	target, err := cmdutil.ParseTarget(opts.Server)
	if err != nil {
		return err
	}
	phase.Set("reading the key")
	line, err := readKey(f)
	if err != nil {
		return err
	}
	key := strings.TrimSpace(line)
	if key == "" {
		return clierr.FlagErrorf("no API key on standard input")
	}
	if strings.ContainsAny(key, " \t") {
		return clierr.FlagErrorf("the API key must be a single word")
	}
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	// The URL must be an MCP server: the same discovery login does, so a
	// typo or a non-MCP URL is refused with the reason.
	phase.Set("discovering " + target)
	disc, err := f.Discover(ctx, target, cmdutil.DiscoverFlags{})
	if err != nil {
		return fmt.Errorf("%w; the key was not stored", err)
	}
	server := creds.ServerKey(disc.Resource)
	bundle := creds.Bundle{Kind: creds.KindAPIKey, Resource: server, Issuer: disc.Issuer, APIKey: key}
	// And the key must work: one authenticated request.
	phase.Set("checking the key")
	hc, err := f.HTTPClient()
	if err != nil {
		return err
	}
	base := creds.PingBase(bundle.Resource, server)
	res, err := probe.Ping(ctx, hc, base, key)
	switch {
	case errors.Is(err, flows.ErrUnauthorized):
		return clierr.WithExit(clierr.ExitAuthRequired, fmt.Errorf("%s/api/ping refused this API key (HTTP 401): copy it again from the server's Settings page; the key was not stored", base))
	case err != nil:
		if uerr := clierr.Unreachable(base, err); uerr != err {
			return fmt.Errorf("%w; the key was not stored", uerr)
		}
		return clierr.WithExit(clierr.CodeFor(err), fmt.Errorf("checking the key: %w; the key was not stored", err))
	}
	bundle.UserID, bundle.UserName = res.UserID, res.Name
	f.NoteReplace(st, server, f.Globals.Account, "")
	old, replacing := cmdutil.ToDrop(st, server, f.Globals.Account)
	phase.Set("storing the key")
	if err := creds.Save(st, server, f.Globals.Account, bundle); err != nil {
		return clierr.WithExit(clierr.ExitStorage, fmt.Errorf("storing the key: %w", err))
	}
	if replacing {
		f.RevokeReplaced(ctx, server, old)
	}
	who := creds.User{ID: res.UserID, Name: res.Name}.String()
	cmdutil.NewUI(f).Success("API key of %s checked and stored for %s (%s)", who, server, st.Storage())
	return nil
}
