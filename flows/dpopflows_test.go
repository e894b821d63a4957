package flows_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
	"github.com/mcpauth/mcpauth/internal/probe"
)

// The machine AS also runs the user grants, so DPoP is checked under each:
// /oauth/authorize approves at once, /oauth/device hands out a code that is
// already approved, and refresh tokens are bound to the key that got them
// (RFC 9449 §5: a public client's refresh token is).

func (a *machineAS) authorize(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	q := r.URL.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "PKCE S256 required", http.StatusBadRequest)
		return
	}
	code := fmt.Sprintf("code-%d", len(a.codes))
	a.codes[code] = q.Get("code_challenge")
	back, _ := url.Parse(q.Get("redirect_uri"))
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	v.Set("iss", a.srv.URL)
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (a *machineAS) deviceAuthorization(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	code := fmt.Sprintf("dc-%d", len(a.deviceCodes))
	a.deviceCodes[code] = true
	writeJSON(w, 200, map[string]any{"device_code": code, "user_code": "ABCD-EFGH", "verification_uri": a.srv.URL + "/device",
		"expires_in": 600, "interval": 1})
}

// userGrant redeems a code, device code or refresh token presented with a
// proof of key jkt ("" without DPoP), and returns a new refresh token bound
// to the same key.
func (a *machineAS) userGrant(f url.Values, jkt string) (string, error) {
	switch f.Get("grant_type") {
	case "authorization_code":
		challenge, ok := a.codes[f.Get("code")]
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
			return "", errors.New("unknown code or wrong verifier")
		}
		delete(a.codes, f.Get("code"))
	case flows.GrantTypeDeviceCode:
		if !a.deviceCodes[f.Get("device_code")] {
			return "", errors.New("unknown device code")
		}
		delete(a.deviceCodes, f.Get("device_code"))
	case oauthwire.GrantTypeRefreshToken:
		bound, ok := a.refreshJKT[f.Get("refresh_token")]
		if !ok {
			return "", errors.New("unknown refresh token")
		}
		if bound != jkt {
			return "", fmt.Errorf("refresh token bound to key %q, proof from %q", bound, jkt)
		}
		delete(a.refreshJKT, f.Get("refresh_token"))
	}
	rt := fmt.Sprintf("rt-%d", a.tokenCalls)
	a.refreshJKT[rt] = jkt
	return rt, nil
}

// dpopAS is a machine AS that requires DPoP on every token request and
// demands a nonce first, with the user grants' endpoints in its metadata.
func dpopAS(t *testing.T) (*machineAS, *flows.Discovery) {
	a := newMachineAS(t)
	a.with(func() { a.requireDPoP, a.asNonce = true, "first-nonce" })
	d := a.disc("ES256")
	d.AuthServer.AuthorizationEndpoint = a.srv.URL + "/oauth/authorize"
	d.AuthServer.DeviceAuthorizationEndpoint = a.srv.URL + "/oauth/device"
	d.AuthServer.CodeChallengeMethodsSupported = []string{"S256"}
	return a, d
}

// A browser login, a device login and refreshes against an authorization
// server that requires DPoP: every token request carries a proof (the
// server checks each, and its first answer asks for a nonce, which is
// retried), the tokens come back DPoP-bound and work at the resource with
// the key, and a refresh keeps the key: the server refuses another key's
// proof for a bound refresh token.
func TestDPoPUserLogins(t *testing.T) {
	ctx := context.Background()
	logins := map[string]func(*flows.Discovery, *flows.DPoP) (*flows.Token, error){
		"browser": func(d *flows.Discovery, key *flows.DPoP) (*flows.Token, error) {
			return flows.AuthCode(ctx, flows.AuthCodeConfig{Discovery: d, Client: flows.Client{ID: "robot", AuthMethod: flows.AuthMethodNone},
				OpenBrowser: browser(t, nil), DPoP: key, Clock: flowstest.NewFakeClock(t0)})
		},
		"device": func(d *flows.Discovery, key *flows.DPoP) (*flows.Token, error) {
			return flows.Device(ctx, flows.DeviceConfig{Discovery: d, Client: flows.Client{ID: "robot", AuthMethod: flows.AuthMethodNone},
				ShowCode: func(flows.DeviceAuthorization) {}, DPoP: key, Clock: flowstest.NewAutoClock(t0)})
		},
	}
	for name, login := range logins {
		t.Run(name, func(t *testing.T) {
			a, disc := dpopAS(t)
			key := newDPoP(t)
			if _, err := login(disc, nil); err == nil {
				t.Fatal("a login without DPoP got a token from a server that requires it")
			}
			tok, err := login(disc, key)
			if err != nil {
				_, _, fails := a.snapshot()
				t.Fatalf("login: %v (%v)", err, fails)
			}
			if tok.TokenType != flows.TokenTypeDPoP || tok.RefreshToken == "" {
				t.Fatalf("token %+v", tok)
			}
			if _, err := probe.Ping(ctx, key.Client(nil, mustOrigin(t, a.srv.URL), tok.AccessToken), a.srv.URL, tok.AccessToken); err != nil {
				t.Fatalf("the bound token at the resource: %v", err)
			}
			cfg := flows.RefreshConfig{TokenURL: a.tokenURL(), Issuer: a.srv.URL, Client: flows.Client{ID: "robot", AuthMethod: flows.AuthMethodNone}, DPoP: newDPoP(t)}
			if _, err := flows.Refresh(ctx, cfg, tok.RefreshToken); err == nil || !strings.Contains(err.Error(), "bound to key") {
				t.Fatalf("a refresh with another key: %v", err)
			}
			cfg.DPoP = key
			refreshed, err := flows.Refresh(ctx, cfg, tok.RefreshToken)
			if err != nil || refreshed.TokenType != flows.TokenTypeDPoP {
				t.Fatalf("refresh with the key: %+v %v", refreshed, err)
			}
			if _, err := probe.Ping(ctx, key.Client(nil, mustOrigin(t, a.srv.URL), refreshed.AccessToken), a.srv.URL, refreshed.AccessToken); err != nil {
				t.Fatalf("the refreshed token at the resource: %v", err)
			}
			forms, _, fails := a.snapshot()
			nonced := 0
			for _, f := range fails {
				if strings.HasPrefix(f, "use_dpop_nonce") {
					nonced++
				}
			}
			if nonced == 0 {
				t.Errorf("the nonce retry never ran: %v", fails)
			}
			t.Logf("%d token requests, refused: %v", len(forms), fails)
		})
	}
}
