package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/servertest"
)

var userCodeShape = regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[0-9]{4}$`)

// The device code response carries the contract's fields with its values,
// for a JSON request (the contract) and a form (RFC 8628 clients), with the
// scope given or omitted.
func TestDeviceCodeIssuance(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	const form = "application/x-www-form-urlencoded"
	seen := map[string]bool{}
	for _, tt := range []struct{ name, ctype, body string }{
		{"JSON", "application/json", `{"client_id":"` + c.ID + `","scope":"mcp"}`},
		{"JSON without scope", "application/json", `{"client_id":"` + c.ID + `"}`},
		{"JSON with charset", "application/json; charset=utf-8", `{"client_id":"` + c.ID + `"}`},
		{"form", form, "client_id=" + c.ID + "&scope=mcp"},
		{"form without scope", form, "client_id=" + c.ID},
		{"JSON with offline_access", "application/json", `{"client_id":"` + c.ID + `","scope":"mcp offline_access"}`},
		{"form with offline_access first", form, "client_id=" + c.ID + "&scope=offline_access+mcp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, http.MethodPost, env.URL+"/api/oauth/device/code", tt.ctype, tt.body, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if resp.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", resp.Header.Get("Cache-Control"))
			}
			var d deviceBody
			mustJSON(t, body, &d)
			verify := env.URL + "/auth/device"
			switch {
			case len(d.DeviceCode) < 32:
				t.Fatalf("device_code %q is short", d.DeviceCode)
			case !userCodeShape.MatchString(d.UserCode):
				t.Fatalf("user_code %q does not match %s", d.UserCode, userCodeShape)
			case d.VerificationURI != verify:
				t.Fatalf("verification_uri %q, want %q", d.VerificationURI, verify)
			case d.VerificationURIComplete != verify+"?user_code="+url.QueryEscape(d.UserCode):
				t.Fatalf("verification_uri_complete %q", d.VerificationURIComplete)
			case d.ExpiresIn != 900 || d.Interval != 5:
				t.Fatalf("expires_in %d interval %d, want 900 and 5", d.ExpiresIn, d.Interval)
			case seen[d.DeviceCode] || seen[d.UserCode]:
				t.Fatal("a code was issued twice")
			}
			seen[d.DeviceCode], seen[d.UserCode] = true, true
		})
	}
}

// Device code requests that cannot be served: the client and scope rules of
// decisions.md, and the accepted content types.
func TestDeviceCodeErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	codeOnly := registerMeta(t, env, map[string]any{"redirect_uris": []string{testRedirect}})
	c := register(t, env)
	for _, tt := range []struct {
		name, ctype, body string
		status            int
		code              string
	}{
		{"unknown client", "application/json", `{"client_id":"nobody"}`, 401, "invalid_client"},
		{"client without the device grant", "application/json", `{"client_id":"` + codeOnly + `"}`, 400, "unauthorized_client"},
		{"missing client_id", "application/json", `{"scope":"mcp"}`, 400, "invalid_request"},
		{"scope admin", "application/json", `{"client_id":"` + c.ID + `","scope":"admin"}`, 400, "invalid_scope"},
		{"offline_access plus unknown", "application/json", `{"client_id":"` + c.ID + `","scope":"mcp offline_access admin"}`, 400, "invalid_scope"},
		{"client_id not a string", "application/json", `{"client_id":7}`, 400, "invalid_request"},
		{"text/plain", "text/plain", "client_id=" + c.ID, 400, "invalid_request"},
		{"repeated client_id", "application/x-www-form-urlencoded", "client_id=" + c.ID + "&client_id=" + c.ID, 400, "invalid_request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, http.MethodPost, env.URL+"/api/oauth/device/code", tt.ctype, tt.body, nil)
			oauthErr(t, resp, body, tt.status, tt.code)
		})
	}
}

// Polling follows RFC 8628 §3.5: too fast is slow_down and raises the
// interval by 5 s each time; polling at the raised interval is pending.
func TestDevicePollingInterval(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	d := requestDeviceCode(t, env, c.ID)
	poll := func(want string) {
		t.Helper()
		resp, body := pollDevice(t, env, c.ID, d.DeviceCode)
		oauthErr(t, resp, body, http.StatusBadRequest, want)
	}
	poll("authorization_pending")
	env.Clock.Advance(time.Second)
	poll("slow_down") // interval now 10 s
	env.Clock.Advance(6 * time.Second)
	poll("slow_down") // interval now 15 s
	env.Clock.Advance(15 * time.Second)
	poll("authorization_pending")
	env.Clock.Advance(15 * time.Second)
	poll("authorization_pending")

	// A poll for another client does not count against this one's pace.
	other := register(t, env)
	resp, body := pollDevice(t, env, other.ID, d.DeviceCode)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
	env.Clock.Advance(15 * time.Second)
	poll("authorization_pending")
}

// Approval at /auth/device (code typed in lower case without the hyphen)
// makes the next poll return the token; the code is then spent. Both the
// contract's JSON endpoint and /oauth/token (form, RFC 8628 §3.4) work.
func TestDeviceApproval(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	for name, poll := range map[string]func(*testing.T, *servertest.Env, string, string) (*http.Response, []byte){
		"json endpoint": pollDevice, "oauth token endpoint": pollDeviceForm,
	} {
		t.Run(name, func(t *testing.T) {
			d := requestDeviceCode(t, env, c.ID)
			resp, body := poll(t, env, c.ID, d.DeviceCode)
			oauthErr(t, resp, body, http.StatusBadRequest, "authorization_pending")

			b := env.Browser("dev-" + strings.ReplaceAll(name, " ", "-"))
			typed := strings.ToLower(strings.ReplaceAll(d.UserCode, "-", ""))
			page, err := b.Device(context.Background(), typed, "approve")
			if err != nil {
				t.Fatal(err)
			}
			if page.Status != http.StatusOK || !bytes.Contains(page.Body, []byte(`id="result">Device connected`)) {
				t.Fatalf("approval page: %d %.300s", page.Status, page.Body)
			}
			resp, body = poll(t, env, c.ID, d.DeviceCode)
			tok := mustToken(t, resp, body)
			key, err := b.APIKey(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := userID(t, env, tok.AccessToken), userID(t, env, key); got != want {
				t.Fatalf("device token is for %s, want the approving user %s", got, want)
			}
			resp, body = poll(t, env, c.ID, d.DeviceCode)
			oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
		})
	}
}

// verification_uri_complete fills in the code; the user only confirms.
func TestDeviceVerificationURIComplete(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	d := requestDeviceCode(t, env, c.ID)
	b := env.Browser("complete")
	ctx := context.Background()
	page, err := b.Get(ctx, d.VerificationURIComplete)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page.Body, []byte(`value="`+d.UserCode+`"`)) {
		t.Fatalf("entry page does not carry the code: %.300s", page.Body)
	}
	if page, err = b.Submit(ctx, page, "lookup", nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page.Body, []byte("Test Client")) {
		t.Fatalf("confirmation page does not name the client: %.300s", page.Body)
	}
	if page, err = b.Submit(ctx, page, "approve", nil); err != nil || page.Status != http.StatusOK {
		t.Fatalf("approve: %v %v", page, err)
	}
	resp, body := pollDevice(t, env, c.ID, d.DeviceCode)
	mustToken(t, resp, body)
}

// Denial is reported once as access_denied; the code is then spent.
func TestDeviceDenial(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	d := requestDeviceCode(t, env, c.ID)
	page, err := env.Browser("denier").Device(context.Background(), d.UserCode, "deny")
	if err != nil || page.Status != http.StatusOK || !bytes.Contains(page.Body, []byte(`id="result">Access denied`)) {
		t.Fatalf("deny: %v %v", page, err)
	}
	resp, body := pollDevice(t, env, c.ID, d.DeviceCode)
	oauthErr(t, resp, body, http.StatusBadRequest, "access_denied")
	env.Clock.Advance(5 * time.Second)
	resp, body = pollDevice(t, env, c.ID, d.DeviceCode)
	oauthErr(t, resp, body, http.StatusBadRequest, "invalid_grant")
}

// A device code lives 900 s: pending at 899 s, expired_token from 900 s,
// and no longer approvable.
func TestDeviceExpiry(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	d := requestDeviceCode(t, env, c.ID)
	b := env.Browser("late")
	if err := b.SignIn(context.Background()); err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(899 * time.Second)
	resp, body := pollDevice(t, env, c.ID, d.DeviceCode)
	oauthErr(t, resp, body, http.StatusBadRequest, "authorization_pending")
	env.Clock.Advance(time.Second)
	resp, body = pollDevice(t, env, c.ID, d.DeviceCode)
	oauthErr(t, resp, body, http.StatusBadRequest, "expired_token")
	resp, body = pollDeviceForm(t, env, c.ID, d.DeviceCode)
	oauthErr(t, resp, body, http.StatusBadRequest, "expired_token")

	page, err := b.Device(context.Background(), d.UserCode, "approve")
	if err != nil {
		t.Fatal(err)
	}
	if page.Status != http.StatusBadRequest || !bytes.Contains(page.Body, []byte(`id="error"`)) {
		t.Fatalf("entering an expired code: %d, want the entry page with an error", page.Status)
	}
	env.Clock.Advance(10 * time.Second)
	resp, body = pollDevice(t, env, c.ID, d.DeviceCode)
	oauthErr(t, resp, body, http.StatusBadRequest, "expired_token")
}

// Polls that name the wrong code, client or grant.
func TestDevicePollErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	other := register(t, env)
	d := requestDeviceCode(t, env, c.ID)
	tokenPath, jsonPath := "/oauth/token", "/api/oauth/device/token"
	for _, tt := range []struct {
		name, path string
		params     map[string]string
		status     int
		code       string
	}{
		{"unknown device code", jsonPath, map[string]string{"grant_type": deviceGrant, "device_code": "nope", "client_id": c.ID}, 400, "invalid_grant"},
		{"another client's code", jsonPath, map[string]string{"grant_type": deviceGrant, "device_code": d.DeviceCode, "client_id": other.ID}, 400, "invalid_grant"},
		{"unknown client", jsonPath, map[string]string{"grant_type": deviceGrant, "device_code": d.DeviceCode, "client_id": "nobody"}, 401, "invalid_client"},
		{"missing device_code", jsonPath, map[string]string{"grant_type": deviceGrant, "client_id": c.ID}, 400, "invalid_request"},
		{"missing client_id", jsonPath, map[string]string{"grant_type": deviceGrant, "device_code": d.DeviceCode}, 400, "invalid_request"},
		{"missing grant_type", jsonPath, map[string]string{"device_code": d.DeviceCode, "client_id": c.ID}, 400, "invalid_request"},
		{"authorization_code grant", jsonPath, map[string]string{"grant_type": "authorization_code", "device_code": d.DeviceCode, "client_id": c.ID}, 400, "unsupported_grant_type"},
		{"form: unknown device code", tokenPath, map[string]string{"grant_type": deviceGrant, "device_code": "nope", "client_id": c.ID}, 400, "invalid_grant"},
		{"form: unknown client", tokenPath, map[string]string{"grant_type": deviceGrant, "device_code": d.DeviceCode, "client_id": "nobody"}, 401, "invalid_client"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var resp *http.Response
			var body []byte
			if tt.path == jsonPath {
				resp, body = postJSON(t, env.URL+tt.path, tt.params)
			} else {
				form := url.Values{}
				for k, v := range tt.params {
					form.Set(k, v)
				}
				resp, body = postForm(t, env.URL+tt.path, form)
			}
			oauthErr(t, resp, body, tt.status, tt.code)
		})
	}
	// None of that touched the code: its first real poll is pending.
	resp, body := pollDevice(t, env, c.ID, d.DeviceCode)
	oauthErr(t, resp, body, http.StatusBadRequest, "authorization_pending")
}

// Concurrent polls of one approved device code: exactly one gets the token.
func TestDeviceConcurrentPolls(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	b := env.Browser("racer")
	for round := range 5 {
		d := requestDeviceCode(t, env, c.ID)
		if page, err := b.Device(context.Background(), d.UserCode, "approve"); err != nil || page.Status != http.StatusOK {
			t.Fatalf("approve: %v %v", page, err)
		}
		body, _ := json.Marshal(map[string]string{"grant_type": deviceGrant, "device_code": d.DeviceCode, "client_id": c.ID})
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		errs := make([]error, 2)
		start := make(chan struct{})
		for i := range statuses {
			wg.Go(func() {
				<-start
				resp, _, err := send(http.MethodPost, env.URL+"/api/oauth/device/token", "application/json", string(body), nil)
				if errs[i] = err; err == nil {
					statuses[i] = resp.StatusCode
				}
			})
		}
		close(start)
		wg.Wait()
		ok := 0
		for i, s := range statuses {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if s == http.StatusOK {
				ok++
			} else if s != http.StatusBadRequest {
				t.Fatalf("round %d: status %d", round, s)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d of 2 racing polls got a token, want exactly 1", round, ok)
		}
	}
}

// Wrong user codes are limited per session and per IP: after 10 the next
// attempt is a 429 with Retry-After, even with the right code or another
// session from the same address; once that time has passed on the server's
// clock the user can go on.
func TestDeviceWrongUserCodeLimit(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := register(t, env)
	d := requestDeviceCode(t, env, c.ID)
	ctx := context.Background()
	b := env.Browser("guesser")
	for i := range 10 {
		guess := "BCDF-" + strconv.Itoa(1000+i)
		if guess == d.UserCode || i%3 == 0 {
			guess = "not a code"
		}
		page, err := b.Device(ctx, guess, "approve")
		if err != nil {
			t.Fatal(err)
		}
		if page.Status != http.StatusBadRequest || !bytes.Contains(page.Body, []byte(`id="error"`)) {
			t.Fatalf("wrong code %d: status %d, want 400 with an error", i+1, page.Status)
		}
	}
	limited := func(b *servertest.Browser) time.Duration {
		t.Helper()
		page, err := b.Device(ctx, d.UserCode, "approve")
		if err != nil {
			t.Fatal(err)
		}
		ra, err := strconv.Atoi(page.Header.Get("Retry-After"))
		if page.Status != http.StatusTooManyRequests || err != nil || ra < 1 {
			t.Fatalf("after 10 wrong codes: status %d Retry-After %q, want 429 with a delay", page.Status, page.Header.Get("Retry-After"))
		}
		if !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("429 Content-Type %q, want a page", page.Header.Get("Content-Type"))
		}
		return time.Duration(ra) * time.Second
	}
	wait := limited(b)
	limited(env.Browser("accomplice")) // same IP, fresh session
	resp, body := pollDevice(t, env, c.ID, d.DeviceCode)
	oauthErr(t, resp, body, http.StatusBadRequest, "authorization_pending")

	env.Clock.Advance(wait)
	page, err := b.Device(ctx, d.UserCode, "approve")
	if err != nil || page.Status != http.StatusOK {
		t.Fatalf("after Retry-After: %v %v", page, err)
	}
	resp, body = pollDevice(t, env, c.ID, d.DeviceCode)
	mustToken(t, resp, body)
}
