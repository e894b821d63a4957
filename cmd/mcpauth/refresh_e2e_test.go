package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/keyring"
)

// Against `mcpauth serve --test-clock`: log in, move the server's clock past
// the access token's 24 h, and ping succeeds by refreshing on the 401; the
// refresh token it replaced is refused afterwards (rotation).
func TestE2EPingRefreshesAfterADay(t *testing.T) {
	e := newE2E(t, "--test-clock")
	if code, _, stderr := e.cli(e.driverEnv("approve"), "login", e.base+"/mcp", "--timeout", "60s"); code != 0 {
		t.Fatalf("login exit %d:\n%s", code, stderr)
	}
	before := e.bundle()
	if before.RefreshToken == "" {
		t.Fatal("login stored no refresh token")
	}
	if err := (&conformance.HTTPClock{URL: e.base + "/api/test/clock"}).Advance(context.Background(), 24*time.Hour+time.Minute); err != nil {
		t.Fatal(err)
	}
	code, user, stderr := e.cli(nil, "ping")
	if code != 0 || !strings.HasPrefix(user, "u_") {
		t.Fatalf("ping after a day: exit %d stdout %q:\n%s", code, user, stderr)
	}
	after := e.bundle()
	if after.RefreshToken == before.RefreshToken || after.AccessToken == before.AccessToken {
		t.Fatal("ping did not store a rotated pair")
	}
	resp, err := http.PostForm(e.base+"/oauth/token", url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {before.RefreshToken}, "client_id": {before.Client.ClientID}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("the replaced refresh token: HTTP %d, want 400", resp.StatusCode)
	}
}

func (e *e2e) bundle() creds.Bundle {
	e.t.Helper()
	storage, err := keyring.ParseStorage(e.storage)
	if err != nil {
		e.t.Fatal(err)
	}
	st, err := keyring.Open(keyring.Config{Dir: e.configDir, Storage: storage})
	if err != nil {
		e.t.Fatal(err)
	}
	b, err := creds.Load(st, e.base+"/mcp", "")
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// strictAS is a token endpoint that rotates refresh tokens and revokes the
// family when a spent one comes back, as RFC 9700 §4.14.2 servers do.
type strictAS struct {
	mu       sync.Mutex
	current  string
	spent    map[string]bool
	revoked  bool
	n        int
	refreshs atomic.Int32
}

func (a *strictAS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	a.refreshs.Add(1)
	time.Sleep(100 * time.Millisecond) // widen the window a racing process would need
	a.mu.Lock()
	defer a.mu.Unlock()
	rt := r.PostForm.Get("refresh_token")
	w.Header().Set("Content-Type", "application/json")
	if a.revoked || rt != a.current {
		if a.spent[rt] {
			a.revoked = true
		}
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"invalid_grant"}`)
		return
	}
	a.spent[rt] = true
	a.n++
	a.current = fmt.Sprintf("rt-%d", a.n)
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("at-%d", a.n), "token_type": "Bearer",
		"expires_in": 3600, "refresh_token": a.current})
}

// Ten `mcpauth token` processes started at once with an expired token: the
// entry lock lets exactly one refresh, the others re-read the bundle and
// print its token; a second refresh would have spent the token twice and
// revoked the family.
func TestRefreshLockTenProcesses(t *testing.T) {
	bin := buildBinary(t)
	as := &strictAS{current: "rt-0", spent: map[string]bool{}}
	srv := httptest.NewServer(as)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	st, err := keyring.Open(keyring.Config{Dir: dir, Storage: keyring.StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	server := srv.URL + "/mcp"
	if err := creds.Save(st, server, "", creds.Bundle{Kind: creds.KindOAuth, Issuer: srv.URL, Resource: server,
		AccessToken: "at-0", TokenType: "Bearer", RefreshToken: "rt-0", Expiry: time.Now().Add(-time.Minute),
		TokenEndpoint: srv.URL + "/token", Client: &creds.ClientInfo{ClientID: "cid", TokenEndpointAuthMethod: "none"}}); err != nil {
		t.Fatal(err)
	}
	const n = 10
	type result struct {
		code           int
		stdout, stderr string
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "token", server)
			cmd.Env = []string{"MCPAUTH_STORAGE=file", "MCPAUTH_CONFIG_DIR=" + dir, "HOME=" + dir}
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			<-start
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				code = -1
			}
			results[i] = result{code, out.String(), errOut.String()}
		}()
	}
	close(start)
	wg.Wait()
	for i, r := range results {
		if r.code != 0 || strings.TrimSpace(r.stdout) != "at-1" {
			t.Errorf("process %d: exit %d stdout %q stderr %s", i, r.code, r.stdout, r.stderr)
		}
	}
	if got := as.refreshs.Load(); got != 1 {
		t.Errorf("%d refresh requests, want exactly 1", got)
	}
	b, err := creds.Load(st, server, "")
	if err != nil || b.RefreshToken != "rt-1" || b.AccessToken != "at-1" {
		t.Errorf("stored %v, %v; want the rotated pair", b, err)
	}
}
