package cmdutil

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/launch"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
	"github.com/mcpauth/mcpauth/internal/reach"
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
	// ConfigDir is the token and settings folder (--config-dir or
	// MCPAUTH_CONFIG_DIR; "" for the default): a flag, so that a command a
	// host runs under a filtered environment still finds it.
	ConfigDir string
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
	tr.Proxy = reach.Proxy(getenv)
	if g.CAFile != "" {
		pem, err := os.ReadFile(g.CAFile)
		if err != nil {
			return nil, clierr.FlagErrorf("--ca-file: %v", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, clierr.FlagErrorf("--ca-file %s holds no PEM certificate", g.CAFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	var rt http.RoundTripper = tr
	if g.Debug {
		rt = redact.Trace(tr, debugOut)
	}
	return &http.Client{Transport: rt, Timeout: 60 * time.Second}, nil
}

// Opener decides how a URL reaches the user's browser (launch.Opener):
// --no-browser, else --browser-command or MCPAUTH_BROWSER, else the
// factory's OpenBrowser (tests), else the system's unless headless. The
// URLs come from servers: open refuses, with oauthwire.ErrNotLaunchable, one
// that oauthwire.CheckLaunchable refuses (allowHTTP: --allow-insecure-http),
// and the caller prints it with the reason instead.
func (f *Factory) Opener(command string, noBrowser, allowHTTP bool) (open func(string) error, why string) {
	base, why := launch.Opener(command, noBrowser, f.Getenv, f.OpenBrowser, runtime.GOOS)
	if base == nil {
		return nil, why
	}
	return func(u string) error {
		if err := oauthwire.CheckLaunchable(u, allowHTTP); err != nil {
			return err
		}
		return base(u)
	}, why
}

// Context is a command's context: cancelled on Ctrl-C by the caller.
type Context = context.Context

// Keeper is the credential keeper for this command, wired to the
// factory's storage, HTTP client, clock, account and UI; MCPAUTH_TOKEN,
// when set, is the credential and storage is never opened.
func (f *Factory) Keeper() *creds.Keeper {
	open := func() (creds.Store, error) { return f.OpenStoreToRead() }
	return &creds.Keeper{Open: open, HTTPClient: f.HTTPClient, Clock: f.Clock, Account: f.Globals.Account,
		EnvToken: strings.TrimSpace(f.Getenv("MCPAUTH_TOKEN")), Getenv: f.Getenv, Warn: NewUI(f).Warn}
}
