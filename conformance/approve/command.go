package approve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
	"github.com/mcpauth/mcpauth/internal/redact"
)

// CommandApprover hands each authorization request to a program of the
// user's, the contract of `mcpauth login --browser-command`: the program is
// run without a shell, with the authorization URL as its last argument, and
// must drive a browser through the authorization server's sign-in and
// consent pages until the browser is sent to the redirect URI. The suite
// listens on that redirect URI (RedirectURI, on 127.0.0.1) and takes the
// redirect from there. A program that stops at the redirect instead may
// print the redirect URL as the last line of its standard output.
//
// The program also gets MCPAUTH_CONFORMANCE_ACTION=approve or deny, for the
// checks that press deny. Device codes and Settings are beyond it: those
// checks are skipped with the reason.
type CommandApprover struct {
	argv []string
	ln   net.Listener
	srv  *http.Server

	mu      sync.Mutex
	waiting map[string]chan *url.URL // by state
	// strays are the last requests no authorization request waited for
	// (no state, or an unknown one); arrived counts them all.
	strays  []string
	arrived int
}

var _ conformance.Approver = (*CommandApprover)(nil)

// ActionEnv names the environment variable that tells the program what to
// press.
const ActionEnv = "MCPAUTH_CONFORMANCE_ACTION"

// NewCommandApprover starts the redirect listener for command (split at
// spaces, as login does). Close stops it.
func NewCommandApprover(command string) (*CommandApprover, error) {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return nil, errors.New("browser command: empty")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("browser command: listening for the redirect: %w", err)
	}
	a := &CommandApprover{argv: argv, ln: ln, waiting: map[string]chan *url.URL{}}
	a.srv = &http.Server{Handler: http.HandlerFunc(a.callback), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = a.srv.Serve(ln) }()
	return a, nil
}

// RedirectURI is where the program's browser must end: the suite's loopback
// listener. Checks that can choose their client's redirect URI use it.
func (a *CommandApprover) RedirectURI() string {
	return "http://" + a.ln.Addr().String() + "/callback"
}

// Close stops the redirect listener.
func (a *CommandApprover) Close() error { return a.srv.Close() }

func (a *CommandApprover) callback(w http.ResponseWriter, r *http.Request) {
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	if r.URL.Path == "/favicon.ico" { // a browser's, not the server's
		http.NotFound(w, r)
		return
	}
	a.mu.Lock()
	ch := a.waiting[r.URL.Query().Get("state")]
	if ch == nil {
		a.strays = append(a.strays[max(0, len(a.strays)-maxStrays+1):], arrival(r))
		a.arrived++
	}
	a.mu.Unlock()
	if ch == nil {
		// Kept, not lost: the check's reason says what came.
		http.Error(w, "mcpauth conformance: no authorization request is waiting for this redirect; it was recorded", http.StatusNotFound)
		return
	}
	// Any path: a redirect to an extended redirect URI (/callback/extra)
	// is what MCP-48 must see.
	select {
	case ch <- &u:
	default: // a second redirect for the same request: the first one counts
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "mcpauth conformance received the redirect; this window can be closed.\n")
}

// maxStrays bounds the unexpected arrivals the listener keeps.
const maxStrays = 8

// arrival describes a request no authorization request waited for: its
// path and parameters, without the values of what a grant carries.
func arrival(r *http.Request) string {
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	return r.Method + " " + redact.ElideGrants(&u)
}

// straysSince are the unexpected arrivals after the first n, for the
// reason of a drive that did not reach the redirect.
func (a *CommandApprover) straysSince(n int) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := min(a.arrived-n, len(a.strays))
	if k <= 0 {
		return ""
	}
	return "; meanwhile the redirect listener received, for no waiting request: " + strings.Join(a.strays[len(a.strays)-k:], ", ")
}

// ApproveConsent implements conformance.Approver.
func (a *CommandApprover) ApproveConsent(ctx context.Context, authURL string) (*url.URL, error) {
	return a.drive(ctx, authURL, "approve")
}

// DenyConsent implements conformance.Approver.
func (a *CommandApprover) DenyConsent(ctx context.Context, authURL string) (*url.URL, error) {
	return a.drive(ctx, authURL, "deny")
}

func (a *CommandApprover) drive(ctx context.Context, authURL, action string) (*url.URL, error) {
	// The server under test named the endpoint: a relative or file: one
	// would reach the program as an option or a file. Plain http stays
	// allowed: the suite tests the target the user named, however served.
	if err := oauthwire.CheckLaunchable(authURL, true); err != nil {
		return nil, fmt.Errorf("browser command: not run: %w", err)
	}
	au, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("browser command: authorization URL: %w", err)
	}
	state, redirect := au.Query().Get("state"), au.Query().Get("redirect_uri")
	ch := make(chan *url.URL, 1)
	a.mu.Lock()
	a.waiting[state] = ch
	seen := a.arrived
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.waiting, state)
		a.mu.Unlock()
	}()

	cmd := exec.CommandContext(ctx, a.argv[0], append(a.argv[1:], authURL)...)
	cmd.Env = append(os.Environ(), ActionEnv+"="+action)
	var out, errOut bytes.Buffer
	cmd.Stdout = &limitWriter{w: &out, n: 64 << 10}
	cmd.Stderr = &limitWriter{w: &errOut, n: 64 << 10}
	runErr := cmd.Run()
	// The redirect reached the listener before the program's browser got
	// its answer, so before the program could exit.
	select {
	case u := <-ch:
		return u, nil
	default:
	}
	if runErr != nil {
		return nil, fmt.Errorf("browser command %s: %w%s%s", a.argv[0], runErr, lastWords(errOut.String()), a.straysSince(seen))
	}
	if u, ok := printedRedirect(out.String(), redirect); ok {
		return u, nil
	}
	return nil, fmt.Errorf("browser command %s exited without reaching the redirect URI %s%s", a.argv[0], redirect, a.straysSince(seen))
}

// lastWords is the end of what a program said on stderr, for the reason of
// an inconclusive check.
func lastWords(stderr string) string {
	s := strings.Join(strings.Fields(stderr), " ")
	if s == "" {
		return ""
	}
	if len(s) > 300 {
		s = "…" + s[len(s)-300:]
	}
	return ": " + s
}

// printedRedirect reads the redirect a program printed as its last line.
func printedRedirect(out, redirect string) (*url.URL, bool) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if redirect == "" || !strings.HasPrefix(last, redirect) {
		return nil, false
	}
	u, err := url.Parse(last)
	return u, err == nil
}

// limitWriter keeps the first n bytes and drops the rest, so a chatty
// program cannot fill memory.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}

const commandScope = "--browser-command drives authorization requests only; use --approve=form or --approve=manual for "

// ApproveDevice implements conformance.Approver: out of the program's reach.
func (a *CommandApprover) ApproveDevice(context.Context, string, string) error {
	return conformance.Skip(commandScope + "device codes")
}

// DenyDevice implements conformance.Approver: out of the program's reach.
func (a *CommandApprover) DenyDevice(context.Context, string, string) error {
	return conformance.Skip(commandScope + "device codes")
}

// APIKey implements conformance.Approver: out of the program's reach.
func (a *CommandApprover) APIKey(context.Context) (string, error) {
	return "", conformance.Skip(commandScope + "the API key in Settings")
}

// RegenerateAPIKey implements conformance.Approver: out of the program's reach.
func (a *CommandApprover) RegenerateAPIKey(context.Context) (string, string, error) {
	return "", "", conformance.Skip(commandScope + "the API key in Settings")
}
