package flows

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

func httpClient(hc *http.Client) *http.Client {
	if hc == nil {
		return http.DefaultClient
	}
	return hc
}

// doConfined is do for a request that carries a credential: it goes only to
// req's own origin, and so do its redirects (see Confine).
func doConfined(hc *http.Client, req *http.Request) (*http.Response, []byte, error) {
	o, err := originOfURL(req.URL)
	if err != nil {
		return nil, nil, err
	}
	return oauthwire.Do(Confine(hc, o), req)
}

func postJSON(ctx context.Context, hc *http.Client, endpoint string, v any) (*http.Response, []byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	return doConfined(hc, req)
}

func isSuccess(code int) bool { return code >= 200 && code < 300 }

// Token is a token endpoint response (RFC 6749 §5.1). Expiry is computed from
// the injected Clock at receipt; it is zero when the server sent no
// expires_in.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type"`
	ExpiresIn    int64     `json:"expires_in,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Scope        string    `json:"scope,omitempty"`
	// RefreshExpiry is when the refresh token expires, from the
	// non-standard refresh_expires_in some servers send (Keycloak); zero
	// when unknown.
	RefreshExpiry time.Time `json:"refresh_expiry,omitzero"`
	// IDToken is the OpenID Connect ID token, when the server sent one
	// (unverified: see LoginIdentity).
	IDToken string `json:"id_token,omitempty"`
}

// parseToken reads a token response. A 2xx carrying an "error" field is an
// error too (some servers answer 200 with an error body).
func parseToken(resp *http.Response, body []byte, now time.Time) (*Token, error) {
	if !isSuccess(resp.StatusCode) {
		return nil, responseError(resp, body)
	}
	if e := ParseOAuthError(resp, body); e != nil {
		return nil, e
	}
	fields := map[string]json.RawMessage{}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" || ct == "text/plain" {
		v, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("token response: %w", err)
		}
		for k := range v {
			b, _ := json.Marshal(v.Get(k))
			fields[k] = b
		}
	} else if err := json.Unmarshal(body, &fields); err != nil {
		return nil, fmt.Errorf("token response is not a JSON object: %w", err)
	}
	t := &Token{}
	for k, raw := range fields {
		var err error
		switch k {
		case "access_token":
			err = json.Unmarshal(raw, &t.AccessToken)
		case "token_type":
			err = json.Unmarshal(raw, &t.TokenType)
		case "refresh_token":
			err = json.Unmarshal(raw, &t.RefreshToken)
		case "scope":
			err = json.Unmarshal(raw, &t.Scope)
		case "id_token":
			err = json.Unmarshal(raw, &t.IDToken)
		case "expires_in":
			t.ExpiresIn, err = parseSeconds(raw)
		case "refresh_expires_in":
			var n int64
			if n, err = parseSeconds(raw); err == nil && n > 0 {
				t.RefreshExpiry = now.Add(secondsDuration(n))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("token response field %s: %w", k, err)
		}
	}
	if t.AccessToken == "" {
		return nil, errors.New("token response has no access_token")
	}
	if t.TokenType == "" {
		return nil, errors.New("token response has no token_type")
	}
	for _, f := range []struct{ name, value string }{{"access_token", t.AccessToken}, {"refresh_token", t.RefreshToken}} {
		if err := checkTokenSyntax(f.value); err != nil {
			return nil, fmt.Errorf("token response field %s: %w", f.name, err)
		}
	}
	t.Expiry = expiryAt(now, t.ExpiresIn)
	return t, nil
}

// expiryAt is when a token received at now with expires_in seconds
// expires: zero when the server sent none, and now for a negative
// lifetime, which no server means as "never": such a token counts as
// expired and is refreshed before any use.
func expiryAt(now time.Time, expiresIn int64) time.Time {
	switch {
	case expiresIn > 0:
		return now.Add(secondsDuration(expiresIn))
	case expiresIn < 0:
		return now
	}
	return time.Time{}
}

// parseSeconds accepts a JSON number or a numeric string (seen in the wild).
func parseSeconds(raw json.RawMessage) (int64, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		var s string
		if err2 := json.Unmarshal(raw, &s); err2 != nil {
			return 0, err
		}
		n = json.Number(s)
	}
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return 0, err
	}
	return int64(f), nil
}

// maxSeconds caps durations a server sends (100 years): past it
// time.Duration overflows, and a wrapped expiry would lie in the past or a
// wrapped interval be tiny.
const maxSeconds = int64(100 * 365 * 24 * time.Hour / time.Second)

// secondsDuration converts a server-sent number of seconds to a Duration
// without overflow.
func secondsDuration(n int64) time.Duration {
	return time.Duration(min(n, maxSeconds)) * time.Second
}
