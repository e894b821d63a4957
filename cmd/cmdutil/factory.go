package cmdutil

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/pkg/browser"
	"golang.org/x/net/http/httpproxy"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/redact"
	"github.com/mcpauth/mcpauth/keyring"
)

// Globals are the root command's persistent flags.
type Globals struct {
	Output  string // text or json
	Quiet   bool
	Debug   bool
	CAFile  string
	Storage string // auto, keyring, file
	// StorageSet: --storage or MCPAUTH_STORAGE was given, so Storage
	// overrides the remembered choice for this command.
	StorageSet bool
	Account    string
}

// JSON reports whether data goes out as JSON.
func (g *Globals) JSON() bool { return g.Output == "json" }

// Factory carries the dependencies commands need, built lazily so a command
// that does not touch the network or the keyring never pays for them.
// Tests replace any field.
type Factory struct {
	IO      *IOStreams
	Getenv  func(string) string
	Version string
	Globals *Globals

	// HTTPClient returns the client for talking to servers.
	HTTPClient func() (*http.Client, error)
	// Clock drives timeouts, polling and expiry checks.
	Clock flows.Clock
	// OpenBrowser opens a URL for the user (nil: decided from the
	// environment, see Opener).
	OpenBrowser func(url string) error
	// KeyringBackend overrides the OS keyring (tests).
	KeyringBackend keyring.Backend
	// KeyringTimeout bounds every keyring call (default 3 s).
	KeyringTimeout time.Duration
}

// New returns the production factory.
func New(io *IOStreams, getenv func(string) string) *Factory {
	f := &Factory{IO: io, Getenv: getenv, Globals: &Globals{Output: "text"}, Clock: flows.RealClock{}}
	f.HTTPClient = func() (*http.Client, error) { return NewHTTPClient(f.Globals, f.IO.ErrOut, f.Getenv) }
	return f
}

// NewHTTPClient builds the client for servers: proxy from the environment
// (read through getenv) except for loopback, extra CAs from --ca-file, and a
// redacting trace with --debug.
func NewHTTPClient(g *Globals, debugOut io.Writer, getenv func(string) string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = ProxyFunc(getenv)
	if g.CAFile != "" {
		pem, err := os.ReadFile(g.CAFile)
		if err != nil {
			return nil, FlagErrorf("--ca-file: %v", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, FlagErrorf("--ca-file %s holds no PEM certificate", g.CAFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	var rt http.RoundTripper = tr
	if g.Debug {
		rt = redact.Trace(tr, debugOut)
	}
	return &http.Client{Transport: rt, Timeout: 60 * time.Second}, nil
}

// ProxyFunc is http.ProxyFromEnvironment with the variables read through
// getenv (so tests need no process environment), and never a proxy for a
// loopback host: the login callback and local servers stay direct even
// when NO_PROXY forgets them.
func ProxyFunc(getenv func(string) string) func(*http.Request) (*url.URL, error) {
	either := func(upper string) string {
		if v := getenv(upper); v != "" {
			return v
		}
		return getenv(strings.ToLower(upper))
	}
	proxy := (&httpproxy.Config{
		HTTPProxy:  either("HTTP_PROXY"),
		HTTPSProxy: either("HTTPS_PROXY"),
		NoProxy:    either("NO_PROXY"),
		CGI:        getenv("REQUEST_METHOD") != "",
	}).ProxyFunc()
	return func(r *http.Request) (*url.URL, error) {
		if isLoopback(r.URL.Hostname()) {
			return nil, nil
		}
		return proxy(r.URL)
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Headless explains why no browser should be launched here, or returns "".
func Headless(getenv func(string) string, goos string) string {
	switch {
	case getenv("SSH_CONNECTION") != "" || getenv("SSH_TTY") != "":
		return "this is an SSH session"
	case goos == "linux" && getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "":
		return "no graphical display (DISPLAY and WAYLAND_DISPLAY are unset)"
	}
	return ""
}

// Opener decides how a URL reaches the user's browser. It returns nil when
// the URL should only be printed, with the reason if there is one:
// --no-browser; else --browser-command / MCPAUTH_BROWSER (run without a
// shell, the URL as the last argument); else the factory's OpenBrowser
// (tests); else, unless this is an SSH session or a display-less Linux, the
// system's default browser.
func (f *Factory) Opener(command string, noBrowser bool) (open func(string) error, why string) {
	if noBrowser {
		return nil, ""
	}
	if command == "" {
		command = f.Getenv("MCPAUTH_BROWSER")
	}
	if fields := strings.Fields(command); len(fields) > 0 {
		return func(u string) error {
			cmd := exec.Command(fields[0], append(fields[1:], u)...)
			cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
			if err := cmd.Start(); err != nil {
				return fmt.Errorf("starting browser command %q: %w", fields[0], err)
			}
			go func() { _ = cmd.Wait() }()
			return nil
		}, ""
	}
	if f.OpenBrowser != nil {
		return f.OpenBrowser, ""
	}
	if why := Headless(f.Getenv, runtime.GOOS); why != "" {
		return nil, why
	}
	return func(u string) error {
		browser.Stdout, browser.Stderr = io.Discard, io.Discard
		return browser.OpenURL(u)
	}, ""
}

// Context is a command's context: cancelled on Ctrl-C by the caller.
type Context = context.Context

// Keeper is the credential keeper for this command, wired to the
// factory's storage, HTTP client, clock, account and UI; MCPAUTH_TOKEN,
// when set, is the credential and storage is never opened.
func (f *Factory) Keeper() *creds.Keeper {
	return &creds.Keeper{Open: f.OpenStoreToRead, HTTPClient: f.HTTPClient, Clock: f.Clock, Account: f.Globals.Account,
		EnvToken: strings.TrimSpace(f.Getenv("MCPAUTH_TOKEN")), Getenv: f.Getenv, Warn: NewUI(f).Warn}
}
