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
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/device"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/login"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/mcpproxy"
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
	cred, err := f.Keeper().Fresh(ctx, opts.Server)
	if opts.Login && clierr.CodeFor(err) == clierr.ExitAuthRequired {
		logf("%v", err)
		hi := watchHostInput(in, max(opts.MaxMessage, 64*1024))
		in = hi
		cred, err = logInWhileHostWaits(ctx, opts, hi.gone, logf)
	}
	if err != nil {
		return err
	}
	mcpURL := cred.Server
	if mcpURL == "" {
		mcpURL = creds.ServerKey(opts.Server)
	}
	if u, err := url.Parse(mcpURL); err == nil && (u.Path == "" || u.Path == "/") {
		mcpURL = strings.TrimSuffix(mcpURL, "/") + "/mcp"
	}
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
	src := &credSource{f: f, server: cmp.Or(cred.Server, opts.Server), cred: cred, loaded: f.Clock.Now(), log: logf}
	if opts.Login && !cred.FromEnv {
		src.stepUp = func(ctx context.Context, granted, required string) error {
			_, err := logIn(ctx, opts, granted, required, logf)
			return err
		}
	}

	// A host that goes away closes our stdout: see EPIPE, not a signal.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	if !f.Globals.Quiet {
		logf("forwarding stdio to %s (transport %s, %s credential)", mcpURL, opts.Transport, credKind(cred))
	}
	authHint := func(resp *http.Response) string {
		re := flows.NewResourceError(resp)
		switch {
		case cred.FromEnv:
			return "; MCPAUTH_TOKEN is set: replace it"
		case src.bound() && re.RefusesDPoP():
			return "; " + clierr.BearerOnly(mcpURL, re, mcpURL)
		}
		if to := src.keepsMoving(); to != "" {
			return fmt.Sprintf("; its authorization server changed again (now %s) after the proxy logged in once for a move; run: mcpauth login %s", to, mcpURL)
		}
		return "; run: mcpauth login " + mcpURL
	}
	scopeHint := func(scope string) string {
		if cred.FromEnv {
			return "; MCPAUTH_TOKEN is set: replace it with a token carrying that scope"
		}
		union := flows.UnionScopes(src.scope(), scope)
		if flows.CheckScopeLength(union) != nil {
			return fmt.Sprintf("; that scope is %d characters, more than mcpauth asks for (%d): report it to the server's operator", len(union), flows.MaxScopeLength)
		}
		return fmt.Sprintf("; run: mcpauth login %s --scope %q (or start the proxy with --login to be asked)", mcpURL, union)
	}
	var auth mcpproxy.Authorizer = src
	if src.stepUp != nil {
		auth = steppingSource{src}
	}
	err = mcpproxy.Run(ctx, mcpproxy.Config{URL: mcpURL, Transport: opts.Transport, HTTP: base, Auth: auth, Headers: headers,
		In: in, Out: f.IO.Out, Log: logf, MaxMessage: opts.MaxMessage, AuthHint: authHint, ScopeHint: scopeHint})
	var re *mcpproxy.RemoteError
	if errors.As(err, &re) {
		return clierr.WithExit(clierr.ExitNetwork, err)
	}
	return err
}

// logInWhileHostWaits is the login at start, which a host may give up on
// (a first start, waiting for the user to sign in): when it closes stdin
// the login stops, rather than minutes later with nobody to serve.
func logInWhileHostWaits(ctx context.Context, opts *Options, hostGone <-chan struct{}, logf func(string, ...any)) (creds.Credential, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-hostGone:
			cancel(errHostGone)
		case <-ctx.Done():
		}
	}()
	cred, err := logIn(ctx, opts, "", "", logf)
	if context.Cause(ctx) == errHostGone {
		return creds.Credential{}, clierr.WithExit(clierr.ExitCancelled, fmt.Errorf("%w during the login to %s: stopped", errHostGone, opts.Server))
	}
	return cred, err
}

// errHostGone: stdin closed, so nobody waits for the login any more.
var errHostGone = errors.New("the host closed stdin")

// logIn logs in before the proxy starts (or, for required, again when the
// server asks for more than granted): in the browser as mcpauth login does,
// or, with no browser to open (over SSH, no display), with the device flow
// when the server offers it. Its output goes to stderr and it never reads
// stdin: both belong to the host, whose messages wait in the pipe
// meanwhile.
func logIn(ctx context.Context, opts *Options, granted, required string, logf func(string, ...any)) (creds.Credential, error) {
	lf := *opts.F
	streams := *lf.IO
	streams.Out, streams.In, streams.StdinTTY = streams.ErrOut, strings.NewReader(""), false
	lf.IO = &streams
	what, scope := "logging in to "+opts.Server, flows.UnionScopes(granted, required)
	if required != "" {
		what = fmt.Sprintf("the server needs scope %s: logging in to %s again", flows.AbbrevScope(scope), opts.Server)
	}
	if _, headless := lf.Opener("", false, false); headless != "" {
		logf("%s with the device flow (no browser: %s)", what, headless)
		if err := flows.CheckScopeLength(scope); required != "" && err != nil {
			return creds.Credential{}, err
		}
		err := device.Run(ctx, &device.Options{F: &lf, Target: opts.Server, Scope: scope})
		if !errors.Is(err, device.ErrNoDeviceFlow) {
			if err != nil {
				return creds.Credential{}, err
			}
			logf("logged in")
			return opts.F.Keeper().Fresh(ctx, opts.Server)
		}
		logf("the server offers no device flow: open the URL below in a browser (forward its port if the browser is elsewhere)")
	} else {
		logf("%s in the browser first (--login)", what)
	}
	_, tok, _, err := login.Login(ctx, &login.Options{F: &lf, Target: opts.Server, Scope: granted, StepUp: required, Timeout: flows.DefaultLoginTimeout})
	if err != nil {
		return creds.Credential{}, err
	}
	logf("logged in (token expires %s)", tok.Expiry.Format(time.RFC3339))
	return opts.F.Keeper().Fresh(ctx, opts.Server)
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

// credSource gives the proxy's HTTP client the current credential: the one
// loaded at start, read again from storage at most once a minute (so a token
// another mcpauth process refreshed, or a new login, is picked up, and an
// expiring one is refreshed in advance), and renewed after a 401.
type credSource struct {
	f      *cmdutil.Factory
	server string
	log    func(string, ...any)
	// stepUp logs in again, for the granted scope plus required (--login
	// only; both "" for a move to another authorization server).
	stepUp func(ctx context.Context, granted, required string) error

	mu      sync.Mutex
	cred    creds.Credential
	loaded  time.Time
	stepUps int
	// moves counts the logins that followed the resource to another
	// authorization server; movedAgain is where it went after the last
	// one allowed (migration.go).
	moves      int
	movedAgain string
	// bearerLogins counts the logins for a Bearer token after a
	// Bearer-only resource refused a DPoP-bound one (at most one).
	bearerLogins int
	// bearerOnly: the last 401 offered no DPoP scheme to a DPoP-bound
	// credential, so a refresh (bound to the same key) cannot help.
	bearerOnly bool
}

func (c *credSource) current(ctx context.Context) creds.Credential {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.f.Clock.Now(); !c.cred.FromEnv && now.Sub(c.loaded) > time.Minute {
		c.loaded = now
		if n, err := c.f.Keeper().Fresh(ctx, c.server); err == nil {
			c.cred = n
		} else {
			c.log("reading the stored credential again: %v (still using the one loaded before)", err)
		}
	}
	return c.cred
}

// bound reports whether the current credential is DPoP-bound.
func (c *credSource) bound() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cred.DPoP != nil
}

func (c *credSource) Authorize(req *http.Request) (string, error) {
	cred := c.current(req.Context())
	if cred.DPoP != nil {
		h, err := cred.DPoP.Headers(req.Method, req.URL.String(), cred.Token)
		if err != nil {
			return "", err
		}
		for k, v := range h {
			req.Header[k] = v
		}
		return cred.Token, nil
	}
	req.Header.Set("Authorization", "Bearer "+cred.Token)
	return cred.Token, nil
}

// Observe keeps a DPoP nonce the server sent, and asks for the request
// again when a 401 asked for one (RFC 9449 §9).
func (c *credSource) Observe(req *http.Request, resp *http.Response) bool {
	c.mu.Lock()
	d := c.cred.DPoP
	if resp.StatusCode == http.StatusUnauthorized {
		c.bearerOnly = d != nil && flows.NewResourceError(resp).RefusesDPoP()
	}
	c.mu.Unlock()
	nonce := resp.Header.Get("DPoP-Nonce")
	if d == nil || nonce == "" {
		return false
	}
	d.SetNonce(req.URL.String(), nonce)
	if resp.StatusCode != http.StatusUnauthorized {
		return false
	}
	for _, ch := range flows.ParseChallenges(resp.Header) {
		if strings.EqualFold(ch.Scheme, flows.TokenTypeDPoP) && ch.Params["error"] == "use_dpop_nonce" {
			return true
		}
	}
	return false
}

func (c *credSource) Renew(ctx context.Context, token string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cred.Token != token {
		return true, nil // renewed meanwhile, for another request
	}
	if c.stepUp != nil {
		if to := c.movedTo(ctx); to != "" {
			return c.followMove(ctx, token, to)
		}
	}
	var (
		n   creds.Credential
		ok  bool
		err error
	)
	renew := c.f.Keeper().Retry
	if c.bearerOnly {
		// A Bearer-only resource refused the bound token: a refresh
		// without a proof, where the refresh token allows it.
		renew = c.f.Keeper().RetryAsBearer
	}
	if n, ok, err = renew(ctx, c.cred); err != nil {
		return false, err
	}
	if !ok && c.bearerOnly && c.stepUp != nil && c.bearerLogins == 0 {
		// Once: a resource whose metadata claims DPoP while its 401 offers
		// none would otherwise send every request to the browser.
		c.bearerLogins++
		c.log("%s takes only Bearer tokens and the stored one is DPoP-bound: logging in again for a Bearer token", c.server)
		return c.logInAgain(ctx, token, "", "")
	}
	if !ok && !c.cred.FromEnv {
		// Nothing to refresh with: perhaps a new login has been stored.
		if n, err = c.f.Keeper().Fresh(ctx, c.server); err != nil {
			return false, err
		}
	}
	c.loaded = c.f.Clock.Now()
	if n.Token == "" || n.Token == token {
		return false, nil
	}
	c.log("the server refused the token: renewed it, sending again")
	c.cred = n
	return true, nil
}

func (c *credSource) scope() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cred.Scope
}

// steppingSource is a credSource that may log in again for more scope.
type steppingSource struct{ *credSource }

// StepUp implements mcpproxy.StepUpper: a login for the granted scope plus
// the one the server asked for (SEP-2350), at most flows.DefaultMaxStepUps
// times for one proxy, so a server that never accepts does not loop.
func (c steppingSource) StepUp(ctx context.Context, token, scope string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cred.Token != token {
		return true, nil // stepped up meanwhile, for another request
	}
	if c.stepUps >= flows.DefaultMaxStepUps {
		return false, fmt.Errorf("already logged in again %d times for more scope", c.stepUps)
	}
	c.stepUps++
	return c.logInAgain(ctx, token, c.cred.Scope, scope)
}

// logInAgain logs in (for granted plus required, both "" for the server's
// default) and takes the new credential; it reports whether it differs
// from token. c.mu is held.
func (c *credSource) logInAgain(ctx context.Context, token, granted, required string) (bool, error) {
	if err := c.stepUp(ctx, granted, required); err != nil {
		return false, err
	}
	n, err := c.f.Keeper().Fresh(ctx, c.server)
	if err != nil {
		return false, err
	}
	c.cred, c.loaded = n, c.f.Clock.Now()
	return n.Token != token, nil
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
