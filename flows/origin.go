package flows

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// The one rule for every request that carries a credential (an access
// token, a DPoP proof, a client secret or assertion, a code and its
// verifier, a refresh token): it goes only to the origin the credential was
// issued for or discovered at. Confine builds the client that enforces it;
// the token requests, ping, the MCP check, DPoP and the proxy all send
// through one.

// ErrCrossOrigin matches every refusal to send a credential to another
// origin (*CrossOriginError, *RedirectError).
var ErrCrossOrigin = errors.New("another origin")

// Origin is a URL's origin (RFC 6454 §4): scheme, host and port. Two
// spellings of one origin give equal Origins: scheme and host case, a
// default port written or left out, a host name's trailing dot, and the
// forms of one IP address. Userinfo, path, query and fragment are not part
// of it.
type Origin struct {
	Scheme string // "http" or "https"
	Host   string // lower case, no trailing dot; an IP in canonical form, without brackets
	Port   int
}

// OriginOf returns the origin of an absolute http or https URL.
func OriginOf(raw string) (Origin, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Origin{}, fmt.Errorf("parsing %q: %w", raw, err)
	}
	return originOfURL(u)
}

func originOfURL(u *url.URL) (Origin, error) {
	o := Origin{Scheme: strings.ToLower(u.Scheme)}
	switch o.Scheme {
	case "https":
		o.Port = 443
	case "http":
		o.Port = 80
	default:
		return Origin{}, fmt.Errorf("%q is not an http or https URL", u.Redacted())
	}
	host := u.Hostname()
	if host == "" {
		return Origin{}, fmt.Errorf("%q has no host", u.Redacted())
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Origin{}, fmt.Errorf("%q has an invalid port", u.Redacted())
		}
		o.Port = n
	}
	zone := ""
	if i := strings.IndexByte(host, '%'); i >= 0 { // an IPv6 zone is part of the address
		host, zone = host[:i], host[i:]
	}
	if ip := net.ParseIP(host); ip != nil {
		if zone != "" && !validZone(zone[1:]) {
			return Origin{}, fmt.Errorf("%q has an invalid IPv6 zone", u.Redacted())
		}
		o.Host = ip.String() + zone
		return o, nil
	}
	o.Host = strings.TrimSuffix(strings.ToLower(host), ".")
	if o.Host == "" || strings.HasSuffix(o.Host, ".") {
		return Origin{}, fmt.Errorf("%q has an invalid host", u.Redacted())
	}
	return o, nil
}

// validZone reports whether zone is an interface name or number: RFC 3986
// unreserved characters only, which also keeps String's "%25" escaping the
// whole of RFC 6874's (a zone of other bytes names no real interface).
func validZone(zone string) bool {
	if zone == "" {
		return false
	}
	for _, c := range []byte(zone) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0) {
			return false
		}
	}
	return true
}

// String is scheme://host[:port], the port left out when it is the
// scheme's default.
func (o Origin) String() string {
	host := o.Host
	if strings.Contains(host, ":") {
		host = "[" + strings.Replace(host, "%", "%25", 1) + "]" // RFC 6874 zone
	}
	if (o.Scheme == "https" && o.Port == 443) || (o.Scheme == "http" && o.Port == 80) {
		return o.Scheme + "://" + host
	}
	return o.Scheme + "://" + host + ":" + strconv.Itoa(o.Port)
}

// Secure reports https, or http to a loopback host (RFC 8252 §8.3): the
// only origins a credential may go to without --allow-insecure-http.
func (o Origin) Secure() bool {
	return o.Scheme == "https" || oauthwire.IsLoopbackHost(strings.SplitN(o.Host, "%", 2)[0])
}

// Holds reports whether u is on origin o.
func (o Origin) Holds(u *url.URL) bool {
	uo, err := originOfURL(u)
	return err == nil && uo == o
}

// SameOrigin reports whether two URLs share an origin; an unparsable URL
// shares none.
func SameOrigin(a, b string) bool {
	oa, err := OriginOf(a)
	if err != nil {
		return false
	}
	ob, err := OriginOf(b)
	return err == nil && oa == ob
}

// CrossOriginError is a request with a credential for Origin that would
// have gone to URL, on another origin: it was not sent.
type CrossOriginError struct {
	Origin Origin
	URL    string
}

func (e *CrossOriginError) Error() string {
	return fmt.Sprintf("refusing to send the credential for %s to %s, another origin", e.Origin, e.URL)
}

func (e *CrossOriginError) Is(target error) bool { return target == ErrCrossOrigin }

// RedirectError is a redirect to another origin that was not followed: a
// credential would have gone with it, and the other origin's answer would
// have been taken as the server's.
type RedirectError struct {
	From, To string
	Status   int
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s redirected (HTTP %d) to %s, another origin: not followed, credentials stay with the origin they belong to", e.From, e.Status, e.To)
}

func (e *RedirectError) Is(target error) bool { return target == ErrCrossOrigin }

// maxRedirects matches net/http's own limit.
const maxRedirects = 10

// Confine returns a copy of hc for requests whose credential belongs to
// origin o. A request to any other origin fails before anything is sent
// (*CrossOriginError), and a redirect to another origin is not followed
// (*RedirectError): Go's client would drop a Bearer header only when the
// host name changes, would keep it across ports and schemes, re-sends a
// 307/308 body (codes, verifiers, refresh tokens, secrets) to any origin,
// and never sees headers a transport adds. Redirects within o are
// followed, up to ten. Confining a confined client again narrows it: both
// origins must hold, so a client confined to one origin never widens.
func Confine(hc *http.Client, o Origin) *http.Client {
	c := *httpClient(hc)
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = &confinedTransport{origin: o, next: next}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if !o.Holds(req.URL) {
			status := 0
			if req.Response != nil {
				status = req.Response.StatusCode
			}
			return &RedirectError{From: via[len(via)-1].URL.Redacted(), To: req.URL.Redacted(), Status: status}
		}
		return nil
	}
	return &c
}

// ConfineTo is Confine for the origin of rawURL.
func ConfineTo(hc *http.Client, rawURL string) (*http.Client, error) {
	o, err := OriginOf(rawURL)
	if err != nil {
		return nil, err
	}
	return Confine(hc, o), nil
}

type confinedTransport struct {
	origin Origin
	next   http.RoundTripper
}

func (t *confinedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.origin.Holds(req.URL) {
		if req.Body != nil {
			req.Body.Close() // RoundTrip owns the body, sent or not
		}
		return nil, &CrossOriginError{Origin: t.origin, URL: req.URL.Redacted()}
	}
	return t.next.RoundTrip(req)
}
