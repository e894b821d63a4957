package flows_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
)

func TestParseOAuthError(t *testing.T) {
	tests := []struct {
		name   string
		ct     string
		body   string
		status int
		want   *flows.OAuthError
	}{
		{"JSON", "application/json", `{"error":"invalid_grant","error_description":"code expired","error_uri":"https://h/e"}`, 400,
			&flows.OAuthError{Code: "invalid_grant", Description: "code expired", URI: "https://h/e", StatusCode: 400}},
		{"JSON with charset", "application/json; charset=utf-8", `{"error":"slow_down"}`, 400,
			&flows.OAuthError{Code: "slow_down", StatusCode: 400}},
		{"form", "application/x-www-form-urlencoded", "error=access_denied&error_description=user+said+no", 400,
			&flows.OAuthError{Code: "access_denied", Description: "user said no", StatusCode: 400}},
		{"form labelled text/plain", "text/plain", "error=authorization_pending", 200,
			&flows.OAuthError{Code: "authorization_pending", StatusCode: 200}},
		{"form without content type", "", "error=invalid_client", 401,
			&flows.OAuthError{Code: "invalid_client", StatusCode: 401}},
		{"wrong-typed description keeps the code", "application/json", `{"error":"invalid_request","error_description":7}`, 400,
			&flows.OAuthError{Code: "invalid_request", StatusCode: 400}},
		{"JSON without error", "application/json", `{"access_token":"x"}`, 200, nil},
		{"HTML", "text/html", "<html>502 Bad Gateway</html>", 502, nil},
		{"empty", "", "", 500, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tt.status, Header: http.Header{}}
			if tt.ct != "" {
				resp.Header.Set("Content-Type", tt.ct)
			}
			got := flows.ParseOAuthError(resp, []byte(tt.body))
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestOAuthErrorMatching(t *testing.T) {
	wrapped := fmt.Errorf("device flow: %w", &flows.OAuthError{Code: "access_denied", StatusCode: 400})
	if !errors.Is(wrapped, flows.ErrAccessDenied) || errors.Is(wrapped, flows.ErrExpiredToken) {
		t.Error("access_denied should match ErrAccessDenied only")
	}
	if !flows.IsCode(wrapped, "access_denied") || flows.IsCode(wrapped, "slow_down") {
		t.Error("IsCode mismatch")
	}
	if !errors.Is(&flows.OAuthError{Code: "expired_token"}, flows.ErrExpiredToken) {
		t.Error("expired_token should match ErrExpiredToken")
	}
	if !errors.Is(&flows.OAuthError{Code: "invalid_client"}, flows.ErrInvalidClient) {
		t.Error("invalid_client should match ErrInvalidClient")
	}
	e := &flows.OAuthError{Code: "invalid_grant", Description: "bad code", StatusCode: 400}
	if got, want := e.Error(), "invalid_grant (HTTP 400): bad code"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
