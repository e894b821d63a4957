package conformance

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// MachineClients are confidential clients the operator registered for the
// client credentials grant (mcpauth serve --machine-clients): one with a
// secret (client_secret_basic), one with a key (private_key_jwt). Either
// may be left out; the checks that need it are then skipped.
type MachineClients struct {
	SecretID, Secret string
	KeyID            string
	Key              *flows.Signer
}

// NewMachineClients makes up a secret client and a key client for a run
// against a server started for it (--local): what the suite holds, and
// what the server registers, the secret's SHA-256 and the public key.
func NewMachineClients() (*MachineClients, [32]byte, crypto.PublicKey, error) {
	secret := rand.Text() + rand.Text()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, [32]byte{}, nil, fmt.Errorf("generating a machine client key: %w", err)
	}
	signer, err := flows.NewSigner(key, "")
	if err != nil {
		return nil, [32]byte{}, nil, err
	}
	m := &MachineClients{SecretID: "conformance-secret", Secret: secret, KeyID: "conformance-key", Key: signer}
	return m, sha256.Sum256([]byte(secret)), key.Public(), nil
}

const (
	machineSrc  = "RFC 6749 §4.4 and §2.3 via decisions.md §Machine clients"
	assertSrc   = "RFC 7523 §3 and rfc7523bis (aud the issuer) via decisions.md §Machine clients"
	dpopSrc     = "RFC 9449 §7 via decisions.md §Machine clients"
	noMachine   = "needs the target's machine clients (--machine-client-id with --machine-client-secret, --machine-key-client-id with --machine-private-key-file; --local has them)"
	noDPoPOffer = "the authorization server does not advertise DPoP with ES256 (mcpauth serve --dpop does)"
)

// machineCheck is a check of area machine.
func machineCheck(id, title, source string, run func(ctx context.Context, e *Env) error) Check {
	return Check{ID: id, Title: title, Area: "machine", Source: source, Needs: []Need{NeedMachineClient}, Run: run}
}

func machineChecks() []Check {
	return []Check{
		machineCheck("MACH-01", "client credentials with client_secret_basic get a token /api/ping accepts as the client", machineSrc,
			func(ctx context.Context, e *Env) error {
				r, err := e.secretGrant(ctx, e.target.Machine.Secret, nil)
				if err != nil {
					return err
				}
				return e.machineTokenWorks(ctx, r, "Bearer", e.target.Machine.SecretID, nil)
			}),
		machineCheck("MACH-02", "client credentials with a wrong secret get 401 invalid_client", machineSrc,
			func(ctx context.Context, e *Env) error {
				r, err := e.secretGrant(ctx, e.target.Machine.Secret+"-wrong", nil)
				if err != nil {
					return err
				}
				return wantOAuthError(r, http.StatusUnauthorized, "invalid_client")
			}),
		machineCheck("MACH-03", "client credentials with private_key_jwt (aud the issuer) get a token /api/ping accepts", assertSrc,
			func(ctx context.Context, e *Env) error {
				r, _, err := e.assertionGrant(ctx, e.BaseURL(), "")
				if err != nil {
					return err
				}
				return e.machineTokenWorks(ctx, r, "Bearer", e.target.Machine.KeyID, nil)
			}),
		machineCheck("MACH-04", "a client assertion presented twice is refused the second time (invalid_client)", assertSrc,
			func(ctx context.Context, e *Env) error {
				r, a, err := e.assertionGrant(ctx, e.BaseURL(), "")
				if err != nil {
					return err
				}
				if r.Status != http.StatusOK {
					return Fail("the first use: want HTTP 200, got %s", r.Snippet())
				}
				r, _, err = e.assertionGrant(ctx, "", a)
				if err != nil {
					return err
				}
				return wantOAuthError(r, http.StatusUnauthorized, "invalid_client")
			}),
		machineCheck("MACH-05", "a client assertion for another audience is refused (invalid_client)", assertSrc,
			func(ctx context.Context, e *Env) error {
				r, _, err := e.assertionGrant(ctx, "https://another-server.invalid", "")
				if err != nil {
					return err
				}
				return wantOAuthError(r, http.StatusUnauthorized, "invalid_client")
			}),
		machineCheck("MACH-06", "with a DPoP proof the token is token_type DPoP and /api/ping takes it with a proof of that key", dpopSrc,
			func(ctx context.Context, e *Env) error {
				d, r, err := e.dpopGrant(ctx)
				if err != nil {
					return err
				}
				return e.machineTokenWorks(ctx, r, flows.TokenTypeDPoP, e.target.Machine.SecretID, d)
			}),
		machineCheck("MACH-07", "a DPoP-bound token sent as Bearer gets 401", dpopSrc,
			func(ctx context.Context, e *Env) error {
				tok, _, err := e.dpopToken(ctx)
				if err != nil {
					return err
				}
				r, err := e.GetBearer(ctx, "/api/ping", tok)
				if err != nil {
					return err
				}
				return wantStatus(r, http.StatusUnauthorized)
			}),
		machineCheck("MACH-08", "a DPoP-bound token with a proof of another key gets 401", dpopSrc,
			func(ctx context.Context, e *Env) error {
				tok, _, err := e.dpopToken(ctx)
				if err != nil {
					return err
				}
				other, err := flows.NewDPoP(e.serverClock(ctx))
				if err != nil {
					return err
				}
				h, err := other.Headers(http.MethodGet, e.URL("/api/ping"), tok)
				if err != nil {
					return err
				}
				r, err := e.Do(ctx, http.MethodGet, "/api/ping", h, nil)
				if err != nil {
					return err
				}
				return wantStatus(r, http.StatusUnauthorized)
			}),
		machineCheck("MACH-09", "a DPoP proof presented twice is refused the second time", dpopSrc,
			func(ctx context.Context, e *Env) error {
				tok, d, err := e.dpopToken(ctx)
				if err != nil {
					return err
				}
				h, err := d.Headers(http.MethodGet, e.URL("/api/ping"), tok)
				if err != nil {
					return err
				}
				r, err := e.Do(ctx, http.MethodGet, "/api/ping", h, nil)
				if err != nil {
					return err
				}
				if r.Status != http.StatusOK {
					return Fail("the first use: want HTTP 200, got %s", r.Snippet())
				}
				if r, err = e.Do(ctx, http.MethodGet, "/api/ping", h, nil); err != nil {
					return err
				}
				return wantStatus(r, http.StatusUnauthorized)
			}),
	}
}

// secretGrant runs the grant as the secret client with client_secret_basic.
func (e *Env) secretGrant(ctx context.Context, secret string, h http.Header) (*Response, error) {
	m := e.target.Machine
	if m == nil || m.SecretID == "" {
		return nil, Skip(noMachine)
	}
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	req, _ := http.NewRequest(http.MethodPost, "/", nil)
	req.SetBasicAuth(url.QueryEscape(m.SecretID), url.QueryEscape(secret))
	h.Set("Authorization", req.Header.Get("Authorization"))
	e.run.secrets.Add(secret)
	form := url.Values{"grant_type": {oauthwire.GrantTypeClientCredentials}, "scope": {"mcp"}}
	return e.Do(ctx, http.MethodPost, "/oauth/token", h, []byte(form.Encode()))
}

// assertionGrant runs the grant as the key client with a fresh assertion
// for aud, or with assertion when given; it returns the assertion sent.
func (e *Env) assertionGrant(ctx context.Context, aud, assertion string) (*Response, string, error) {
	m := e.target.Machine
	if m == nil || m.KeyID == "" || m.Key == nil {
		return nil, "", Skip(noMachine)
	}
	if assertion == "" {
		var err error
		if assertion, err = m.Key.ClientAssertion(m.KeyID, aud, e.serverClock(ctx).Now()); err != nil {
			return nil, "", err
		}
	}
	form := url.Values{"grant_type": {oauthwire.GrantTypeClientCredentials}, "client_assertion_type": {flows.ClientAssertionType}, "client_assertion": {assertion}}
	r, err := e.Do(ctx, http.MethodPost, "/oauth/token", headers("Content-Type", "application/x-www-form-urlencoded"), []byte(form.Encode()))
	return r, assertion, err
}

// dpopGrant runs the secret client's grant with a proof of a new key,
// after checking that the server offers DPoP.
func (e *Env) dpopGrant(ctx context.Context) (*flows.DPoP, *Response, error) {
	if m := e.target.Machine; m == nil || m.SecretID == "" {
		return nil, nil, Skip(noMachine)
	}
	md, err := e.getMetadata(ctx, "/.well-known/oauth-authorization-server")
	if err != nil {
		return nil, nil, setupFail("reading the authorization server metadata", err)
	}
	algs, _ := md.strs("dpop_signing_alg_values_supported")
	if !slices.Contains(algs, flows.DPoPAlg) {
		return nil, nil, Skip(noDPoPOffer)
	}
	d, err := flows.NewDPoP(e.serverClock(ctx))
	if err != nil {
		return nil, nil, err
	}
	proof, err := d.Proof(http.MethodPost, e.URL("/oauth/token"), "")
	if err != nil {
		return nil, nil, err
	}
	r, err := e.secretGrant(ctx, e.target.Machine.Secret, headers("DPoP", proof))
	return d, r, err
}

// dpopToken is a DPoP-bound token of the secret client and its key.
func (e *Env) dpopToken(ctx context.Context) (string, *flows.DPoP, error) {
	d, r, err := e.dpopGrant(ctx)
	if err != nil {
		return "", nil, err
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	if r.Status != http.StatusOK || r.JSON(&tok) != nil || tok.AccessToken == "" || tok.TokenType != flows.TokenTypeDPoP {
		return "", nil, setupFail("a DPoP-bound token", Fail("want HTTP 200 with token_type DPoP, got %s", r.Snippet()))
	}
	e.run.secrets.Add(tok.AccessToken)
	return tok.AccessToken, d, nil
}

// machineTokenWorks checks a token response of type tokenType and that
// /api/ping takes the token (with a proof of d when set) as client id.
func (e *Env) machineTokenWorks(ctx context.Context, r *Response, tokenType, id string, d *flows.DPoP) error {
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	if r.Status != http.StatusOK {
		return Fail("want HTTP 200 with a token, got %s", r.Snippet())
	}
	if err := r.JSON(&tok); err != nil {
		return Fail("%v", err)
	}
	e.run.secrets.Add(tok.AccessToken)
	switch {
	case tok.AccessToken == "":
		return Fail("no access_token in %s", r.Snippet())
	case tok.TokenType != tokenType:
		return Fail("token_type %q, want %q", tok.TokenType, tokenType)
	}
	h := headers("Authorization", "Bearer "+tok.AccessToken)
	if d != nil {
		var err error
		if h, err = d.Headers(http.MethodGet, e.URL("/api/ping"), tok.AccessToken); err != nil {
			return err
		}
	}
	p, err := e.Do(ctx, http.MethodGet, "/api/ping", h, nil)
	if err != nil {
		return err
	}
	var ping struct {
		UserID string `json:"user_id"`
	}
	if p.Status != http.StatusOK || p.JSON(&ping) != nil || ping.UserID != id {
		return Fail("/api/ping with the token: want HTTP 200 with user_id %q, got %s", id, p.Snippet())
	}
	return nil
}

// serverClock is the server's time for assertions and proofs: the test
// clock's when the target has one (time-travel checks move it), else ours.
func (e *Env) serverClock(ctx context.Context) flows.Clock {
	if c, ok := e.target.Clock.(*HTTPClock); ok {
		if st, err := c.Now(ctx); err == nil {
			return offsetClock{time.Until(st.Now)}
		}
	}
	return flows.RealClock{}
}

// offsetClock is the wall clock moved by d.
type offsetClock struct{ d time.Duration }

func (c offsetClock) Now() time.Time                       { return time.Now().Add(c.d) }
func (offsetClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
