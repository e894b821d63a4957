package flows_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/probe"
)

func TestPing(t *testing.T) {
	srv, mux := newServer(t)
	mux.HandleFunc("/api/ping", func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer good":
			writeJSON(w, 200, map[string]string{"status": "ok", "user_id": "u1"})
		case "Bearer narrow":
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp admin"`)
			w.WriteHeader(http.StatusForbidden)
		case "Bearer broken":
			http.Error(w, "oops", http.StatusInternalServerError)
		default:
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource", error="invalid_token", scope="mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	ctx := context.Background()

	r, err := probe.Ping(ctx, nil, srv.URL+"/", "good")
	if err != nil || r.Status != "ok" || r.UserID != "u1" {
		t.Fatalf("Ping = %+v, %v", r, err)
	}

	_, err = probe.Ping(ctx, nil, srv.URL, "expired")
	var re *flows.ResourceError
	if !errors.Is(err, flows.ErrUnauthorized) || !errors.As(err, &re) {
		t.Fatalf("err = %v, want ErrUnauthorized with a ResourceError", err)
	}
	if re.Challenge.Params["error"] != "invalid_token" || re.Challenge.Params["resource_metadata"] != srv.URL+"/.well-known/oauth-protected-resource" {
		t.Errorf("challenge %+v", re.Challenge)
	}

	_, err = probe.Ping(ctx, nil, srv.URL, "narrow")
	if !errors.Is(err, flows.ErrInsufficientScope) || errors.Is(err, flows.ErrUnauthorized) {
		t.Errorf("403: err = %v, want ErrInsufficientScope only", err)
	}

	_, err = probe.Ping(ctx, nil, srv.URL, "broken")
	var oe *flows.OAuthError
	if !errors.As(err, &oe) || oe.StatusCode != 500 || errors.Is(err, flows.ErrUnauthorized) {
		t.Errorf("500: err = %v", err)
	}
}
