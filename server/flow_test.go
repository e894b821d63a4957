package server_test

import (
	"context"
	"net/http"
	"testing"
)

func TestAuthorizationCodeFlowThenPing(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	b := env.Browser("alice")
	tok := c.token(b)

	resp, body := ping(t, env, tok)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ping: %d %s", resp.StatusCode, body)
	}
	var out struct {
		Status string `json:"status"`
		UserID string `json:"user_id"`
	}
	mustJSON(t, body, &out)
	if out.Status != "ok" || out.UserID == "" {
		t.Fatalf("ping body %s", body)
	}
	key, err := b.APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	resp, body = ping(t, env, key)
	var viaKey struct {
		UserID string `json:"user_id"`
	}
	mustJSON(t, body, &viaKey)
	if resp.StatusCode != http.StatusOK || viaKey.UserID != out.UserID {
		t.Fatalf("ping with API key: %d %s, want user %s", resp.StatusCode, body, out.UserID)
	}
}
