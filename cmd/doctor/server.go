package doctor

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// Clock skew limits: tokens carry 30 s of leeway; past 5 minutes fresh
// tokens look expired or not yet valid.
const (
	skewWarn = 30 * time.Second
	skewFail = 5 * time.Minute
)

// serverChecks reach the server, compare clocks with its Date header, run
// discovery and read the stored credential. An unreachable server skips
// the checks that need an answer from it.
func serverChecks(ctx context.Context, opts *Options, target string) []Check {
	hc, err := opts.HTTPClient()
	if err != nil {
		return []Check{{ID: "reach", Status: Fail, Detail: err.Error(), Fix: "fix --ca-file (MCPAUTH_CA_FILE)"}}
	}
	reach, date := reachCheck(ctx, hc, target)
	checks := []Check{reach}
	if reach.Status != Fail {
		checks = append(checks, clockCheck(opts, date), discoveryCheck(ctx, hc, target))
	}
	return append(checks, credentialCheck(opts, target))
}

func reachCheck(ctx context.Context, hc *http.Client, target string) (Check, string) {
	c := Check{ID: "reach"}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		c.Status, c.Detail, c.Fix = Fail, err.Error(), "check the URL"
		return c, ""
	}
	resp, err := hc.Do(req)
	if err != nil {
		c.Status, c.Detail = Fail, clierr.Unreachable(target, err).Error()
		c.Fix = "check that the server is running and the URL is right; behind a proxy, check HTTPS_PROXY and NO_PROXY"
		var unknownCA x509.UnknownAuthorityError
		if errors.As(err, &unknownCA) {
			c.Fix = "trust the server's CA with --ca-file FILE (MCPAUTH_CA_FILE)"
		}
		return c, ""
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	c.Status, c.Detail = Pass, fmt.Sprintf("%s answered (HTTP %d)", req.URL.Host, resp.StatusCode)
	return c, resp.Header.Get("Date")
}

func clockCheck(opts *Options, date string) Check {
	c := Check{ID: "clock"}
	server, err := http.ParseTime(date)
	if err != nil {
		c.Status, c.Detail, c.Fix = Warn, "the server sent no usable Date header, so clock skew cannot be checked", "compare `date -u` with a trusted clock"
		return c
	}
	skew := opts.Clock.Now().Sub(server)
	dir := "ahead of"
	if skew < 0 {
		skew, dir = -skew, "behind"
	}
	// Date has whole seconds: a second of difference is no skew.
	shown := skew.Round(time.Second)
	if skew > time.Minute {
		shown = skew.Round(time.Minute)
	}
	switch {
	case skew > skewFail:
		c.Status = Fail
	case skew > skewWarn:
		c.Status = Warn
	default:
		c.Status, c.Detail = Pass, fmt.Sprintf("this clock agrees with the server's Date header (within %s)", skewWarn)
		return c
	}
	c.Detail = fmt.Sprintf("this clock is %s %s the server's Date header: tokens may look expired or not yet valid", shown, dir)
	c.Fix = "sync the clock: sudo timedatectl set-ntp true (on WSL: wsl --shutdown, or sudo hwclock -s)"
	return c
}

// discoveryCheck summarises what login would find.
func discoveryCheck(ctx context.Context, hc *http.Client, target string) Check {
	c := Check{ID: "discovery"}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	d, err := flows.Discover(ctx, flows.DiscoverConfig{HTTPClient: hc}, target)
	if err != nil {
		c.Status, c.Detail, c.Fix = Fail, "discovery failed: "+err.Error(), "mcpauth discover "+target+" shows every probe and its verdict"
		return c
	}
	var parts []string
	if d.Legacy {
		parts = append(parts, "no protected resource metadata (base URL taken as the authorization server)")
	} else {
		parts = append(parts, "protected resource metadata at "+d.ResourceMetadataURL)
	}
	parts = append(parts, "authorization server "+d.Issuer)
	var reg []string
	if d.AuthServer.RegistrationEndpoint != "" {
		reg = append(reg, "dynamic")
	}
	if d.AuthServer.ClientIDMetadataDocumentSupported {
		reg = append(reg, "client ID metadata document")
	}
	if len(reg) > 0 {
		parts = append(parts, "registration: "+strings.Join(reg, ", "))
	} else {
		parts = append(parts, "registration: none offered")
	}
	if d.SupportsDeviceFlow() {
		parts = append(parts, "device flow")
	}
	scope := d.Scope
	if scope == "" {
		scope = "(none)"
	}
	parts = append(parts, "scopes: "+scope)
	c.Status, c.Detail = Pass, strings.Join(parts, "; ")
	switch {
	case len(reg) == 0:
		c.Status, c.Fix = Warn, "the server registers no clients: log in with a client you were given, mcpauth login --client-id ID "+target
	case d.Legacy:
		c.Status, c.Fix = Warn, "ask the server's operator to serve /.well-known/oauth-protected-resource (RFC 9728)"
	}
	for _, w := range d.Warnings {
		c.Detail += "; " + w
	}
	return c
}

// credentialCheck reads the stored credential for target without
// prompting, refreshing or printing it: present, usable, expired,
// refreshable, and where it is stored.
func credentialCheck(opts *Options, target string) Check {
	c := Check{ID: "credential"}
	if opts.Getenv("MCPAUTH_TOKEN") != "" {
		c.Status, c.Detail = Pass, "MCPAUTH_TOKEN is set: commands use it instead of a stored credential"
		return c
	}
	login := "mcpauth login " + target
	st, err := opts.F.OpenStoreToRead()
	if err != nil {
		c.Status, c.Detail, c.Fix = Fail, err.Error(), "see the keyring and token-files checks above"
		return c
	}
	e, err := creds.Resolve(st, target, opts.F.Globals.Account)
	if err != nil {
		c.Status, c.Detail, c.Fix = Warn, "no stored credential for "+target, login
		return c
	}
	where := "plain file"
	if e.Backend == keyring.StorageKeyring {
		where = "keyring-protected file"
	}
	if _, err := creds.Load(st, e.Server, e.Account); err != nil {
		c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("the stored credential (%s) cannot be read: %v", where, cmdutil.KeyringCause(err)), "fix the keyring (see the keyring check), or log in again: "+login
		if errors.Is(err, keyring.ErrPlaintextEntry) {
			c.Detail = "the stored credential is a plain file, which is not read while the keyring is in use (a planted file would look the same)"
			c.Fix = "use --storage=file (MCPAUTH_STORAGE=file) to read it, or log in again to replace it: " + login
		}
		return c
	}
	if who := (creds.User{ID: e.UserID, Name: e.UserName}).String(); who != "" {
		where += " for " + who // the identity login showed
	}
	now := opts.Clock.Now()
	expired := !e.Expiry.IsZero() && !now.Before(e.Expiry)
	switch {
	case expired && e.Refreshable:
		c.Status, c.Detail = Pass, fmt.Sprintf("%s credential in a %s: the access token expired, a refresh token renews it on next use", e.Kind, where)
	case expired:
		c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("%s credential in a %s: expired at %s, no refresh token", e.Kind, where, e.Expiry.UTC().Format(time.RFC3339)), login
	default:
		c.Status, c.Detail = Pass, fmt.Sprintf("%s credential in a %s: valid%s%s", e.Kind, where, expiresIn(e.Expiry, now), refreshable(e.Refreshable, e.Expiry))
	}
	return c
}

func expiresIn(expiry, now time.Time) string {
	if expiry.IsZero() {
		return ", no expiry"
	}
	return fmt.Sprintf(" for %s", expiry.Sub(now).Round(time.Minute))
}

// refreshable says what happens at expiry; nothing for a credential that
// never expires, such as an API key.
func refreshable(r bool, expiry time.Time) string {
	switch {
	case r:
		return ", refreshable"
	case expiry.IsZero():
		return ""
	}
	return ", not refreshable (log in again when it expires)"
}
