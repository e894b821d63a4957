package server

// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document,
// MCP 2026-07-28): a client_id that is an https URL names a JSON document the
// client hosts. The server fetches it (through an SSRF guard), checks it,
// and caches it in the store so that every instance shares one copy.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpauth/mcpauth/server/store"
)

const (
	cimdMaxBytes      = 64 << 10
	cimdTimeout       = 5 * time.Second
	cimdDefaultMaxAge = 5 * time.Minute
	cimdMinMaxAge     = time.Minute
	cimdMaxMaxAge     = 24 * time.Hour
	cimdMaxURLLen     = 2000
)

// MetadataDocumentConfig configures how Client ID Metadata Documents are
// fetched. The zero value is production: system roots, a 5 s timeout, the
// system resolver, and no private addresses.
type MetadataDocumentConfig struct {
	// AllowPrivateAddresses lets the server fetch documents from loopback,
	// private, link-local and other internal addresses. Local testing only:
	// anyone who can start an authorization request chooses the URL.
	AllowPrivateAddresses bool
	// RootCAs verifies the document servers; nil means the system roots.
	RootCAs *x509.CertPool
	// Timeout bounds one fetch from dial to last byte; zero means 5 s.
	Timeout time.Duration
	// LookupIP resolves a host name or IP literal; nil means the system
	// resolver. Every address it returns is checked before it is dialled.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// MaxFetches caps the fetches in flight across the server; zero means 8.
	MaxFetches int
	// SlotWait is how long a fetch waits for a free slot before its request
	// is answered 503 temporarily_unavailable; zero means 2 s.
	SlotWait time.Duration
	// FailureCache is how long a document that could not be used is
	// remembered (in memory), so naming it again fetches nothing; zero
	// means 60 s.
	FailureCache time.Duration
}

// cimdError says why a metadata document cannot be used; reason is shown to
// the user on the authorization error page. It unwraps to store.ErrNotFound:
// to the token and device endpoints such an id names no usable client, so
// they answer invalid_client as for an unknown registered id.
type cimdError struct{ reason string }

func (e *cimdError) Error() string { return "client metadata document: " + e.reason }
func (e *cimdError) Unwrap() error { return store.ErrNotFound }

func cimdErrorf(format string, args ...any) *cimdError {
	return &cimdError{reason: fmt.Sprintf(format, args...)}
}

// isMetadataDocumentID tells a metadata document URL from a registered id
// (registered ids are base62, so they never look like one).
func isMetadataDocumentID(id string) bool { return strings.HasPrefix(id, "https://") }

// checkMetadataDocumentURL returns why raw cannot be a client_id URL, or "".
// The draft's rules: https, a path, no fragment, no user info, no dot
// segments.
func checkMetadataDocumentURL(raw string) string {
	if len(raw) > cimdMaxURLLen {
		return fmt.Sprintf("is longer than %d characters", cimdMaxURLLen)
	}
	if !utf8.ValidString(raw) || strings.IndexFunc(raw, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0 {
		return "contains spaces or control characters"
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "is not a valid URL"
	case u.Scheme != "https" || u.Opaque != "":
		return "must be an https URL"
	case u.User != nil:
		return "must not contain user info"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "must not contain a fragment"
	case u.Hostname() == "":
		return "needs a host"
	case u.Path == "" || u.Path == "/":
		return "must have a path"
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return "must not contain . or .. path segments"
		}
	}
	return ""
}

// metadataClient returns the client a metadata document describes: from
// the store's cache while it is fresh on the server's clock, else fetched.
// A request that would fetch is charged to its caller's fetch budget first,
// and joins a fetch of the same URL already in flight.
func (s *Server) metadataClient(ctx context.Context, id string) (store.Client, error) {
	if reason := checkMetadataDocumentURL(id); reason != "" {
		return store.Client{}, cimdErrorf("the client_id URL %s", reason)
	}
	if c, ok, err := s.cachedMetadataClient(ctx, id); ok {
		return c, err
	}
	if ok, wait := s.limits.cimdFetch.Allow(s.limits.caller(clientAddrFrom(ctx))); !ok {
		return store.Client{}, &cimdUnavailableError{wait: wait}
	}
	// Detached from the request that starts it, so that request going away
	// does not fail the others waiting; the fetch timeout bounds it.
	v, err, _ := s.cimdFlights.Do(id, func() (any, error) {
		return s.fetchMetadataClient(context.WithoutCancel(ctx), id)
	})
	c, _ := v.(store.Client)
	return c, err
}

// cachedMetadataClient answers from the store's cache, or with the failure
// remembered for id; ok is false when neither knows the document. The
// store comes first: another instance may have fetched a good copy since.
func (s *Server) cachedMetadataClient(ctx context.Context, id string) (c store.Client, ok bool, err error) {
	now := s.clock.Now()
	d, err := s.store.GetMetadataDocument(ctx, id)
	switch {
	case err == nil && now.Before(d.ExpiresAt):
		if c, perr := parseMetadataDocument(s.grants, id, d.Body); perr == nil {
			c.CreatedAt = d.FetchedAt
			return c, true, nil
		}
		// Cached under older rules: fetch it again.
	case err != nil && !isNotFound(err):
		return store.Client{}, true, fmt.Errorf("reading cached metadata document: %w", err)
	}
	if err := s.cimdFailed.get(id, now); err != nil {
		return store.Client{}, true, err
	}
	return store.Client{}, false, nil
}

// fetchMetadataClient fetches, checks and caches the document: a good one
// in the store for its max-age, a failed one in memory for FailureCache,
// so a fix on the client's side applies within that time.
func (s *Server) fetchMetadataClient(ctx context.Context, id string) (store.Client, error) {
	// The fetch that ran while this request looked may have settled it.
	if c, ok, err := s.cachedMetadataClient(ctx, id); ok {
		return c, err
	}
	now := s.clock.Now()
	body, maxAge, err := s.cimd.fetch(ctx, id)
	var c store.Client
	if err == nil {
		c, err = parseMetadataDocument(s.grants, id, body)
	}
	var ce *cimdError
	if errors.As(err, &ce) {
		s.cimdFailed.put(id, err, s.clock.Now())
		s.log.Warn("client metadata document refused", "request_id", requestID(ctx), "client_id", truncate(id, 200), "err", err)
	}
	if err != nil {
		return store.Client{}, err
	}
	if err := s.store.PutMetadataDocument(ctx, store.MetadataDocument{URL: id, Body: body, FetchedAt: now, ExpiresAt: now.Add(maxAge)}); err != nil {
		return store.Client{}, fmt.Errorf("caching metadata document: %w", err)
	}
	s.log.Info("client metadata document fetched", "request_id", requestID(ctx), "client_id", id, "cache_for", maxAge)
	c.CreatedAt = now
	return c, nil
}

// parseMetadataDocument checks a fetched document for the client_id it was
// fetched from and returns the client it describes. Unknown fields are
// ignored, as in RFC 7591; fields we rely on must have the right type.
func parseMetadataDocument(grants grantRegistry, clientID string, body []byte) (store.Client, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return store.Client{}, cimdErrorf("the document is not a JSON object")
	}
	var doc struct {
		ClientID, ClientName, TokenEndpointAuthMethod string
		RedirectURIs, GrantTypes                      []string
	}
	if bad := decodeFields(raw, []metadataField{
		{"client_id", &doc.ClientID},
		{"client_name", &doc.ClientName},
		{"token_endpoint_auth_method", &doc.TokenEndpointAuthMethod},
		{"redirect_uris", &doc.RedirectURIs},
		{"grant_types", &doc.GrantTypes},
	}); bad != "" {
		return store.Client{}, cimdErrorf("%s has the wrong type", bad)
	}
	if doc.ClientID != clientID {
		return store.Client{}, cimdErrorf("its client_id %q is not the URL it was fetched from", truncate(doc.ClientID, 100))
	}
	for _, k := range []string{"client_secret", "client_secret_expires_at"} {
		if _, ok := raw[k]; ok {
			return store.Client{}, cimdErrorf("it contains %s; a metadata document describes a public client", k)
		}
	}
	if m := doc.TokenEndpointAuthMethod; m != "" && m != "none" {
		return store.Client{}, cimdErrorf("token_endpoint_auth_method is %q; only none is supported (public clients with PKCE)", truncate(m, 50))
	}
	name := strings.TrimSpace(doc.ClientName)
	if !validClientName(name) {
		return store.Client{}, cimdErrorf("client_name must be at most %d printable characters", maxClientNameLen)
	}
	switch n := len(doc.RedirectURIs); {
	case n == 0:
		return store.Client{}, cimdErrorf("redirect_uris is missing or empty")
	case n > maxRedirectURIs:
		return store.Client{}, cimdErrorf("it lists more than %d redirect_uris", maxRedirectURIs)
	}
	for _, u := range doc.RedirectURIs {
		if reason := checkRedirectURI(u); reason != "" {
			return store.Client{}, cimdErrorf("redirect_uri %q: %s", truncate(u, 100), reason)
		}
	}
	// A document is written for many servers: grant types we do not
	// support, or that are not for public clients, are ignored rather than
	// refused.
	names := []string{grantAuthCode}
	if doc.GrantTypes != nil {
		names = grants.forPublicClients(doc.GrantTypes)
	}
	return store.Client{
		ID: clientID, Name: name, RedirectURIs: doc.RedirectURIs, GrantTypes: names,
		ResponseTypes: grants.responseTypesFor(names), Scope: scopeMCP, TokenEndpointAuthMethod: "none",
	}, nil
}

// cimdFetcher fetches metadata documents over its own transport: no proxy
// (a proxy would dial the target itself, past the guard), no redirects, and
// a dialer that refuses internal addresses.
type cimdFetcher struct {
	client  *http.Client
	timeout time.Duration
	slots   *fetchSlots
}

func newCIMDFetcher(cfg MetadataDocumentConfig, busy func()) *cimdFetcher {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = cimdTimeout
	}
	lookup := cfg.LookupIP
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	g := &guardedDialer{lookup: lookup, allowPrivate: cfg.AllowPrivateAddresses}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            g.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 32 << 10,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	return &cimdFetcher{
		timeout: timeout,
		slots:   newFetchSlots(cfg.MaxFetches, cfg.SlotWait, busy),
		client: &http.Client{
			Transport:     tr,
			Timeout:       timeout, // dial, TLS, headers and body together
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// fetch GETs the document, in one of the server's fetch slots, and returns
// its body and how long to cache it.
func (f *cimdFetcher) fetch(ctx context.Context, rawURL string) ([]byte, time.Duration, error) {
	release, err := f.slots.acquire()
	if err != nil {
		return nil, 0, err
	}
	defer release()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, 0, cimdErrorf("the client_id URL is not valid")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "mcpauth-reference-server")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, 0, f.fetchError(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, 0, cimdErrorf("fetching it was redirected (HTTP %d); redirects are not followed", resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return nil, 0, cimdErrorf("fetching it returned HTTP %d, not 200", resp.StatusCode)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, 0, cimdErrorf("it was served as %q, not application/json", truncate(resp.Header.Get("Content-Type"), 50))
	}
	if resp.ContentLength > cimdMaxBytes {
		return nil, 0, cimdErrorf("it is larger than %d KiB", cimdMaxBytes>>10)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, cimdMaxBytes+1))
	if err != nil {
		return nil, 0, f.fetchError(err)
	}
	if len(body) > cimdMaxBytes {
		return nil, 0, cimdErrorf("it is larger than %d KiB", cimdMaxBytes>>10)
	}
	return body, cacheLifetime(resp.Header), nil
}

// fetchError turns a transport failure into a reason fit for the user: the
// guard's refusal, a timeout, or a generic failure (details go to the log
// through the wrapped error, not to the page).
func (f *cimdFetcher) fetchError(err error) error {
	var be *blockedAddrError
	var ne net.Error
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.As(err, &be):
		return &cimdError{reason: be.Error()}
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return cimdErrorf("it could not be fetched within %s", f.timeout)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("%w (%v)", cimdErrorf("its host name could not be resolved"), err)
	case errors.As(err, &certErr):
		return fmt.Errorf("%w (%v)", cimdErrorf("its host's TLS certificate could not be verified"), err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w (%v)", cimdErrorf("its host refused the connection"), err)
	}
	return fmt.Errorf("%w (%v)", cimdErrorf("it could not be fetched"), err)
}

// cacheLifetime reads Cache-Control max-age, clamped to 60 s..24 h;
// default 5 min. no-store and no-cache get the minimum: a client cannot
// make us fetch on every request.
func cacheLifetime(h http.Header) time.Duration {
	d := cimdDefaultMaxAge
	for _, v := range h.Values("Cache-Control") {
		for _, directive := range strings.Split(v, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(directive), "=")
			switch strings.ToLower(name) {
			case "no-store", "no-cache":
				return cimdMinMaxAge
			case "max-age":
				n, err := strconv.ParseUint(strings.Trim(value, `"`), 10, 64)
				if errors.Is(err, strconv.ErrRange) {
					n = math.MaxUint64 // RFC 9111 §1.2.2: a too-large value means "very long"
				} else if err != nil {
					continue
				}
				d = time.Duration(min(n, uint64(cimdMaxMaxAge/time.Second))) * time.Second
			}
		}
	}
	return min(max(d, cimdMinMaxAge), cimdMaxMaxAge)
}

// guardedDialer resolves the host itself and dials only addresses that
// passed the check, so the address checked is the address connected to:
// a second DNS answer cannot swap in another one.
type guardedDialer struct {
	lookup       func(ctx context.Context, host string) ([]netip.Addr, error)
	allowPrivate bool
}

// blockedAddrError is the guard's refusal.
type blockedAddrError struct {
	host string
	addr netip.Addr
}

func (e *blockedAddrError) Error() string {
	if e.host == e.addr.String() {
		return fmt.Sprintf("its host %s is a private or reserved address, which this server does not fetch from", e.host)
	}
	return fmt.Sprintf("its host %s resolves to %s, a private or reserved address, which this server does not fetch from", e.host, e.addr)
}

func (g *guardedDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port: %w", addr, err)
	}
	// IP literals go through lookup too (the system resolver returns them
	// as they are), so a test resolver sees every address.
	ips, err := g.lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolving %s: no addresses", host)
	}
	d := net.Dialer{Control: g.control}
	var errs []error
	for _, ip := range ips {
		if !g.allowPrivate && blockedAddr(ip) {
			errs = append(errs, &blockedAddrError{host: host, addr: ip.Unmap()})
			continue
		}
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// control checks the socket's address once more just before connect(2):
// whatever path led here, nothing internal is reached.
func (g *guardedDialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("guard: unparsable address %q: %w", address, err)
	}
	if !g.allowPrivate && blockedAddr(ap.Addr()) {
		return &blockedAddrError{host: ap.Addr().Unmap().String(), addr: ap.Addr().Unmap()}
	}
	return nil
}

// Prefixes outside netip's predicates that still reach no public host.
var reservedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64 (RFC 8215)
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052: embeds an IPv4 address
	sixToFour = netip.MustParsePrefix("2002::/16")    // RFC 3056: embeds an IPv4 address
)

// blockedAddr reports whether ip is loopback, private, link-local,
// multicast, unspecified or otherwise internal or reserved, looking through
// IPv4-mapped, NAT64 and 6to4 forms at the IPv4 address they reach.
func blockedAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.Zone() != "" {
		return true
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range reservedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return blockedAddr(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(ip):
		return blockedAddr(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return false
}
