package flows_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
	"github.com/mcpauth/mcpauth/pkce"
)

func TestAuthCodeHappyPath(t *testing.T) {
	for _, noResource := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoResource=%v", noResource), func(t *testing.T) {
			as := newFakeAS(t)
			as.iss = as.srv.URL
			disc := as.disc(func(m *flows.AuthServerMetadata) { m.AuthorizationResponseIssParameterSupported = true })
			clk := flowstest.NewFakeClock(t0)
			seen := make(chan browserResult, 1)
			tok, err := flows.AuthCode(context.Background(), flows.AuthCodeConfig{
				Clock: clk, Discovery: disc, NoResource: noResource,
				Client:      flows.Client{ID: "cli", AuthMethod: flows.AuthMethodNone},
				OpenBrowser: browser(t, seen),
			})
			if err != nil {
				t.Fatalf("AuthCode: %v", err)
			}
			if tok.AccessToken != "at-cli" || tok.TokenType != "Bearer" || tok.ExpiresIn != 3600 ||
				!tok.Expiry.Equal(t0.Add(time.Hour)) || tok.Scope != "mcp" {
				t.Errorf("token = %+v", tok)
			}
			page := <-seen
			if page.status != 200 || !strings.Contains(page.body, "Signed in") || page.header.Get("Cache-Control") != "no-store" {
				t.Errorf("callback page: %d %q %v", page.status, page.body, page.header)
			}

			auth, toks, _ := as.snapshot()
			if len(auth) != 1 || len(toks) != 1 {
				t.Fatalf("%d authorize and %d token requests, want 1 each", len(auth), len(toks))
			}
			q, f := auth[0], toks[0]
			if pkce.S256(f.Get("code_verifier")) != q.Get("code_challenge") || !pkce.ValidVerifier(f.Get("code_verifier")) {
				t.Errorf("verifier %q does not match challenge %q", f.Get("code_verifier"), q.Get("code_challenge"))
			}
			ru, _ := url.Parse(q.Get("redirect_uri"))
			if ru.Scheme != "http" || ru.Hostname() != "127.0.0.1" || ru.Path != "/callback" || ru.Port() == "" {
				t.Errorf("redirect_uri %q", q.Get("redirect_uri"))
			}
			if len(q.Get("state")) < 32 || q.Get("scope") != "mcp" {
				t.Errorf("state %q scope %q", q.Get("state"), q.Get("scope"))
			}
			wantRes := disc.Resource
			if noResource {
				wantRes = ""
			}
			_, inAuth := q["resource"]
			_, inTok := f["resource"]
			if q.Get("resource") != wantRes || f.Get("resource") != wantRes || inAuth == noResource || inTok == noResource {
				t.Errorf("resource: authorize %q token %q, want %q", q.Get("resource"), f.Get("resource"), wantRes)
			}
			// The listener is gone once the flow returns.
			if listening(ru.Host) {
				t.Errorf("loopback listener %s still accepting", ru.Host)
			}
		})
	}
}

func TestAuthCodeIgnoresStrayRequests(t *testing.T) {
	as := newFakeAS(t)
	var stray []int
	open := func(authURL string) error {
		u, _ := url.Parse(authURL)
		redirect := u.Query().Get("redirect_uri")
		for _, bad := range []string{
			redirect + "?code=evil&state=wrong",
			redirect + "?code=evil",
			strings.TrimSuffix(redirect, "/callback") + "/favicon.ico",
		} {
			resp, _ := get(t, bad)
			stray = append(stray, resp.StatusCode)
		}
		return browser(t, nil)(authURL)
	}
	tok, err := flows.AuthCode(context.Background(), flows.AuthCodeConfig{
		Clock: flowstest.NewFakeClock(t0), Discovery: as.disc(nil),
		Client: flows.Client{ID: "cli"}, OpenBrowser: open,
	})
	if err != nil {
		t.Fatalf("AuthCode: %v", err)
	}
	if tok.AccessToken != "at-cli" {
		t.Errorf("token %+v", tok)
	}
	if fmt.Sprint(stray) != "[400 400 400]" {
		t.Errorf("stray request statuses %v, want all 400", stray)
	}
}

func TestAuthCodeCallbackFailures(t *testing.T) {
	tests := []struct {
		name       string
		iss        string // "" none; "self" the right issuer
		requireIss bool
		denyWith   string
		want       error
		wantInPage string
	}{
		{name: "iss mismatch", iss: "https://evil.example", want: flows.ErrIssuerMismatch},
		{name: "iss missing though advertised", requireIss: true, want: flows.ErrIssuerMismatch},
		{name: "access denied", iss: "self", denyWith: "access_denied", want: flows.ErrAccessDenied,
			wantInPage: "&lt;script&gt;alert(1)&lt;/script&gt;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := newFakeAS(t)
			as.iss = tt.iss
			if tt.iss == "self" {
				as.iss = as.srv.URL
			}
			as.denyWith, as.denyDesc = tt.denyWith, "<script>alert(1)</script>"
			disc := as.disc(func(m *flows.AuthServerMetadata) { m.AuthorizationResponseIssParameterSupported = tt.requireIss })
			seen := make(chan browserResult, 1)
			_, err := flows.AuthCode(context.Background(), flows.AuthCodeConfig{
				Clock: flowstest.NewFakeClock(t0), Discovery: disc,
				Client: flows.Client{ID: "cli"}, OpenBrowser: browser(t, seen),
			})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			page := <-seen
			title := "Sign-in failed"
			if tt.denyWith == "access_denied" {
				title = "Sign-in cancelled" // the person pressed Cancel or Deny
			}
			if page.status != 400 || !strings.Contains(page.body, title) || page.header.Get("Cache-Control") != "no-store" {
				t.Errorf("failure page %d %v %q", page.status, page.header, page.body)
			}
			if strings.Contains(page.body, "<script>alert") || !strings.Contains(page.body, tt.wantInPage) {
				t.Errorf("page does not escape the description: %q", page.body)
			}
			if _, toks, _ := as.snapshot(); len(toks) != 0 {
				t.Errorf("%d token requests after a failed callback", len(toks))
			}
		})
	}
}

func TestAuthCodeTimeout(t *testing.T) {
	as := newFakeAS(t)
	clk := flowstest.NewFakeClock(t0)
	opened := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		_, err := flows.AuthCode(context.Background(), flows.AuthCodeConfig{
			Clock: clk, Discovery: as.disc(nil), Client: flows.Client{ID: "cli"},
			OpenBrowser: func(u string) error { opened <- u; return nil }, // the user never comes back
		})
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatal("AuthCode never waited on the clock")
	}
	authURL := <-opened
	clk.Advance(flows.DefaultLoginTimeout - time.Second)
	select {
	case err := <-done:
		t.Fatalf("returned before the timeout: %v", err)
	default:
	}
	clk.Advance(time.Second)
	select {
	case err := <-done:
		if !errors.Is(err, flows.ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
	case <-ctx.Done():
		t.Fatal("AuthCode did not return after the timeout")
	}
	u, _ := url.Parse(authURL)
	ru, _ := url.Parse(u.Query().Get("redirect_uri"))
	if listening(ru.Host) {
		t.Error("listener still open after the timeout")
	}
}

func TestAuthCodeContextCancel(t *testing.T) {
	as := newFakeAS(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := flows.AuthCode(ctx, flows.AuthCodeConfig{
		Clock: flowstest.NewFakeClock(t0), Discovery: as.disc(nil), Client: flows.Client{ID: "cli"},
		OpenBrowser: func(string) error { cancel(); return nil },
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, flows.ErrTimeout) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// AuthCode listens on the client's registered loopback port when it is free
// and moves on when it is busy.
func TestAuthCodeUsesRegisteredPort(t *testing.T) {
	login := func(t *testing.T, port int) string {
		as := newFakeAS(t)
		_, err := flows.AuthCode(context.Background(), flows.AuthCodeConfig{
			Clock: flowstest.NewFakeClock(t0), Discovery: as.disc(nil),
			Client: flows.Client{ID: "cli", RedirectURIs: []string{"https://elsewhere.example/cb",
				fmt.Sprintf("http://127.0.0.1:%d/callback", port)}},
			OpenBrowser: browser(t, nil),
		})
		if err != nil {
			t.Fatal(err)
		}
		auth, _, _ := as.snapshot()
		return auth[0].Get("redirect_uri")
	}
	t.Run("busy", func(t *testing.T) {
		busy, err := net.Listen("tcp4", "127.0.0.1:0") // held throughout
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		port := busy.Addr().(*net.TCPAddr).Port
		if got := login(t, port); got == fmt.Sprintf("http://127.0.0.1:%d/callback", port) || !strings.HasPrefix(got, "http://127.0.0.1:") {
			t.Errorf("redirect_uri %q: want another loopback port than the busy %d", got, port)
		}
	})
	t.Run("free", func(t *testing.T) {
		// A port cannot be reserved for another listener: one is picked and
		// released. Should another process take it meanwhile, AuthCode rightly
		// moves on; that attempt is repeated, and only a port that is still
		// free afterwards proves AuthCode wrong.
		for range 5 {
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := ln.Addr().(*net.TCPAddr).Port
			ln.Close()
			want := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
			got := login(t, port)
			if got == want {
				return
			}
			if again, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
				again.Close()
				t.Fatalf("redirect_uri %q, want %q (the port was free)", got, want)
			}
		}
		t.Fatal("another process took the picked port five times in a row")
	})
}

func TestAuthCodeReregistersOnceOnInvalidClient(t *testing.T) {
	tests := []struct {
		name      string
		reject    func(id string) bool
		source    flows.ClientSource
		wantRegs  int32
		wantOpens int
		wantErr   error
	}{
		{"stale cached client", func(id string) bool { return id == "stale" }, flows.SourceCache, 1, 2, nil},
		{"server keeps refusing", func(string) bool { return true }, flows.SourceCache, 1, 2, flows.ErrInvalidClient},
		{"pre-registered client is not replaced", func(string) bool { return true }, flows.SourcePreRegistered, 0, 1, flows.ErrInvalidClient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := newFakeAS(t)
			as.rejectClient = tt.reject
			disc := as.disc(nil)
			cache := &memCache{}
			_ = cache.Put(disc.Issuer, disc.Resource, &flows.ClientInformation{ClientID: "stale"})
			ccfg := flows.ClientConfig{Cache: cache}
			opens := 0
			tok, err := flows.AuthCode(context.Background(), flows.AuthCodeConfig{
				Clock: flowstest.NewFakeClock(t0), Discovery: disc,
				Client:      flows.Client{ID: "stale", Source: tt.source},
				OpenBrowser: func(u string) error { opens++; return browser(t, nil)(u) },
				Reregister:  func(ctx context.Context) (flows.Client, error) { return ccfg.Reregister(ctx, disc) },
			})
			if got := as.rg.calls.Load(); got != tt.wantRegs || opens != tt.wantOpens {
				t.Errorf("%d registrations and %d browser opens, want %d and %d", got, opens, tt.wantRegs, tt.wantOpens)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || tok.AccessToken != "at-dyn-1" {
				t.Fatalf("token %+v, err %v", tok, err)
			}
			if ci, _ := cache.Get(disc.Issuer, disc.Resource); ci.ClientID != "dyn-1" {
				t.Errorf("cache holds %q, want the new registration", ci.ClientID)
			}
		})
	}
}

// The exported steps, as the conformance suite and the benchmark drive them:
// Authorize with an approver in place of the browser, then Exchange; also
// checks client_secret_basic encoding (RFC 6749 §2.3.1).
func TestAuthCodeSteps(t *testing.T) {
	as := newFakeAS(t)
	cfg := flows.AuthCodeConfig{
		Clock: flowstest.NewFakeClock(t0), Discovery: as.disc(nil),
		Client: flows.Client{ID: "a b", Secret: "p&q:r", AuthMethod: flows.AuthMethodBasic},
	}
	// Nothing listens on the redirect URI: the approver stops at the redirect.
	req, err := cfg.NewRequest("http://127.0.0.1:9/callback")
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	approve := func(ctx context.Context, authURL string) (*url.URL, error) {
		resp, err := noFollow.Get(authURL)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		return resp.Location()
	}
	code, err := cfg.Authorize(context.Background(), req, approve)
	if err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	tok, err := cfg.Exchange(context.Background(), req, code)
	if err != nil {
		t.Fatalf("Exchange: %v", err)
	}
	if tok.AccessToken != "at-a_b" {
		t.Errorf("token %+v", tok)
	}
	_, toks, hdr := as.snapshot()
	wantHdr := "Basic " + base64.StdEncoding.EncodeToString([]byte("a+b:p%26q%3Ar"))
	if hdr[0] != wantHdr || toks[0].Has("client_id") || toks[0].Has("client_secret") {
		t.Errorf("client auth: header %q form %v, want %q and no credentials in the body", hdr[0], toks[0], wantHdr)
	}

	// A replayed code is refused with the server's error, as an OAuthError.
	_, err = cfg.Exchange(context.Background(), req, code)
	if !flows.IsCode(err, "invalid_grant") {
		t.Errorf("replay: err = %v, want invalid_grant", err)
	}
}

func TestAuthCodeBrowserFailure(t *testing.T) {
	as := newFakeAS(t)
	var redirect string
	_, err := flows.AuthCode(context.Background(), flows.AuthCodeConfig{
		Clock: flowstest.NewFakeClock(t0), Discovery: as.disc(nil), Client: flows.Client{ID: "cli"},
		OpenBrowser: func(u string) error {
			pu, _ := url.Parse(u)
			redirect = pu.Query().Get("redirect_uri")
			return errors.New("no display")
		},
	})
	if err == nil || !strings.Contains(err.Error(), "no display") {
		t.Fatalf("err = %v, want the browser error", err)
	}
	ru, _ := url.Parse(redirect)
	if listening(ru.Host) {
		t.Error("listener still open after the browser failed")
	}
}

// listening reports whether an HTTP server answers at hostport. (A bare TCP
// dial is not enough: on loopback a dial to a free ephemeral port can connect
// to itself.)
func listening(hostport string) bool {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + hostport + "/callback")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

func TestAuthorizeChecksTheRedirect(t *testing.T) {
	as := newFakeAS(t)
	cfg := flows.AuthCodeConfig{Discovery: as.disc(nil), Client: flows.Client{ID: "cli"}}
	req, err := cfg.NewRequest("http://127.0.0.1:9/callback")
	if err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		redirect string
		want     error
	}{
		"wrong state": {"http://127.0.0.1:9/callback?code=c&state=other", flows.ErrStateMismatch},
		"denied":      {"http://127.0.0.1:9/callback?error=access_denied&state=" + req.State, flows.ErrAccessDenied},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := cfg.Authorize(context.Background(), req, func(context.Context, string) (*url.URL, error) {
				return url.Parse(tt.redirect)
			})
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// A server that has forgotten a cached client answers the authorization
// request itself with invalid_client and cannot redirect back: the flow
// finds out before opening a browser (which would wait out the timeout),
// registers again and opens the browser once, for the new client.
func TestAuthCodeForgottenClientFoundBeforeTheBrowser(t *testing.T) {
	as := newFakeAS(t)
	as.forgetClient = func(id string) bool { return id == "stale" }
	disc := as.disc(nil)
	cache := &memCache{}
	_ = cache.Put(disc.Issuer, disc.Resource, &flows.ClientInformation{ClientID: "stale"})
	ccfg := flows.ClientConfig{Cache: cache}
	var opened []string
	tok, err := flows.AuthCode(context.Background(), flows.AuthCodeConfig{
		Clock: flowstest.NewFakeClock(t0), Discovery: disc,
		Client: flows.Client{ID: "stale", Source: flows.SourceCache},
		OpenBrowser: func(u string) error {
			pu, _ := url.Parse(u)
			opened = append(opened, pu.Query().Get("client_id"))
			if pu.Query().Get("client_id") == "stale" {
				return errors.New("the browser shows invalid_client and never comes back")
			}
			return browser(t, nil)(u)
		},
		Reregister: func(ctx context.Context) (flows.Client, error) { return ccfg.Reregister(ctx, disc) },
	})
	if err != nil || tok.AccessToken != "at-dyn-1" {
		t.Fatalf("token %+v, err %v (browser opened for %v)", tok, err, opened)
	}
	if len(opened) != 1 || opened[0] != "dyn-1" {
		t.Fatalf("browser opened for %v, want once for the new client", opened)
	}
}
