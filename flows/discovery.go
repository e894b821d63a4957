package flows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// DiscoverConfig configures Discover. The zero value is ready to use.
type DiscoverConfig struct {
	HTTPClient *http.Client // nil means http.DefaultClient
	// AllowMissingS256 accepts an authorization server that does not list S256
	// in code_challenge_methods_supported. Unsafe: the MCP authorization spec
	// tells clients to refuse such servers.
	AllowMissingS256 bool
	// AllowInsecureHTTP accepts plain http endpoints on non-loopback hosts
	// (say a deployment on a private CI network). Unsafe: tokens travel in
	// clear text.
	AllowInsecureHTTP bool
}

// Probe is one request made during discovery, for `mcpauth discover` to show.
type Probe struct {
	URL     string `json:"url"`
	Status  int    `json:"status,omitempty"` // 0: no HTTP response
	Verdict string `json:"verdict"`
	Err     string `json:"error,omitempty"`
	// Answer describes what the MCP URL answered when it gave no Bearer
	// challenge: "an HTML page", "JSON that is not MCP", ….
	Answer string `json:"answer,omitempty"`
}

// Discovery is what Discover learned about an MCP server.
type Discovery struct {
	// MCPURL is the MCP endpoint probed for a challenge.
	MCPURL string `json:"mcp_url"`
	// Resource is the resource indicator to send (RFC 8707): the PRM resource
	// as the server spells it, or the canonical MCP URL in legacy mode.
	Resource            string                     `json:"resource"`
	ResourceMetadataURL string                     `json:"resource_metadata_url,omitempty"`
	ResourceMetadata    *ProtectedResourceMetadata `json:"resource_metadata,omitempty"`
	// Issuer is the authorization server's issuer identifier.
	Issuer                string              `json:"issuer"`
	AuthServerMetadataURL string              `json:"authorization_server_metadata_url"`
	AuthServer            *AuthServerMetadata `json:"authorization_server"`
	// ChallengeScope is the scope of the 401 Bearer (else DPoP) challenge, if any.
	ChallengeScope string `json:"challenge_scope,omitempty"`
	// ChallengeSchemes are the schemes the MCP endpoint's 401 offered
	// (Bearer, DPoP, …), as sent.
	ChallengeSchemes []string `json:"challenge_schemes,omitempty"`
	// Scope is the scope to ask for: ChallengeScope, else the PRM
	// scopes_supported joined by spaces, else empty; plus offline_access
	// when the authorization server lists it (WithOfflineAccess).
	Scope string `json:"scope,omitempty"`
	// Legacy is set when no protected resource metadata was found and the
	// base URL was taken as the authorization server (MCP 2025-03-26).
	Legacy bool `json:"legacy,omitempty"`
	// Warnings are things the user should know about the server's setup
	// (say, default endpoints guessed for a server without metadata).
	Warnings []string `json:"warnings,omitempty"`
	Probes   []Probe  `json:"probes"`

	// down holds the hosts that took no connection: every other URL on
	// them would fail the same way, so they are not probed again.
	down map[string]bool
}

// ErrUnreachable is the MCP server's host taking no connection (refused,
// unknown name, no route): discovery stops after that first probe.
var ErrUnreachable = errors.New("the server took no connection")

// noteDown marks u's host down when err says it took no connection.
func (d *Discovery) noteDown(u *url.URL, err error) {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		if d.down == nil {
			d.down = map[string]bool{}
		}
		d.down[u.Host] = true
	}
}

// SupportsDeviceFlow reports whether the authorization server has a device
// authorization endpoint.
func (d *Discovery) SupportsDeviceFlow() bool {
	return d.AuthServer != nil && d.AuthServer.DeviceAuthorizationEndpoint != ""
}

const (
	verdictOK       = "ok"
	wkPRM           = "oauth-protected-resource"
	wkAS            = "oauth-authorization-server"
	wkOIDC          = "openid-configuration"
	mcpProtoVersion = "2025-11-25"
)

// Discover finds the authorization server of the MCP server at target, which
// is the MCP endpoint URL or a bare base URL (then {base}/mcp is probed and
// either {base}/mcp or {base} is accepted as the resource). See the package
// documentation for the order of probes. Every probe is recorded in
// Discovery.Probes, which is returned (partially filled) with errors too.
func Discover(ctx context.Context, cfg DiscoverConfig, target string) (*Discovery, error) {
	d := &Discovery{}
	tu, err := url.Parse(target)
	if err != nil || !tu.IsAbs() || tu.Host == "" || (tu.Scheme != "http" && tu.Scheme != "https") {
		return d, fmt.Errorf("discover: %q is not an http(s) URL", target)
	}
	tu.Fragment, tu.RawFragment = "", ""
	if err := oauthwire.CheckSecure("MCP URL", tu.String(), cfg.AllowInsecureHTTP); err != nil {
		return d, fmt.Errorf("discover: %w", err)
	}
	// Resources the PRM may name.
	var resources []string
	if tu.Path == "" || tu.Path == "/" {
		base := origin(tu)
		d.MCPURL = base + "/mcp"
		resources = []string{d.MCPURL, base}
	} else {
		d.MCPURL = tu.String()
		resources = []string{d.MCPURL}
	}
	mu, _ := url.Parse(d.MCPURL)

	// (a) The 401 challenge may point at the metadata (RFC 9728 §5.1).
	var prmURLs []string
	ch, err := d.probeChallenge(ctx, cfg.HTTPClient, d.MCPURL)
	if err != nil {
		return d, err
	}
	if d.down[mu.Host] {
		return d, fmt.Errorf("discover: %s: %w", mu.Host, ErrUnreachable)
	}
	if ch != nil {
		d.ChallengeScope = ch.Params["scope"]
		if rm := ch.Params["resource_metadata"]; rm != "" {
			if err := oauthwire.CheckSecure("resource_metadata", rm, cfg.AllowInsecureHTTP); err != nil {
				d.Probes = append(d.Probes, Probe{URL: rm, Verdict: "ignored: insecure resource_metadata URL"})
			} else {
				prmURLs = append(prmURLs, rm)
			}
		}
	}
	// (b) Well-known locations: path-inserted, then root (RFC 9728 §3.1).
	rootPRM := origin(mu) + "/.well-known/" + wkPRM
	prmURLs = dedupe(append(prmURLs, wellKnownInserted(mu, wkPRM), rootPRM))

	var invalid error // first validation failure, reported if nothing else works
	for _, u := range prmURLs {
		var prm ProtectedResourceMetadata
		ok, err := d.fetchJSON(ctx, cfg.HTTPClient, u, &prm)
		if err != nil {
			return d, err
		}
		if !ok {
			continue
		}
		// The root document describes the whole origin: it may name the
		// origin or a path prefix of the MCP URL, never another resource.
		if u == rootPRM && ResourceCovers(prm.Resource, d.MCPURL) {
			resources = append(resources, prm.Resource)
		}
		if err := validatePRM(&prm, resources, cfg.AllowInsecureHTTP); err != nil {
			d.lastProbe().Verdict = err.Error()
			if invalid == nil {
				invalid = fmt.Errorf("discover: %s: %w", u, err)
			}
			continue
		}
		d.lastProbe().Verdict = verdictOK
		d.ResourceMetadata, d.ResourceMetadataURL, d.Resource = &prm, u, prm.Resource
		break
	}

	var issuers []string
	switch {
	case d.ResourceMetadata != nil:
		issuers = d.ResourceMetadata.AuthorizationServers
		if d.ChallengeScope != "" {
			d.Scope = d.ChallengeScope
		} else {
			d.Scope = strings.Join(d.ResourceMetadata.ScopesSupported, " ")
		}
	case invalid != nil:
		return d, invalid
	default:
		d.Legacy = true
		d.Resource, _ = CanonicalResource(d.MCPURL)
		d.Scope = d.ChallengeScope
		// The issuer the metadata must name exactly: the origin in its
		// canonical spelling (lower-case host, no default port).
		legacyIssuer, _ := CanonicalResource(origin(mu))
		issuers = []string{legacyIssuer}
		d.Probes = append(d.Probes, Probe{URL: origin(mu), Verdict: "no protected resource metadata found; " +
			"treating the base URL as the authorization server (MCP 2025-03-26)"})
	}

	// (c) Authorization server metadata, first issuer that works.
	invalid = nil
	for _, iss := range issuers {
		md, mdURL, err := d.fetchASMetadata(ctx, cfg.HTTPClient, iss)
		if err != nil {
			return d, err
		}
		if md == nil {
			continue
		}
		if err := validateAS(md, cfg); err != nil {
			return d, fmt.Errorf("discover: %s: %w", mdURL, err)
		}
		d.Issuer, d.AuthServer, d.AuthServerMetadataURL = md.Issuer, md, mdURL
		d.Scope = WithOfflineAccess(d.Scope, md)
		return d, nil
	}
	for _, p := range d.Probes {
		if strings.HasPrefix(p.Verdict, "issuer mismatch") {
			return d, fmt.Errorf("discover: %s: %s: %w", p.URL, p.Verdict, ErrIssuerMismatch)
		}
	}
	for _, p := range d.Probes {
		if strings.HasPrefix(p.Verdict, verdictRedirected) {
			return d, fmt.Errorf("discover: %s %s: %w", p.URL, p.Verdict, ErrNoMetadata)
		}
	}
	if d.Legacy && len(d.Probes) > 0 && d.Probes[0].Status == http.StatusUnauthorized {
		// MCP 2025-03-26 without any metadata: the default endpoints, for
		// a server that does ask for authorization (a 401 at the MCP URL).
		base := origin(mu)
		d.Issuer, d.AuthServer = base, defaultEndpoints(base)
		msg := "no authorization server metadata either; using the MCP 2025-03-26 default endpoints " +
			base + "/authorize, /token and /register"
		d.Warnings = append(d.Warnings, msg)
		d.Probes = append(d.Probes, Probe{URL: base, Verdict: msg})
		return d, nil
	}
	return d, fmt.Errorf("discover: authorization servers %v: %w", issuers, ErrNoMetadata)
}

func (d *Discovery) lastProbe() *Probe { return &d.Probes[len(d.Probes)-1] }

// fetchASMetadata tries RFC 8414 path-inserted, OIDC path-inserted and OIDC
// path-appended metadata for issuer. It returns nil metadata when none of them
// is usable; err only when ctx ended or issuer is malformed.
func (d *Discovery) fetchASMetadata(ctx context.Context, hc *http.Client, issuer string) (*AuthServerMetadata, string, error) {
	iu, err := url.Parse(issuer)
	if err != nil || !iu.IsAbs() || iu.Host == "" {
		d.Probes = append(d.Probes, Probe{URL: issuer, Verdict: "invalid issuer URL"})
		return nil, "", nil
	}
	cands := dedupe([]string{
		wellKnownInserted(iu, wkAS),
		wellKnownInserted(iu, wkOIDC),
		wellKnownAppended(iu, wkOIDC),
	})
	for _, u := range cands {
		var md AuthServerMetadata
		ok, err := d.fetchJSON(ctx, hc, u, &md)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			continue
		}
		// RFC 8414 §3.3: the issuer must be identical to the one the URL
		// was built from; the iss of the authorization response (RFC 9207)
		// is compared to it exactly too.
		if md.Issuer != issuer {
			d.lastProbe().Verdict = fmt.Sprintf("issuer mismatch: document says %q, expected %q", md.Issuer, issuer)
			continue
		}
		if md.TokenEndpoint == "" {
			d.lastProbe().Verdict = "no token_endpoint"
			continue
		}
		d.lastProbe().Verdict = verdictOK
		return &md, u, nil
	}
	return nil, "", nil
}

func validatePRM(prm *ProtectedResourceMetadata, resources []string, allowHTTP bool) error {
	if !slices.ContainsFunc(resources, func(r string) bool { return sameURL(r, prm.Resource) }) {
		return &ResourceMismatchError{Declared: prm.Resource, Expected: resources[0]}
	}
	if len(prm.AuthorizationServers) == 0 {
		return errors.New("no authorization_servers listed")
	}
	for _, as := range prm.AuthorizationServers {
		if err := oauthwire.CheckSecure("authorization server", as, allowHTTP); err != nil {
			return err
		}
	}
	return nil
}

func validateAS(md *AuthServerMetadata, cfg DiscoverConfig) error {
	if err := oauthwire.CheckSecure("issuer", md.Issuer, cfg.AllowInsecureHTTP); err != nil {
		return err
	}
	eps := md.endpoints()
	names := make([]string, 0, len(eps))
	for n := range eps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if eps[n] == "" {
			continue
		}
		if err := oauthwire.CheckSecure(n, eps[n], cfg.AllowInsecureHTTP); err != nil {
			return err
		}
	}
	if !slices.Contains(md.CodeChallengeMethodsSupported, "S256") && !cfg.AllowMissingS256 {
		return fmt.Errorf("code_challenge_methods_supported %v: %w", md.CodeChallengeMethodsSupported, ErrS256Unsupported)
	}
	return nil
}

// probeChallenge sends an unauthenticated MCP initialize request and returns
// the Bearer challenge of the answer, if any.
func (d *Discovery) probeChallenge(ctx context.Context, hc *http.Client, mcpURL string) (*oauthwire.Challenge, error) {
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + mcpProtoVersion +
		`","capabilities":{},"clientInfo":{"name":"mcpauth","version":"1"}}}`
	p := Probe{URL: mcpURL}
	resp, body, err := d.postProbe(ctx, hc, mcpURL, &p, initialize, http.Header{"Mcp-Protocol-Version": {mcpProtoVersion}})
	if resp == nil {
		return nil, err
	}
	p.Status = resp.StatusCode
	ch, ok := d.resourceChallenge(resp.Header)
	switch {
	case ok && ch.Params["resource_metadata"] != "":
		p.Verdict = schemeName(ch) + " challenge with resource_metadata"
	case ok:
		p.Verdict = schemeName(ch) + " challenge without resource_metadata"
	default:
		p.Verdict, p.Answer = "no Bearer challenge", describeAnswer(resp, body)
	}
	d.Probes = append(d.Probes, p)
	switch {
	case ok:
		return &ch, nil
	case isSuccess(resp.StatusCode):
		// Some servers leave initialize open and protect only what comes
		// after it: ask one of those methods, so the login learns the
		// challenge's scope instead of guessing from scopes_supported.
		return d.probeMCP(ctx, hc, mcpURL, mcpProtoVersion, "tools/list", resp.Header.Get("Mcp-Session-Id"))
	case resp.StatusCode == http.StatusBadRequest:
		// A 2026-07-28 server (stateless) refuses initialize without the
		// per-request metadata (400): ask it the way it speaks.
		ch, err := d.probeMCP(ctx, hc, mcpURL, statelessProtoVersion, "server/discover", "")
		if ch != nil || err != nil {
			return ch, err
		}
		if last := d.Probes[len(d.Probes)-1]; isSuccess(last.Status) {
			return d.probeMCP(ctx, hc, mcpURL, statelessProtoVersion, "tools/list", "")
		}
	}
	return nil, nil
}

// statelessProtoVersion is the revision whose requests carry their own
// metadata instead of an initialize (SEP-2575).
const statelessProtoVersion = "2026-07-28"

// probeMCP sends one MCP request without a credential, as revision version
// speaks it (in session, when one was started), records the probe, and
// returns the answer's Bearer challenge.
func (d *Discovery) probeMCP(ctx context.Context, hc *http.Client, mcpURL, version, method, session string) (*oauthwire.Challenge, error) {
	params := "{}"
	if version >= statelessProtoVersion {
		params = `{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version +
			`","io.modelcontextprotocol/clientInfo":{"name":"mcpauth","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}`
	}
	hdr := http.Header{"Mcp-Protocol-Version": {version}}
	if version >= statelessProtoVersion {
		hdr.Set("Mcp-Method", method)
	}
	if session != "" {
		hdr.Set("Mcp-Session-Id", session)
	}
	p := Probe{URL: mcpURL + " (" + method + ")"}
	resp, body, err := d.postProbe(ctx, hc, mcpURL, &p, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":`+params+`}`, hdr)
	if resp == nil {
		return nil, err
	}
	p.Status = resp.StatusCode
	ch, ok := d.resourceChallenge(resp.Header)
	if !ok {
		p.Verdict, p.Answer = "no Bearer challenge", describeAnswer(resp, body)
		d.Probes = append(d.Probes, p)
		return nil, nil
	}
	p.Verdict = schemeName(ch) + " challenge"
	d.Probes = append(d.Probes, p)
	return &ch, nil
}

// resourceChallenge reads the MCP endpoint's challenge (ResourceChallenge)
// and keeps the schemes it offered: they say whether the resource takes
// DPoP-bound tokens (ResourceTakesDPoP).
func (d *Discovery) resourceChallenge(h http.Header) (oauthwire.Challenge, bool) {
	ch, ok := oauthwire.ResourceChallenge(h)
	if ok {
		d.ChallengeSchemes = oauthwire.ChallengeSchemes(h)
	}
	return ch, ok
}

// schemeName is c's scheme as the RFCs spell it, for probe verdicts.
func schemeName(c oauthwire.Challenge) string {
	if strings.EqualFold(c.Scheme, TokenTypeDPoP) {
		return TokenTypeDPoP
	}
	return "Bearer"
}

// ResourceTakesDPoP reports whether the resource says it accepts
// DPoP-bound tokens: a DPoP scheme in its challenge (RFC 9449 §7.1), or
// DPoP members in its metadata (RFC 9728 §2). The authorization server
// offering DPoP says nothing about the resource: most MCP servers take
// only Bearer tokens.
func (d *Discovery) ResourceTakesDPoP() bool {
	for _, s := range d.ChallengeSchemes {
		if strings.EqualFold(s, TokenTypeDPoP) {
			return true
		}
	}
	prm := d.ResourceMetadata
	return prm != nil && (prm.DPoPBoundAccessTokensRequired || len(prm.DPoPSigningAlgValuesSupported) > 0)
}

// postProbe POSTs one MCP message without a credential to mcpURL. A failure that got no answer is recorded as probe p (the host
// marked down when it refused) and comes back as a nil response, with an
// error only when ctx ended.
func (d *Discovery) postProbe(ctx context.Context, hc *http.Client, mcpURL string, p *Probe, msg string, hdr http.Header) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, mcpURL, strings.NewReader(msg))
	if err != nil {
		return nil, nil, fmt.Errorf("discover: %w", err)
	}
	req.Header = hdr
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, body, err := oauthwire.Do(hc, req)
	if err == nil {
		return resp, body, nil
	}
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("discover: %w", ctx.Err())
	}
	p.Verdict, p.Err = "network error", err.Error()
	if resp != nil {
		p.Status = resp.StatusCode
	}
	d.noteDown(req.URL, err)
	d.Probes = append(d.Probes, *p)
	return nil, nil, nil
}

// fetchJSON GETs u into v and records the probe. ok is false when the probe
// failed in a way that moves discovery on; err is set only when ctx ended.
func (d *Discovery) fetchJSON(ctx context.Context, hc *http.Client, u string, v any) (ok bool, err error) {
	if pu, perr := url.Parse(u); perr == nil && d.down[pu.Host] {
		return false, nil // its first refusal is the probe to show
	}
	p := Probe{URL: u}
	defer func() {
		if err == nil {
			d.Probes = append(d.Probes, p)
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		p.Verdict, p.Err = "invalid URL", err.Error()
		return false, nil
	}
	req.Header.Set("Accept", "application/json")
	resp, body, err := oauthwire.Do(notFollowing(hc), req)
	if resp != nil {
		p.Status = resp.StatusCode
	}
	switch {
	case err == nil && resp.StatusCode >= 300 && resp.StatusCode < 400:
		p.Verdict = verdictRedirected + " to " + redirectTarget(req.URL, resp.Header.Get("Location")) +
			": not followed (the document must be at this URL, RFC 8414 §3, RFC 9728 §3)"
		return false, nil
	case err != nil && ctx.Err() != nil:
		return false, fmt.Errorf("discover: %w", ctx.Err())
	case errors.Is(err, oauthwire.ErrTooLarge):
		p.Verdict = "body too large"
		return false, nil
	case err != nil:
		p.Verdict, p.Err = "network error", err.Error()
		d.noteDown(req.URL, err)
		return false, nil
	case resp.StatusCode != http.StatusOK:
		p.Verdict = fmt.Sprintf("HTTP %d", resp.StatusCode)
		return false, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		p.Verdict, p.Err = "not a JSON object", err.Error()
		return false, nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		p.Verdict, p.Err = "malformed metadata", err.Error()
		return false, nil
	}
	p.Verdict = verdictOK
	return true, nil
}

// verdictRedirected starts the verdict of a metadata URL that redirected.
const verdictRedirected = "redirected"

// notFollowing is hc without redirects: a metadata document is the one at
// its well-known URL (RFC 8414 §3, RFC 9728 §3), and one fetched elsewhere
// would be another origin's word on this server.
func notFollowing(hc *http.Client) *http.Client {
	c := *httpClient(hc)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// redirectTarget is the URL a Location header names, resolved against
// from, for messages (redacted; a Location that does not parse is quoted).
func redirectTarget(from *url.URL, loc string) string {
	if loc == "" {
		return "nowhere (no Location)"
	}
	u, err := from.Parse(loc)
	if err != nil {
		return fmt.Sprintf("%q", loc)
	}
	return u.Redacted()
}
