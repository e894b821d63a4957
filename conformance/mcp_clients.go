package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sync"

	"github.com/mcpauth/mcpauth/flows"
)

// The mcp profile's clients and setup steps. Every check that signs the
// test user in holds a client of its own while it runs: an authorization
// server may replace the user's grant to a client on each sign-in
// (revoking what it issued before), so checks sharing one would void each
// other's tokens, depending on how they happen to be scheduled. A client is
// handed on to the next such check once its check is done, so a run
// registers about as many as run at once, not one per check (registration
// endpoints are rate limited). Pre-registered clients (Target.Clients)
// cannot be multiplied: the runner signs in with them one check at a time
// instead.

// The checks that report the failure of a setup step many checks share. A
// failure there is their finding; the other checks that needed the step
// are blocked by them, never failed for it.
const (
	stepChallenge        = "MCP-01" // the MCP endpoint answers
	stepResourceMetadata = "MCP-02" // protected resource metadata
	stepASMetadata       = "MCP-04" // authorization server metadata
	stepRegister         = "MCP-10" // dynamic registration
	stepSignIn           = "MCP-07" // sign-in, consent and the code exchange
)

// stepError is a setup failure and the check that reports it.
type stepError struct {
	owner string
	err   error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// blockedBy reports err, the failure of a setup step that check owner
// reports: as it is in owner itself (the finding, or inconclusive when the
// suite's side failed), as blocked by owner in every other check. Skips,
// blocks by an earlier step and the run's own cancellation pass through.
func (e *Env) blockedBy(owner string, err error) error {
	var (
		se *SkipError
		be *BlockedError
		ie *InconclusiveError
		fe *FailError
	)
	switch {
	case err == nil || e.Check.ID == owner || errors.As(err, &se) || errors.As(err, &be):
		return err
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &ie):
		return &BlockedError{By: owner, Reason: ie.Reason, Flag: ie.Flag}
	case errors.As(err, &fe):
		return &BlockedError{By: owner, Reason: fe.Msg}
	}
	return &BlockedError{By: owner, Reason: err.Error()}
}

// mcpClient is the client a check uses: its own when it signs in, else the
// run's; the first pre-registered client when there are any.
func (e *Env) mcpClient(ctx context.Context) (string, error) { return e.mcpClientN(ctx, 0) }

// mcpOtherClient is a second client, shared by the run (it never signs
// in), for the checks that one client cannot use what was issued to
// another.
func (e *Env) mcpOtherClient(ctx context.Context) (string, error) { return e.mcpClientN(ctx, 1) }

func (e *Env) mcpClientN(ctx context.Context, which int) (string, error) {
	if n := len(e.target.Clients); n > 0 {
		if which >= n {
			return "", Skip("needs a second pre-registered client (--client-id-2)")
		}
		return e.target.Clients[which].ID, nil
	}
	s, err := e.site(ctx)
	if err != nil {
		return "", err
	}
	if s.meta.RegistrationEndpoint == "" {
		return "", Skip("the authorization server has no registration_endpoint: give a pre-registered client (--client-id)")
	}
	l := &e.run.mcpClients[which]
	own := which == 0 && e.Check.signsIn()
	if own {
		l = &e.ownClient
	}
	id, err := l.get(ctx, func(ctx context.Context) (string, error) {
		if own {
			if id, ok := e.run.idle.take(); ok {
				return id, nil
			}
		}
		return e.registerMCPClient(ctx, s)
	})
	if err != nil {
		return "", e.blockedBy(stepRegister, setupFail("registering a client", err))
	}
	return id, nil
}

// idleClients are the registered clients no check holds.
type idleClients struct {
	mu  sync.Mutex
	ids []string
}

func (p *idleClients) take() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ids) == 0 {
		return "", false
	}
	id := p.ids[len(p.ids)-1]
	p.ids = p.ids[:len(p.ids)-1]
	return id, true
}

// releaseClient hands the check's own client on, once the check is done.
func (e *Env) releaseClient() {
	if id, err := e.ownClient.peek(); err == nil && id != "" {
		e.run.idle.mu.Lock()
		e.run.idle.ids = append(e.run.idle.ids, id)
		e.run.idle.mu.Unlock()
	}
}

// mcpClientMetadata is what the profile registers: what the CLI registers.
func (e *Env) mcpClientMetadata(s *mcpSite) flows.ClientMetadata {
	return flows.NativeClientMetadata(s.discovery(), "mcpauth conformance (mcp profile)", []string{e.redirectURI()}, s.scope())
}

// registrationEndpoint is where the registration checks register, or why
// they are skipped.
func (e *Env) registrationEndpoint(s *mcpSite) (string, error) {
	if len(e.target.Clients) > 0 {
		return "", Skip("the run uses a pre-registered client (--client-id); dynamic registration is not checked")
	}
	if s.meta.RegistrationEndpoint == "" {
		return "", Skip("the authorization server has no registration_endpoint")
	}
	return s.meta.RegistrationEndpoint, nil
}

// mcpClientFields is the profile's client metadata as JSON members, for the
// checks that change some before posting it raw.
func (e *Env) mcpClientFields(s *mcpSite) map[string]any {
	b, _ := json.Marshal(e.mcpClientMetadata(s)) // plain strings and slices: cannot fail
	var md map[string]any
	_ = json.Unmarshal(b, &md)
	return md
}

// flowsClient is client cid as flows presents it at the token endpoint:
// authenticated as login would when it is a confidential pre-registered
// client, else public.
func (e *Env) flowsClient(s *mcpSite, cid string) flows.Client {
	for _, c := range e.target.Clients {
		if c.ID == cid && c.Secret != "" {
			fc, err := flows.ResolveClient(context.Background(), flows.ClientConfig{ClientID: c.ID, ClientSecret: c.Secret}, s.discovery())
			if err == nil {
				return fc
			}
		}
	}
	return flows.Client{ID: cid, AuthMethod: flows.AuthMethodNone}
}

// authenticateForm adds the credentials of the confidential pre-registered
// client that form names (client_id) to a request the suite sends raw, as
// a correct client always would (RFC 6749 §2.3.1): in a Basic header, or in
// the form when the server takes only client_secret_post. A form with
// credentials of its own, or naming another client, is left alone.
func (e *Env) authenticateForm(form url.Values, h http.Header) url.Values {
	if len(e.target.Clients) == 0 || form.Has("client_secret") || form.Has("client_assertion") {
		return form
	}
	s, err := e.run.site.peek()
	if err != nil || s == nil {
		return form
	}
	c := e.flowsClient(s, form.Get("client_id"))
	switch c.AuthMethod {
	case flows.AuthMethodBasic:
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(c.ID)+":"+url.QueryEscape(c.Secret))))
	case flows.AuthMethodPost:
		form = cloneValues(form)
		form.Set("client_secret", c.Secret)
	}
	return form
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
