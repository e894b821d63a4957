package conformance

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Target is the deployment under test and what the suite may use against it.
type Target struct {
	BaseURL string       // e.g. https://mcp.example.com, no trailing slash needed
	HTTP    *http.Client // nil: a client with a 30 s timeout; redirects are never followed
	// Approver completes consent screens and device approvals as the test user.
	// Nil: checks that need approval are skipped.
	Approver Approver
	// Clock moves the server's clock. Nil for deployments without a test clock.
	Clock ClockDriver
	// APIKey is the test user's API key; when empty it is read from Settings by
	// the Approver.
	APIKey string
	// Session holds the cookies of a logged-in browser session (auth_token);
	// when empty the Approver is asked for one if it implements SessionSource.
	Session []*http.Cookie
	// CIMDPrivate says the target fetches Client ID Metadata Documents from
	// loopback addresses (mcpauth serve --cimd-allow-private) and trusts the
	// certificate of Documents: the checks that have it fetch the suite's
	// documents need both. Without it the SSRF guard is checked instead.
	CIMDPrivate bool
	// Documents serves the suite's metadata documents on loopback. Nil: the
	// run starts one with a self-signed certificate when a check needs it.
	Documents *DocumentHost
	// Clients are clients registered with the authorization server
	// beforehand, for one without dynamic registration: the mcp profile
	// uses the first for every flow instead of registering its own (and
	// skips the registration checks), the second where a check presents
	// what was issued to one client as another. Their redirect URIs must
	// include the suite's (RedirectURI). Every check then shares one
	// client, so the checks that sign in run one at a time.
	Clients []PreRegisteredClient
	// Machine are the operator's machine clients for the client
	// credentials checks (area machine); nil skips them.
	Machine *MachineClients
}

// PreRegisteredClient is a client the authorization server already knows;
// Secret is empty for a public client.
type PreRegisteredClient struct{ ID, Secret string }

// Approver acts as the test user in the browser. Checks call it with URLs the
// service produced; it must not judge the outcome, only report what happened.
// Package approve has the suite's approvers.
type Approver interface {
	// ApproveConsent opens authURL (a GET /oauth/authorize request), logs in if
	// needed, approves, and returns the URL the browser was sent to at the
	// client's redirect_uri (which carries code and state, or an error).
	ApproveConsent(ctx context.Context, authURL string) (*url.URL, error)
	// DenyConsent is ApproveConsent, pressing deny.
	DenyConsent(ctx context.Context, authURL string) (*url.URL, error)
	// ApproveDevice enters userCode at verificationURI and approves.
	ApproveDevice(ctx context.Context, verificationURI, userCode string) error
	// DenyDevice enters userCode at verificationURI and denies.
	DenyDevice(ctx context.Context, verificationURI, userCode string) error
	// APIKey returns the test user's current API key as Settings shows it.
	APIKey(ctx context.Context) (string, error)
	// RegenerateAPIKey regenerates the key in Settings and returns both keys.
	RegenerateAPIKey(ctx context.Context) (old, new string, err error)
}

// SessionSource is implemented by approvers that can log in and hand over the
// session cookies (approve.FormApprover does).
type SessionSource interface {
	// Session returns the cookies to send to the service. When the approver
	// saw the Set-Cookie of the login callback, the auth_token cookie carries
	// its attributes (HttpOnly, Secure, SameSite, MaxAge) as set.
	Session(ctx context.Context) ([]*http.Cookie, error)
}

// SignInFollower is implemented by approvers that can sign in afresh from
// a given page of the service (approve.FormApprover does): it returns the
// raw Location the service redirects to once the session is set, and the
// base URL a browser would resolve it against.
type SignInFollower interface {
	SignInFrom(ctx context.Context, path string) (location string, base *url.URL, err error)
}

// ClockDriver moves the server's clock forward.
type ClockDriver interface {
	Advance(ctx context.Context, d time.Duration) error
}
