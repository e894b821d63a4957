package flows_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

func TestRefresh(t *testing.T) {
	srv, mux := newServer(t)
	var mu sync.Mutex
	var forms []url.Values
	answer := func(w http.ResponseWriter) {}
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		forms = append(forms, r.PostForm)
		mu.Unlock()
		answer(w)
	})
	clk := flowstest.NewFakeClock(t0)
	cfg := flows.RefreshConfig{Clock: clk, TokenURL: srv.URL + "/token", Client: flows.Client{ID: "cid", AuthMethod: flows.AuthMethodNone}, Resource: "https://mcp.example/mcp"}
	ctx := context.Background()

	t.Run("rotated, expiry from the injected clock, resource sent", func(t *testing.T) {
		answer = func(w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"access_token": "at2", "token_type": "Bearer", "expires_in": 600, "refresh_token": "rt2", "refresh_expires_in": 3600})
		}
		tok, err := flows.Refresh(ctx, cfg, "rt1")
		if err != nil {
			t.Fatal(err)
		}
		if tok.AccessToken != "at2" || tok.RefreshToken != "rt2" || !tok.Expiry.Equal(t0.Add(10*time.Minute)) || !tok.RefreshExpiry.Equal(t0.Add(time.Hour)) {
			t.Errorf("token %+v", tok)
		}
		f := forms[len(forms)-1]
		if f.Get("grant_type") != "refresh_token" || f.Get("refresh_token") != "rt1" || f.Get("client_id") != "cid" || f.Get("resource") != "https://mcp.example/mcp" {
			t.Errorf("request %v", f)
		}
	})
	t.Run("not rotated keeps the old refresh token", func(t *testing.T) {
		answer = func(w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"access_token": "at3", "token_type": "Bearer", "expires_in": 600})
		}
		tok, err := flows.Refresh(ctx, cfg, "rt1")
		if err != nil || tok.RefreshToken != "rt1" {
			t.Errorf("got %+v, %v", tok, err)
		}
	})
	for name, code := range map[string]string{"invalid_grant": "invalid_grant", "invalid_target (another resource)": "invalid_target"} {
		t.Run(name+" is refused", func(t *testing.T) {
			answer = func(w http.ResponseWriter) { oauthErr(w, 400, code, "no") }
			if _, err := flows.Refresh(ctx, cfg, "rt1"); !errors.Is(err, flows.ErrRefreshRefused) || !flows.IsCode(err, code) {
				t.Errorf("err %v", err)
			}
		})
	}
	malformed := map[string]func(http.ResponseWriter){
		"no access_token":  func(w http.ResponseWriter) { writeJSON(w, 200, map[string]any{"token_type": "Bearer"}) },
		"no token_type":    func(w http.ResponseWriter) { writeJSON(w, 200, map[string]any{"access_token": "x"}) },
		"not JSON":         func(w http.ResponseWriter) { w.WriteHeader(200); _, _ = w.Write([]byte("<html>")) },
		"error in a 200":   func(w http.ResponseWriter) { writeJSON(w, 200, map[string]any{"error": "server_error"}) },
		"502 from a proxy": func(w http.ResponseWriter) { http.Error(w, "bad gateway", 502) },
		"bad expires_in": func(w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"access_token": "x", "token_type": "Bearer", "expires_in": "soon"})
		},
	}
	for name, a := range malformed {
		t.Run("malformed: "+name, func(t *testing.T) {
			answer = a
			tok, err := flows.Refresh(ctx, cfg, "rt1")
			if err == nil || errors.Is(err, flows.ErrRefreshRefused) {
				t.Errorf("got %+v, %v; want a non-refusal error", tok, err)
			}
		})
	}
}

func TestNeedsRefresh(t *testing.T) {
	m := flows.DefaultRefreshMargin
	for _, c := range []struct {
		expiry time.Time
		want   bool
	}{
		{time.Time{}, false},
		{t0.Add(2 * time.Minute), false},
		{t0.Add(61 * time.Second), false},
		{t0.Add(60 * time.Second), true},
		{t0.Add(10 * time.Second), true},
		{t0.Add(-time.Hour), true},
	} {
		if got := flows.NeedsRefresh(c.expiry, t0, m); got != c.want {
			t.Errorf("NeedsRefresh(%v) = %v", c.expiry.Sub(t0), got)
		}
	}
}

// The early-refresh margin follows the token's lifetime: a 60 s token is
// refreshed in its last 15 s, not on every use; long tokens keep 60 s; a
// tiny one keeps the 5 s floor for clock skew.
func TestRefreshMargin(t *testing.T) {
	for lifetime, want := range map[time.Duration]time.Duration{
		0: flows.DefaultRefreshMargin, 10 * time.Second: 5 * time.Second, time.Minute: 15 * time.Second,
		2 * time.Minute: 30 * time.Second, time.Hour: flows.DefaultRefreshMargin, 24 * time.Hour: flows.DefaultRefreshMargin,
	} {
		if got := flows.RefreshMargin(lifetime); got != want {
			t.Errorf("RefreshMargin(%s) = %s, want %s", lifetime, got, want)
		}
	}
}
