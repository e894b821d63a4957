package conformance

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/conformance/approve"
	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
	"github.com/mcpauth/mcpauth/server/store/sqlstore"
)

// buildTarget prepares what the suite runs against. cleanup stops whatever
// was started and is never nil.
func buildTarget(ctx context.Context, opts *Options, hc *http.Client) (conformance.Target, conformance.Options, func(), error) {
	so := conformance.Options{
		Parallel: opts.Parallel, PerCheckTimeout: opts.Timeout,
		RealTime: opts.RealTime, Destructive: opts.Destructive,
	}
	if opts.Local {
		return startLocal(ctx, opts, hc, so)
	}
	nop := func() {}
	base := strings.TrimRight(opts.BaseURL, "/")
	probe := base + "/.well-known/oauth-authorization-server"
	if opts.Profile == conformance.ProfileMCP {
		probe = base // the MCP endpoint itself
	}
	if err := preflight(ctx, hc, probe); err != nil {
		return conformance.Target{}, so, nop, clierr.WithExit(clierr.ExitNetwork, fmt.Errorf("cannot reach %s: %w", base, err))
	}
	if opts.Profile == conformance.ProfileMCP {
		// One clear stop, not a failure for every check that needs
		// discovery.
		if err := conformance.CheckMCPServer(ctx, hc, base); err != nil {
			return conformance.Target{}, so, nop, clierr.WithExit(clierr.ExitNetwork, err)
		}
	}
	t := conformance.Target{BaseURL: base, HTTP: hc, APIKey: opts.APIKey, CIMDPrivate: opts.CIMDPrivate}
	if opts.ClientID != "" {
		t.Clients = append(t.Clients, conformance.PreRegisteredClient{ID: opts.ClientID, Secret: opts.ClientSecret})
	}
	if opts.ClientID2 != "" {
		t.Clients = append(t.Clients, conformance.PreRegisteredClient{ID: opts.ClientID2, Secret: opts.ClientSecret2})
	}
	m, err := machineClients(opts)
	if err != nil {
		return t, so, nop, err
	}
	t.Machine = m
	if opts.CIMDPrivate || opts.CIMDCert != "" {
		h, err := documentHost(opts)
		if err != nil {
			return t, so, nop, err
		}
		t.Documents = h
		nop = func() { h.Close() }
	}
	if opts.SessionCookie != "" {
		t.Session = []*http.Cookie{{Name: "auth_token", Value: opts.SessionCookie}}
	}
	if opts.ClockURL != "" {
		c := &conformance.HTTPClock{URL: opts.ClockURL, HTTP: hc}
		if _, err := c.Now(ctx); err != nil {
			return t, so, nop, clierr.WithExit(clierr.ExitNetwork,
				fmt.Errorf("%w (is the server running with 'mcpauth serve --test-clock'?)", err))
		}
		t.Clock = c
	}
	if opts.BrowserCommand != "" {
		a, err := approve.NewCommandApprover(opts.BrowserCommand)
		if err != nil {
			return t, so, nop, err
		}
		t.Approver = a
		prev := nop
		nop = func() { a.Close(); prev() }
	}
	switch opts.Approve {
	case ApproveForm:
		a, err := approve.NewFormApprover(base, opts.Username, hc)
		if err != nil {
			return t, so, nop, clierr.FlagErrorf("%v", err)
		}
		t.Approver = a
	case ApproveBrowser:
		a, err := approve.NewBrowserApprover(approve.BrowserOptions{
			Chromium: opts.Chromium, Getenv: opts.Getenv, Username: opts.Username, Password: opts.Password,
			Interactive: opts.Headed, Headed: opts.Headed, Prompt: opts.IO.ErrOut,
		})
		if err != nil {
			return t, so, nop, err
		}
		t.Approver = a
		prev := nop
		nop = func() { a.Close(); prev() }
		if opts.Headed && so.PerCheckTimeout == 0 {
			so.PerCheckTimeout = manualTimeout // a person signs in first
		}
	case ApproveManual:
		t.Approver = approve.NewManualApprover(opts.IO.In, opts.IO.ErrOut)
		// One prompt at a time, and time for a person to answer it.
		so.Parallel = 1
		if so.PerCheckTimeout == 0 {
			so.PerCheckTimeout = manualTimeout
		}
	}
	return t, so, nop, nil
}

// preflight tells an unreachable target apart from a failing one, so a typo
// in the URL is one clear error rather than a hundred failed checks.
func preflight(ctx context.Context, hc *http.Client, u string) error {
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.Body.Close()
}

// startLocal starts the reference server and its development identity
// provider on loopback and targets them with every need met.
func startLocal(ctx context.Context, opts *Options, hc *http.Client, so conformance.Options) (conformance.Target, conformance.Options, func(), error) {
	var st store.Store = memory.New()
	if opts.DB != "" {
		s, err := sqlstore.Open(ctx, opts.DB)
		if err != nil {
			return conformance.Target{}, so, func() {}, fmt.Errorf("opening --db: %w", err)
		}
		st = s
	}
	docs, err := conformance.NewDocumentHost(nil)
	if err != nil {
		st.Close()
		return conformance.Target{}, so, func() {}, err
	}
	clk := clock.NewOffset(nil)
	machine, registered, err := localMachineClients()
	if err != nil {
		docs.Close()
		st.Close()
		return conformance.Target{}, so, func() {}, err
	}
	inst, err := local.Start(ctx, local.Options{Store: st, TestClock: clk, MetadataDocuments: server.MetadataDocumentConfig{
		AllowPrivateAddresses: opts.CIMDPrivate, RootCAs: docs.CertPool(),
	}, MachineClients: registered, DPoP: true})
	if err != nil {
		docs.Close()
		st.Close()
		return conformance.Target{}, so, func() {}, fmt.Errorf("starting the reference server: %w", err)
	}
	cleanup := func() {
		inst.Close()
		docs.Close()
		st.Close()
	}
	a, err := approve.NewFormApprover(inst.URL, opts.Username, hc)
	if err != nil {
		cleanup()
		return conformance.Target{}, so, func() {}, err
	}
	so.Destructive = true // the server lives for this run only
	base := inst.URL
	if opts.Profile == conformance.ProfileMCP {
		base += "/mcp" // the mcp profile starts from the MCP endpoint
	}
	return conformance.Target{BaseURL: base, HTTP: hc, Approver: a, Clock: &conformance.HTTPClock{URL: inst.URL + "/api/test/clock", HTTP: hc},
		CIMDPrivate: opts.CIMDPrivate, Documents: docs, Machine: machine}, so, cleanup, nil
}

// localMachineClients are the run's machine clients as the suite holds
// them and as the server registers them.
func localMachineClients() (*conformance.MachineClients, []server.MachineClient, error) {
	m, secretHash, public, err := conformance.NewMachineClients()
	if err != nil {
		return nil, nil, err
	}
	return m, []server.MachineClient{{ID: m.SecretID, SecretHash: secretHash[:]}, {ID: m.KeyID, PublicKey: public}}, nil
}

// machineClients are the target's machine clients named by the flags, or nil.
func machineClients(opts *Options) (*conformance.MachineClients, error) {
	if opts.MachineClientID == "" && opts.MachineKeyClientID == "" {
		return nil, nil
	}
	m := &conformance.MachineClients{SecretID: opts.MachineClientID, Secret: opts.MachineClientSecret, KeyID: opts.MachineKeyClientID}
	if opts.MachinePrivateKeyFile != "" {
		s, err := flows.LoadSigner(opts.MachinePrivateKeyFile, "")
		if err != nil {
			return nil, clierr.WithExit(clierr.ExitUsage, fmt.Errorf("--machine-private-key-file: %w", err))
		}
		m.Key = s
	}
	return m, nil
}

// documentHost starts the suite's metadata document host for a remote
// target, with --cimd-cert when given.
func documentHost(opts *Options) (*conformance.DocumentHost, error) {
	var cert *tls.Certificate
	if opts.CIMDCert != "" {
		c, err := tls.LoadX509KeyPair(opts.CIMDCert, opts.CIMDKey)
		if err != nil {
			return nil, clierr.FlagErrorf("--cimd-cert/--cimd-key: %v", err)
		}
		cert = &c
	}
	h, err := conformance.NewDocumentHost(cert)
	if err != nil {
		return nil, fmt.Errorf("starting the document host: %w", err)
	}
	return h, nil
}
