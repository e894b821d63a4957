// Package proxy implements `mcpauth proxy`: a stdio MCP server for desktop
// hosts that forwards to a remote MCP server with the stored credential.
package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/loginflow"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/mcpproxy"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// Options are proxy's arguments.
type Options struct {
	F          *cmdutil.Factory
	Server     string
	Headers    []string
	Transport  string
	LogFile    string
	MaxMessage int
	Login      bool
	Credential cmdutil.CredentialFlag
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "proxy <mcp-url>",
		Short: "Serve a remote MCP server on stdio, with the stored credential (for desktop hosts)",
		Long: `Read JSON-RPC messages on stdin and write them on stdout, forwarding them to
the MCP server at <mcp-url> over Streamable HTTP (or the legacy HTTP+SSE
transport, when --transport auto finds no Streamable HTTP endpoint). Every
request carries the stored token (or API key, or $MCPAUTH_TOKEN); an expiring
token is refreshed under the same lock as every other mcpauth command, and a
401 invalid_token is retried once after a refresh.

stdout carries protocol messages only; progress and errors go to stderr (and
to --log-file). Exits 0 when stdin closes, 3 when there is no usable
credential (run: mcpauth login <mcp-url>), 6 when the server connection ends
or the server was never reachable.`,
		Example: `  mcpauth proxy https://mcp.example.com/mcp
  mcpauth proxy http://127.0.0.1:8080/mcp --account work --log-file /tmp/mcpauth-proxy.log`,
		Args: cobra.ExactArgs(1),
		RunE: cmdutil.RunE(opts, &opts.Server, runF, Run),
	}
	cmd.Flags().StringArrayVarP(&opts.Headers, "header", "H", nil, "extra request header 'Name: value' (repeatable)")
	cmd.Flags().StringVar(&opts.Transport, "transport", mcpproxy.Auto, "auto, streamable or sse")
	cmd.Flags().StringVar(&opts.LogFile, "log-file", "", "also append the log to this file (for hosts that hide stderr)")
	cmd.Flags().BoolVar(&opts.Login, "login", false, "without a usable credential, log in first in the browser, as mcpauth login does (progress on stderr), instead of exiting 3")
	opts.Credential.Bind(cmd.Flags())
	cmd.Flags().IntVar(&opts.MaxMessage, "max-message-size", mcpproxy.DefaultMaxMessage, "largest message accepted from the host or as a JSON answer, in bytes")
	return cmd
}

// Run proxies until stdin closes.
func Run(ctx context.Context, opts *Options) error {
	f := opts.F
	switch opts.Transport {
	case mcpproxy.Auto, mcpproxy.Streamable, mcpproxy.SSE:
	default:
		return clierr.FlagErrorf("--transport must be auto, streamable or sse")
	}
	headers := http.Header{}
	for _, h := range opts.Headers {
		k, v, ok := strings.Cut(h, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(v, "\r\n") {
			return clierr.FlagErrorf("--header %q: want 'Name: value'", h)
		}
		if strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "DPoP") {
			return clierr.FlagErrorf("--header %s: the credential comes from the keyring (or MCPAUTH_TOKEN)", k)
		}
		headers.Add(k, strings.TrimSpace(v))
	}

	logw := &lockedWriter{w: f.IO.ErrOut}
	if opts.LogFile != "" {
		lf, err := os.OpenFile(opts.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return clierr.FlagErrorf("--log-file: %v", err)
		}
		defer lf.Close()
		errOut := f.IO.ErrOut
		// Refresh warnings and --debug traces go there too.
		logw = &lockedWriter{w: io.MultiWriter(errOut, lf)}
		f.IO.ErrOut = logw
		defer func() { f.IO.ErrOut = errOut }()
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(logw, "%s mcpauth proxy: %s\n", f.Clock.Now().UTC().Format(time.RFC3339), cmdutil.Text(fmt.Sprintf(format, args...)))
	}
	err := run(ctx, opts, headers, logf)
	if err != nil && opts.LogFile != "" {
		logf("exiting: %v", err) // stderr gets it from the root command
	}
	return err
}

func run(ctx context.Context, opts *Options, headers http.Header, logf func(string, ...any)) error {
	f := opts.F
	in := f.IO.In
	again := loginflow.Again{F: f, Server: opts.Server, Log: logf, Note: " first (--login)"}
	cred, err := f.Keeper().Fresh(ctx, opts.Server)
	if opts.Login && clierr.CodeFor(err) == clierr.ExitAuthRequired {
		logf("%v", err)
		hi := watchHostInput(in, max(opts.MaxMessage, 64*1024))
		in = hi
		if err = logInWhileHostWaits(ctx, opts.Server, hi.gone, func(ctx context.Context) error { return again.LogIn(ctx, "", "") }); err == nil {
			cred, err = f.Keeper().Fresh(ctx, opts.Server)
		}
	}
	if err != nil {
		return err
	}
	mcpURL := cmdutil.MCPEndpoint(cred, opts.Server)
	if _, err := opts.Credential.Origin(mcpURL); err != nil {
		return err
	}
	hc, err := f.HTTPClient()
	if err != nil {
		return err
	}
	base := hc.Transport // proxies, --ca-file, --debug; no overall timeout: answers may stream
	if base == nil {
		base = http.DefaultTransport
	}
	src := newSource(opts, cred, logf)

	// A host that goes away closes our stdout: see EPIPE, not a signal.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	if !f.Globals.Quiet {
		logf("forwarding stdio to %s (transport %s, %s credential)", mcpURL, opts.Transport, credKind(cred))
	}
	err = mcpproxy.Run(ctx, mcpproxy.Config{URL: mcpURL, Transport: opts.Transport, HTTP: base, Auth: src, Headers: headers,
		In: in, Out: f.IO.Out, Log: logf, MaxMessage: opts.MaxMessage, AuthHint: src.authHint(mcpURL), ScopeHint: src.scopeHint(mcpURL)})
	var re *mcpproxy.RemoteError
	if errors.As(err, &re) {
		return clierr.WithExit(clierr.ExitNetwork, err)
	}
	return err
}

// logInWhileHostWaits is the login at start, which a host may give up on
// (a first start, waiting for the user to sign in): when it closes stdin
// the login stops, rather than minutes later with nobody to serve.
func logInWhileHostWaits(ctx context.Context, server string, hostGone <-chan struct{}, logIn func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-hostGone:
			cancel(errHostGone)
		case <-ctx.Done():
		}
	}()
	err := logIn(ctx)
	if context.Cause(ctx) == errHostGone {
		return clierr.WithExit(clierr.ExitCancelled, fmt.Errorf("%w during the login to %s: stopped", errHostGone, server))
	}
	return err
}

func credKind(c creds.Credential) string {
	switch {
	case c.FromEnv:
		return "MCPAUTH_TOKEN"
	case c.DPoP != nil:
		return "DPoP " + string(c.Kind)
	}
	return string(c.Kind)
}

// credSource is the proxy's stored credential (creds.Source): read again
// from storage at most once a minute (so a token another mcpauth process
// refreshed, or a new login, is picked up, and an expiring one is
// refreshed in advance), renewed after a 401, and with --login stepped up
// after a 403 and followed to an authorization server the resource moved
// to (migration.go).
type credSource struct {
	*creds.Source
	f *cmdutil.Factory
	// logIn logs in again (--login only; nil otherwise).
	logIn func(ctx context.Context, granted, required string) error

	mu sync.Mutex
	// moves counts the logins that followed the resource to another
	// authorization server; movedAgain is where it went after the last
	// one allowed.
	moves      int
	movedAgain string
}

// newSource is the source for cred, just loaded for opts.Server.
func newSource(opts *Options, cred creds.Credential, logf func(string, ...any)) *credSource {
	f := opts.F
	src := creds.NewSource(f.Keeper(), cmp.Or(cred.Server, opts.Server), cred)
	src.Reload, src.Log = time.Minute, logf
	c := &credSource{Source: src, f: f}
	if opts.Login && !cred.FromEnv {
		again := loginflow.Again{F: f, Server: opts.Server, Log: logf, Note: " first (--login)"}
		c.logIn = again.LogIn
		src.StepUp = again.LogIn
		src.LogInAgain = func(ctx context.Context) error { return again.LogIn(ctx, "", "") }
	}
	return c
}

// Renew implements flows.CredentialSource: with --login, a 401 from a
// resource that moved to another authorization server is a login there.
func (c *credSource) Renew(ctx context.Context, rejected flows.Credential, r flows.Refusal) (flows.Credential, bool, error) {
	if c.logIn != nil && r.Why != flows.RenewScope {
		if to := c.movedTo(ctx); to != "" {
			return c.followMove(ctx, rejected, to)
		}
	}
	return c.Source.Renew(ctx, rejected, r)
}

// authHint says what to do about a 401 the proxy passes on.
func (c *credSource) authHint(mcpURL string) func(*http.Response) string {
	return func(resp *http.Response) string {
		re := flows.NewResourceError(resp)
		switch cred := c.Current(); {
		case cred.FromEnv:
			return "; MCPAUTH_TOKEN is set: replace it"
		case cred.DPoP != nil && re.RefusesDPoP():
			return "; " + clierr.BearerOnly(mcpURL, re, mcpURL)
		}
		if to := c.keepsMoving(); to != "" {
			return fmt.Sprintf("; its authorization server changed again (now %s) after the proxy logged in once for a move; run: mcpauth login %s", to, mcpURL)
		}
		return "; run: mcpauth login " + mcpURL
	}
}

// scopeHint says what to do about a 403 insufficient_scope the proxy
// passes on.
func (c *credSource) scopeHint(mcpURL string) func(string) string {
	return func(scope string) string {
		cred := c.Current()
		if cred.FromEnv {
			return "; MCPAUTH_TOKEN is set: replace it with a token carrying that scope"
		}
		union := oauthwire.UnionScopes(cred.Scope, scope)
		if oauthwire.CheckScopeLength(union) != nil {
			return fmt.Sprintf("; that scope is %d characters, more than mcpauth asks for (%d): report it to the server's operator", len(union), oauthwire.MaxScopeLength)
		}
		return fmt.Sprintf("; run: mcpauth login %s --scope %q (or start the proxy with --login to be asked)", mcpURL, union)
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// errHostGone: stdin closed, so nobody waits for the login any more.
var errHostGone = errors.New("the host closed stdin")
