package flows_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// Token endpoints in the wild: form-encoded answers (GitHub without an
// Accept header), expires_in as a string, errors with status 200.
func TestTokenResponseShapes(t *testing.T) {
	tests := []struct {
		name    string
		ct      string
		status  int
		body    string
		want    string // access token, or "err:<code>"
		wantExp time.Duration
	}{
		{"JSON", "application/json", 200, `{"access_token":"a","token_type":"Bearer","expires_in":60,"refresh_token":"r"}`, "a", time.Minute},
		{"form", "application/x-www-form-urlencoded", 200, "access_token=b&token_type=bearer&scope=mcp", "b", 0},
		{"string expires_in", "application/json", 200, `{"access_token":"c","token_type":"Bearer","expires_in":"120"}`, "c", 2 * time.Minute},
		{"error with 200", "application/json", 200, `{"error":"authorization_pending"}`, "err:authorization_pending", 0},
		{"form error", "application/x-www-form-urlencoded", 400, "error=invalid_grant", "err:invalid_grant", 0},
		{"502 HTML", "text/html", 502, "<h1>bad gateway</h1>", "err:", 0},
		{"no access_token", "application/json", 200, `{"token_type":"Bearer"}`, "err-plain", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, mux := newServer(t)
			mux.HandleFunc("/oauth/token", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ct)
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			})
			cfg := flows.AuthCodeConfig{Clock: flowstest.NewFakeClock(t0), Discovery: discFor(srv.URL, nil), Client: flows.Client{ID: "c"}}
			tok, err := cfg.Exchange(context.Background(), &flows.AuthRequest{RedirectURI: "http://127.0.0.1:1/callback", Verifier: "v"}, "code")
			switch {
			case tt.want == "err-plain":
				if err == nil {
					t.Fatal("accepted a token response without access_token")
				}
			case len(tt.want) > 4 && tt.want[:4] == "err:" || tt.want == "err:":
				if !flows.IsCode(err, tt.want[4:]) {
					t.Fatalf("err = %v, want OAuthError %q", err, tt.want[4:])
				}
			default:
				if err != nil || tok.AccessToken != tt.want {
					t.Fatalf("got %+v, %v", tok, err)
				}
				if (tt.wantExp == 0) != tok.Expiry.IsZero() || (tt.wantExp != 0 && !tok.Expiry.Equal(t0.Add(tt.wantExp))) {
					t.Errorf("Expiry %v, want t0+%v", tok.Expiry, tt.wantExp)
				}
			}
		})
	}
}
