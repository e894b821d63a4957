package flows

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"golang.org/x/oauth2"
)

// The authorization_code grant goes through golang.org/x/oauth2 (the refresh
// grant does not: see Refresh). Two things stay ours: the expiry is
// computed from the injected Clock, not the library's wall clock, so tests
// and the conformance suite's moved clocks agree with it; and errors come
// back as *OAuthError, so the sentinels match whichever grant failed. The
// device grant stays hand-written (device.go): the contract's JSON dialect is
// not something the library speaks.

// oauth2Config is the client as golang.org/x/oauth2 sees it at tokenURL.
func (c *Client) oauth2Config(tokenURL string) *oauth2.Config {
	style := oauth2.AuthStyleInParams // client_id (and client_secret_post) in the body
	if c.AuthMethod == AuthMethodBasic {
		style = oauth2.AuthStyleInHeader // the library form-encodes both parts (RFC 6749 §2.3.1)
	}
	return &oauth2.Config{ClientID: c.ID, ClientSecret: c.Secret,
		Endpoint: oauth2.Endpoint{TokenURL: tokenURL, AuthStyle: style}}
}

// grant runs one token request to tokenURL through the library with hc,
// confined to tokenURL's origin (the code and verifier go nowhere else), and
// converts the answer. Exchange calls it with Config.Exchange.
func grant(ctx context.Context, hc *http.Client, tokenURL string, clk Clock, request func(context.Context) (*oauth2.Token, error)) (*Token, error) {
	confined, err := ConfineTo(hc, tokenURL)
	if err != nil {
		return nil, fmt.Errorf("token endpoint: %w", err)
	}
	ot, err := request(context.WithValue(ctx, oauth2.HTTPClient, confined))
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re):
		if re.ErrorCode != "" {
			return nil, &OAuthError{Code: re.ErrorCode, Description: re.ErrorDescription, URI: re.ErrorURI, StatusCode: re.Response.StatusCode}
		}
		return nil, responseError(re.Response, re.Body)
	case err != nil:
		return nil, err
	}
	t := &Token{AccessToken: ot.AccessToken, TokenType: ot.TokenType, RefreshToken: ot.RefreshToken, ExpiresIn: ot.ExpiresIn}
	if t.TokenType == "" {
		return nil, errors.New("token response has no token_type") // RFC 6749 §5.1: required
	}
	t.Scope, _ = ot.Extra("scope").(string)
	if s, ok := ot.Extra("expires_in").(string); ok && t.ExpiresIn == 0 {
		t.ExpiresIn, _ = strconv.ParseInt(s, 10, 64) // form-encoded answers: the library keeps only its own expiry
	}
	now := clockOr(clk).Now()
	t.Expiry = expiryAt(now, t.ExpiresIn)
	if n, ok := extraSeconds(ot.Extra("refresh_expires_in")); ok && n > 0 {
		t.RefreshExpiry = now.Add(secondsDuration(n))
	}
	return t, nil
}

// extraSeconds reads a number of seconds the library left in Extra: a JSON
// number (float64) or a numeric string.
func extraSeconds(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(min(n, float64(maxSeconds))), true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}
