package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpauth/mcpauth/pkce"
)

// golang.org/x/oauth2, an unmodified standard client, reads the endpoints
// from the metadata it is given, exchanges a code with PKCE asking for
// offline_access, and its TokenSource refreshes against the real server
// when the access token expires, rotating the refresh token. A copy of a
// spent refresh token then fails with invalid_grant.
func TestOAuth2TokenSourceRefreshes(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := refreshClient(t, env)
	cfg := &oauth2.Config{
		ClientID:    c.ID,
		RedirectURL: c.RedirectURI,
		Scopes:      []string{"mcp", "offline_access"},
		Endpoint: oauth2.Endpoint{
			AuthURL: env.URL + "/oauth/authorize", TokenURL: env.URL + "/oauth/token",
			AuthStyle: oauth2.AuthStyleInParams, // a public client: client_id in the form
		},
	}
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("st-123", oauth2.S256ChallengeOption(verifier))
	if !pkce.ValidVerifier(verifier) {
		t.Fatalf("oauth2 verifier %q is not RFC 7636", verifier)
	}
	back, err := env.Browser("x-oauth2").Consent(context.Background(), authURL, "approve")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tok, err := cfg.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if tok.RefreshToken == "" || tok.Extra("scope") != "mcp offline_access" {
		t.Fatalf("exchange gave refresh_token %q, scope %v", tok.RefreshToken, tok.Extra("scope"))
	}
	user := userID(t, env, tok.AccessToken)

	// Expired as far as the client knows: the source must refresh, twice.
	first := *tok
	cur := tok
	for range 2 {
		stale := *cur
		stale.Expiry = time.Now().Add(-time.Minute)
		next, err := cfg.TokenSource(ctx, &stale).Token()
		if err != nil {
			t.Fatalf("TokenSource.Token: %v", err)
		}
		if next.AccessToken == cur.AccessToken || next.RefreshToken == cur.RefreshToken || !next.Valid() {
			t.Fatalf("TokenSource did not rotate: %+v", next)
		}
		if got := userID(t, env, next.AccessToken); got != user {
			t.Fatalf("refreshed token is for %s, want %s", got, user)
		}
		cur = next
	}
	// A still-valid token is returned as is, without a request.
	same, err := cfg.TokenSource(ctx, cur).Token()
	if err != nil || same.AccessToken != cur.AccessToken {
		t.Fatalf("valid token: %v %v", same, err)
	}

	first.Expiry = time.Now().Add(-time.Minute)
	_, err = cfg.TokenSource(ctx, &first).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("spent refresh token: got %v, want a RetrieveError with invalid_grant", err)
	}
	// That replay revoked the family: the latest refresh token is dead too.
	cur.Expiry = time.Now().Add(-time.Minute)
	if _, err := cfg.TokenSource(ctx, cur).Token(); !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("refresh token of a revoked family: got %v, want invalid_grant", err)
	}
}
