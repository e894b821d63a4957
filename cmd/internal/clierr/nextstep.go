package clierr

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/keyfile"
	"github.com/mcpauth/mcpauth/internal/secretflag"
)

// FlowError attaches the documented exit code to an error from flows.
func FlowError(doing string, err error) error {
	return FlowErrorRetry(doing, "", err)
}

// FlowErrorRetry is FlowError for a flow the user may simply run again
// (retry is that command): a denied or expired attempt says so.
func FlowErrorRetry(doing, retry string, err error) error {
	if err == nil {
		return nil
	}
	code := CodeFor(err)
	again := ""
	if retry != "" {
		again = "; run: " + retry + " to try again"
	}
	switch {
	case errors.Is(err, flows.ErrAccessDenied):
		return WithExit(code, fmt.Errorf("%s: access was denied%s", doing, again))
	case errors.Is(err, flows.ErrExpiredToken), errors.Is(err, flows.ErrDeviceCodeExpired):
		if again == "" {
			again = "; start again"
		}
		return WithExit(code, fmt.Errorf("%s: the code expired before it was approved%s", doing, again))
	}
	return WithExit(code, withNextStep(fmt.Errorf("%s: %w", doing, err), false))
}

// NextStep is the fix for an error that has one, worded once for every
// command, or "". overrides says the command has the unsafe discovery
// flags (DiscoverFlags.Bind), so the message may name them.
func NextStep(err error, overrides bool) string {
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.Is(err, flows.ErrS256Unsupported) && overrides:
		return "pass --allow-missing-s256 to continue anyway (unsafe: the login can be intercepted)"
	case errors.Is(err, flows.ErrInsecureEndpoint) && overrides:
		return "pass --allow-insecure-http to accept plain http (unsafe)"
	case errors.As(err, &certErr), strings.Contains(err.Error(), "x509:"):
		return "if the server's certificate comes from a private CA, pass --ca-file with that CA's PEM file"
	case errors.Is(err, flows.ErrTimeout):
		return "pass a longer --timeout (e.g. --timeout 10m) to wait longer"
	case errors.Is(err, flows.ErrNoClient):
		return "if the server registers clients without advertising it, pass --registration-endpoint URL; otherwise pass --client-id with a client registered at the server"
	}
	return ""
}

// withNextStep appends err's NextStep, if any.
func withNextStep(err error, overrides bool) error {
	if step := NextStep(err, overrides); step != "" {
		return fmt.Errorf("%w; %s", err, step)
	}
	return err
}

// BearerOnly explains a DPoP-bound credential that a resource refused with
// a 401 offering other schemes only (re.RefusesDPoP), when no refresh could
// replace it with a Bearer token: a new login, which picks Bearer there, as
// the resource offers no DPoP challenge.
func BearerOnly(resource string, re *flows.ResourceError, server string) string {
	return fmt.Sprintf("%s takes only %s tokens, and the stored one is DPoP-bound; run: mcpauth login %s (a new login uses Bearer there)",
		resource, strings.Join(re.Schemes, ", "), server)
}

// LoginStep is the command that fixes a *creds.LoginError (creds says what
// happened, the CLI how to log in), or "".
func LoginStep(err error) string {
	var le *creds.LoginError
	switch {
	case !errors.As(err, &le):
		return ""
	case le.Server == "":
		return "run: mcpauth login <mcp-url>"
	case le.Machine:
		return "run: mcpauth login " + le.Server + " with the same options"
	}
	return "run: mcpauth login " + le.Server
}

// KeyFileStep is the fix for a machine login's key, assertion or ID token
// file that others may read (creds refuses it at login and at every
// renewal), or "".
func KeyFileStep(err error) string {
	var ie *keyfile.InsecureError
	if !errors.As(err, &ie) {
		return ""
	}
	return fmt.Sprintf("run chmod 600 %s, or log in with %s to use it anyway (unsafe)", ie.Path, secretflag.AllowInsecureFlag)
}

// WithFix appends err's KeyFileStep or else its LoginStep, if any: the
// library says what happened, the CLI what to run. A renewal refused for a
// key file is also a login error, and chmod is the nearer fix.
func WithFix(err error) error {
	if step := cmp.Or(KeyFileStep(err), LoginStep(err)); step != "" {
		return fmt.Errorf("%w; %s", err, step)
	}
	return err
}
