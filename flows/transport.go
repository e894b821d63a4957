package flows

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Transport is the one way a stored credential goes on a request: every
// credentialed request mcpauth sends (ping, the MCP check, the proxy)
// passes through one. It confines the request to Origin, sets the
// Authorization header (and, for a DPoP-bound token, a fresh proof),
// sends again once when a DPoP resource asks for a nonce, and asks Source
// for another credential when the resource refuses this one: a 401
// invalid_token (or a Bearer-only resource refusing a DPoP-bound token)
// for a renewal, a 403 insufficient_scope for a step-up. A request is sent
// again at most once after a renewal, and after at most StepUps step-ups.
type Transport struct {
	Base   http.RoundTripper // nil: http.DefaultTransport
	Origin Origin            // the only origin the credential goes to
	Source CredentialSource
	// OnRenewError is told why a renewal after refusal r failed; the
	// refusal then goes back to the caller as the server sent it (a proxy
	// passes it on). Nil: RoundTrip fails with a *RenewalError instead.
	OnRenewError func(r Refusal, err error)
	// StepUps is how often one request may be sent again after a step-up
	// (0: once); the source bounds them over its life too.
	StepUps int
}

// Credential is what a Transport presents: an access token (or API key),
// as a Bearer token or, with DPoP set, as a DPoP-bound one.
type Credential struct {
	Token string
	DPoP  *DPoP  // the key the token is bound to; nil for Bearer
	Scope string // the scope granted with the token, when known
}

// RenewReason says why the resource refused a credential.
type RenewReason int

const (
	// RenewInvalid: a 401 invalid_token (or a 401 naming no error), as
	// for an expired or revoked token: a refresh may help.
	RenewInvalid RenewReason = iota + 1
	// RenewBearerOnly: a 401 offering no DPoP scheme to a DPoP-bound
	// token (ResourceError.RefusesDPoP): only a Bearer token helps.
	RenewBearerOnly
	// RenewScope: a 403 insufficient_scope naming the scope needed
	// (SEP-2350): a token with more scope helps (a step-up).
	RenewScope
)

// Refusal is a resource's refusal of a credential.
type Refusal struct {
	Why RenewReason
	// Required is the scope a 403 insufficient_scope asked for (RenewScope).
	Required string
	// Err is the refusal itself.
	Err *ResourceError
}

// CredentialSource gives a Transport its credential and renews it.
// Implementations must be safe for concurrent use; creds implements one
// over the token store.
type CredentialSource interface {
	// Credential returns the credential to send now.
	Credential(ctx context.Context) (Credential, error)
	// Renew returns the credential to send again with after the resource
	// refused rejected, and ok=false when there is none better (the
	// refusal stands). A source that renewed meanwhile, for another
	// request, returns its current credential.
	Renew(ctx context.Context, rejected Credential, r Refusal) (c Credential, ok bool, err error)
}

// RenewalError is a renewal that failed after the resource refused the
// credential (Transport without OnRenewError).
type RenewalError struct {
	Why RenewReason
	Err error
}

func (e *RenewalError) Error() string { return e.Err.Error() }
func (e *RenewalError) Unwrap() error { return e.Err }

// StaticSource is a credential that is never renewed.
func StaticSource(c Credential) CredentialSource { return staticSource{c} }

type staticSource struct{ c Credential }

func (s staticSource) Credential(context.Context) (Credential, error) { return s.c, nil }
func (s staticSource) Renew(_ context.Context, c Credential, _ Refusal) (Credential, bool, error) {
	return c, false, nil
}

// Client returns a copy of hc that sends through t (t.Base defaults to
// hc's transport) and follows redirects only within t.Origin (Confine).
func (t *Transport) Client(hc *http.Client) *http.Client {
	c := *httpClient(hc)
	tt := &Transport{Base: t.Base, Origin: t.Origin, Source: t.Source, OnRenewError: t.OnRenewError, StepUps: t.StepUps}
	if tt.Base == nil {
		tt.Base = c.Transport
	}
	c.Transport = tt
	return Confine(&c, t.Origin)
}

// CredentialHeader returns the headers that present c on one request,
// method at rawURL (for a DPoP-bound token the proof is for that request
// only).
func CredentialHeader(method, rawURL string, c Credential) (http.Header, error) {
	req := &http.Request{Method: method, Header: http.Header{}}
	if c.DPoP != nil { // only a proof names the request
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, fmt.Errorf("DPoP proof: %w", err)
		}
		req.URL = u
	}
	if err := setCredential(req, c); err != nil {
		return nil, err
	}
	return req.Header, nil
}

// setCredential sets the headers that present c on req: Authorization
// (Bearer, or DPoP with a fresh proof in a DPoP header).
func setCredential(req *http.Request, c Credential) error {
	if c.DPoP == nil {
		req.Header.Set("Authorization", "Bearer "+c.Token)
		req.Header.Del("DPoP")
		return nil
	}
	p, err := c.DPoP.Proof(req.Method, req.URL.String(), c.Token)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", TokenTypeDPoP+" "+c.Token)
	req.Header.Set("DPoP", p)
	return nil
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.Origin.Holds(req.URL) {
		if req.Body != nil {
			req.Body.Close() // RoundTrip owns the body, sent or not
		}
		return nil, &CrossOriginError{Origin: t.Origin, URL: req.URL.Redacted()}
	}
	body, err := replayable(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	cred, err := t.Source.Credential(ctx)
	if err != nil {
		return nil, err
	}
	renewed := false
	for stepUps := 0; ; {
		resp, err := t.send(req, body, cred)
		if err != nil {
			return nil, err
		}
		refusal, refused := refusalOf(resp, cred)
		switch {
		case !refused:
			return resp, nil
		case refusal.Why == RenewScope && stepUps < max(t.StepUps, 1):
			stepUps++
		case refusal.Why != RenewScope && !renewed:
			renewed = true
		default:
			return resp, nil
		}
		next, ok, err := t.Source.Renew(ctx, cred, refusal)
		if err != nil {
			if t.OnRenewError == nil {
				drain(resp)
				return nil, &RenewalError{Why: refusal.Why, Err: err}
			}
			t.OnRenewError(refusal, err)
			return resp, nil
		}
		if !ok {
			return resp, nil
		}
		drain(resp)
		cred = next
	}
}

// send sends req with c, and once more when a DPoP resource's 401 asks
// for a nonce it has just sent (RFC 9449 §9). Every nonce is kept.
func (t *Transport) send(req *http.Request, body func() (io.ReadCloser, error), c Credential) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		if body != nil {
			b, err := body()
			if err != nil {
				return nil, fmt.Errorf("sending %s again: %w", req.URL.Redacted(), err)
			}
			r.Body = b
		}
		if err := setCredential(r, c); err != nil {
			return nil, err
		}
		resp, err := base.RoundTrip(r)
		if err != nil || c.DPoP == nil {
			return resp, err
		}
		nonce := resp.Header.Get("DPoP-Nonce")
		c.DPoP.SetNonce(r.URL.String(), nonce)
		if attempt > 0 || nonce == "" || resp.StatusCode != http.StatusUnauthorized || !asksForNonce(resp.Header) {
			return resp, nil
		}
		drain(resp)
	}
}

// refusalOf reads a refusal a renewal may answer: a 401 invalid_token, or
// a 403 insufficient_scope that names a scope.
func refusalOf(resp *http.Response, c Credential) (Refusal, bool) {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return Refusal{}, false
	}
	re := NewResourceError(resp)
	switch {
	case re.InvalidToken() && c.DPoP != nil && re.RefusesDPoP():
		return Refusal{Why: RenewBearerOnly, Err: re}, true
	case re.InvalidToken():
		return Refusal{Why: RenewInvalid, Err: re}, true
	}
	if scope, ok := RequiredScope(re); ok {
		return Refusal{Why: RenewScope, Required: scope, Err: re}, true
	}
	return Refusal{}, false
}

// replayable returns what gives req's body again for each send (nil for
// none): GetBody when the request has it, else the body read once.
func replayable(req *http.Request) (func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		return req.GetBody, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, nil
}

// drain reads a little of an answer that is not passed on, so the
// connection can be reused, and closes it.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}
