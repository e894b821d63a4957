package flows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// fakeDevice simulates a device authorization server, speaking either the
// mcpauth contract's JSON dialect or RFC 8628 forms. It answers polls from a
// script and records, by the shared fake clock, when each poll arrived.
type fakeDevice struct {
	t      *testing.T
	clk    *flowstest.FakeClock
	base   string
	form   bool
	script []string // per poll: pending, slow_down, denied, expired, 502, bogus; then a token
	auth   map[string]any

	mu        sync.Mutex
	codeBody  map[string][]string
	pollBody  []map[string][]string
	pollTimes []time.Duration
}

func newFakeDevice(t *testing.T, form bool, script ...string) *fakeDevice {
	srv, mux := newServer(t)
	d := &fakeDevice{t: t, clk: flowstest.NewAutoClock(t0), base: srv.URL, form: form, script: script,
		auth: map[string]any{"device_code": "dc-1", "user_code": "BCDF-1234", "verification_uri": srv.URL + "/auth/device",
			"verification_uri_complete": srv.URL + "/auth/device?user_code=BCDF-1234", "expires_in": 900, "interval": 5}}
	if form {
		mux.HandleFunc("/device_authorization", d.code)
		mux.HandleFunc("/oauth/token", d.poll)
	} else {
		mux.HandleFunc("/api/oauth/device/code", d.code)
		mux.HandleFunc("/api/oauth/device/token", d.poll)
	}
	return d
}

func (d *fakeDevice) disc() *flows.Discovery {
	return discFor(d.base, func(m *flows.AuthServerMetadata) {
		if d.form {
			m.DeviceAuthorizationEndpoint = d.base + "/device_authorization"
		}
	})
}

func (d *fakeDevice) config(mod func(*flows.DeviceConfig)) flows.DeviceConfig {
	cfg := flows.DeviceConfig{Clock: d.clk, Discovery: d.disc(), Client: flows.Client{ID: "cli"},
		ShowCode: func(flows.DeviceAuthorization) {}}
	if mod != nil {
		mod(&cfg)
	}
	return cfg
}

// body decodes a request in the dialect the server expects, failing the test
// on the wrong content type. Values are flattened to string lists.
func (d *fakeDevice) body(r *http.Request) map[string][]string {
	out := map[string][]string{}
	ct := r.Header.Get("Content-Type")
	if d.form {
		if ct != "application/x-www-form-urlencoded" {
			d.t.Errorf("%s: Content-Type %q, want a form", r.URL.Path, ct)
		}
		_ = r.ParseForm()
		return r.PostForm
	}
	if ct != "application/json" {
		d.t.Errorf("%s: Content-Type %q, want JSON", r.URL.Path, ct)
	}
	var m map[string]string
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		d.t.Errorf("%s: body is not a JSON object of strings: %v", r.URL.Path, err)
	}
	for k, v := range m {
		out[k] = []string{v}
	}
	return out
}

func (d *fakeDevice) code(w http.ResponseWriter, r *http.Request) {
	b := d.body(r)
	d.mu.Lock()
	d.codeBody = b
	d.mu.Unlock()
	writeJSON(w, 200, d.auth)
}

func (d *fakeDevice) poll(w http.ResponseWriter, r *http.Request) {
	b := d.body(r)
	d.mu.Lock()
	d.pollBody = append(d.pollBody, b)
	d.pollTimes = append(d.pollTimes, d.clk.Now().Sub(t0))
	n := len(d.pollTimes)
	d.mu.Unlock()
	step := "token"
	if n <= len(d.script) {
		step = d.script[n-1]
	}
	switch step {
	case "pending":
		oauthErr(w, 400, "authorization_pending", "")
	case "slow_down":
		oauthErr(w, 400, "slow_down", "")
	case "denied":
		oauthErr(w, 400, "access_denied", "user said no")
	case "expired":
		oauthErr(w, 400, "expired_token", "")
	case "502":
		http.Error(w, "bad gateway", http.StatusBadGateway)
	case "bogus":
		oauthErr(w, 400, "invalid_grant", "spent")
	default:
		writeJSON(w, 200, map[string]any{"access_token": "jwt", "token_type": "Bearer", "expires_in": 86400})
	}
}

func (d *fakeDevice) record() (code map[string][]string, polls []map[string][]string, times []time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.codeBody, d.pollBody, d.pollTimes
}

func keys(m map[string][]string) string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return strings.Join(k, ",")
}

func TestDeviceSlowDownJSONDialect(t *testing.T) {
	d := newFakeDevice(t, false, "pending", "slow_down", "pending", "pending")
	var shown []flows.DeviceAuthorization
	var events []string
	tok, err := flows.Device(context.Background(), d.config(func(c *flows.DeviceConfig) {
		c.ShowCode = func(da flows.DeviceAuthorization) { shown = append(shown, da) }
		c.OnPoll = func(e flows.PollEvent) {
			code := "ok"
			var oe *flows.OAuthError
			if errors.As(e.Err, &oe) {
				code = oe.Code
			}
			events = append(events, fmt.Sprintf("%d:%s:%s", e.Attempt, code, e.Interval))
		}
	}))
	if err != nil {
		t.Fatalf("Device: %v", err)
	}
	if tok.AccessToken != "jwt" || !tok.Expiry.Equal(t0.Add(40*time.Second+24*time.Hour)) {
		t.Errorf("token %+v", tok)
	}
	if len(shown) != 1 || shown[0].UserCode != "BCDF-1234" || shown[0].VerificationURIComplete == "" ||
		!shown[0].Expiry.Equal(t0.Add(900*time.Second)) {
		t.Errorf("ShowCode got %+v", shown)
	}
	_, polls, times := d.record()
	// interval 5 s; slow_down at the 2nd poll raises it to 10 s for good.
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second, 40 * time.Second}
	if !slices.Equal(times, want) {
		t.Errorf("polls at %v, want %v", times, want)
	}
	if w := d.clk.Waits(); !slices.Equal(w, []time.Duration{5e9, 5e9, 10e9, 10e9, 10e9}) {
		t.Errorf("waits %v", w)
	}
	wantEvents := "[1:authorization_pending:5s 2:slow_down:10s 3:authorization_pending:10s 4:authorization_pending:10s 5:ok:10s]"
	if fmt.Sprint(events) != wantEvents {
		t.Errorf("events %v\nwant %s", events, wantEvents)
	}
	code, _, _ := d.record()
	if keys(code) != "client_id,scope" || code["client_id"][0] != "cli" || code["scope"][0] != "mcp" {
		t.Errorf("device code request %v", code)
	}
	for _, p := range polls {
		if keys(p) != "client_id,device_code,grant_type" || p["device_code"][0] != "dc-1" ||
			p["grant_type"][0] != flows.GrantTypeDeviceCode || p["client_id"][0] != "cli" {
			t.Errorf("poll body %v", p)
		}
	}
}

func TestDeviceFormDialect(t *testing.T) {
	d := newFakeDevice(t, true, "pending")
	tok, err := flows.Device(context.Background(), d.config(nil))
	if err != nil || tok.AccessToken != "jwt" {
		t.Fatalf("Device: %+v, %v", tok, err)
	}
	code, polls, _ := d.record()
	res := d.base + "/mcp"
	if keys(code) != "client_id,resource,scope" || code["resource"][0] != res || code["scope"][0] != "mcp" {
		t.Errorf("device authorization form %v", code)
	}
	if len(polls) != 2 {
		t.Fatalf("%d polls, want 2", len(polls))
	}
	if p := polls[0]; keys(p) != "client_id,device_code,grant_type,resource" || p["grant_type"][0] != flows.GrantTypeDeviceCode {
		t.Errorf("poll form %v", p)
	}

	d2 := newFakeDevice(t, true)
	if _, err := flows.Device(context.Background(), d2.config(func(c *flows.DeviceConfig) { c.NoResource = true })); err != nil {
		t.Fatal(err)
	}
	if code, polls, _ := d2.record(); code["resource"] != nil || polls[0]["resource"] != nil {
		t.Errorf("resource sent with NoResource: %v %v", code, polls[0])
	}
}

func TestDeviceDialectRule(t *testing.T) {
	tests := []struct {
		endpoint string
		override flows.Dialect
		want     flows.Dialect
		wantPoll string
	}{
		{"https://h/api/oauth/device/code", "", flows.DialectJSON, "https://h/api/oauth/device/token"},
		{"https://h/tenant/api/oauth/device/code", "", flows.DialectJSON, "https://h/tenant/api/oauth/device/token"},
		{"https://h/oauth/device/code", "", flows.DialectForm, "https://h/oauth/token"},
		{"https://h/device_authorization", "", flows.DialectForm, "https://h/oauth/token"},
		{"https://h/api/oauth/device/code", flows.DialectForm, flows.DialectForm, "https://h/oauth/token"},
		{"https://h/device/code", flows.DialectJSON, flows.DialectJSON, "https://h/device/token"},
	}
	for _, tt := range tests {
		cfg := flows.DeviceConfig{Dialect: tt.override, Discovery: discFor("https://h", func(m *flows.AuthServerMetadata) {
			m.DeviceAuthorizationEndpoint = tt.endpoint
		})}
		d, _, poll, err := cfg.Endpoints()
		if err != nil || d != tt.want || poll != tt.wantPoll {
			t.Errorf("%s (override %q): %q %q %v, want %q %q", tt.endpoint, tt.override, d, poll, err, tt.want, tt.wantPoll)
		}
	}
}

func TestDeviceOutcomes(t *testing.T) {
	tests := []struct {
		name      string
		script    []string
		mod       func(*fakeDevice)
		want      error
		notWant   error
		wantPolls int
	}{
		{name: "denied", script: []string{"pending", "denied"}, want: flows.ErrAccessDenied, wantPolls: 2},
		{name: "server says expired", script: []string{"expired"}, want: flows.ErrExpiredToken, notWant: flows.ErrDeviceCodeExpired, wantPolls: 1},
		{name: "local expiry", script: slices.Repeat([]string{"pending"}, 100),
			mod:  func(d *fakeDevice) { d.auth["expires_in"] = 12 },
			want: flows.ErrDeviceCodeExpired, notWant: flows.ErrExpiredToken, wantPolls: 2},
		{name: "other OAuth error ends the flow", script: []string{"bogus"}, want: &flows.OAuthError{}, wantPolls: 1},
		{name: "5xx retried three times then succeeds", script: []string{"502", "502", "502"}, wantPolls: 4},
		{name: "5xx a fourth time fails", script: []string{"502", "502", "502", "502"}, want: &flows.OAuthError{}, wantPolls: 4},
		{name: "default interval", script: []string{"pending"}, mod: func(d *fakeDevice) { delete(d.auth, "interval") }, wantPolls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newFakeDevice(t, false, tt.script...)
			if tt.mod != nil {
				tt.mod(d)
			}
			tok, err := flows.Device(context.Background(), d.config(nil))
			_, _, times := d.record()
			if len(times) != tt.wantPolls {
				t.Errorf("%d polls at %v, want %d", len(times), times, tt.wantPolls)
			}
			for i, at := range times {
				if want := time.Duration(i+1) * 5 * time.Second; at != want {
					t.Errorf("poll %d at %v, want %v", i+1, at, want)
				}
			}
			switch w := tt.want.(type) {
			case nil:
				if err != nil || tok.AccessToken != "jwt" {
					t.Fatalf("got %+v, %v", tok, err)
				}
			case *flows.OAuthError:
				var oe *flows.OAuthError
				if !errors.As(err, &oe) {
					t.Fatalf("err = %v, want an OAuthError", err)
				}
			default:
				if !errors.Is(err, w) {
					t.Fatalf("err = %v, want %v", err, w)
				}
			}
			if tt.notWant != nil && errors.Is(err, tt.notWant) {
				t.Errorf("err = %v also matches %v", err, tt.notWant)
			}
		})
	}
}

// A server whose interval (600 s) outlasts its code (expires_in 10): the
// client waits until the expiry, not past it, polls no more, and says the
// code expired.
func TestDeviceIntervalLongerThanTheCodeStopsAtTheExpiry(t *testing.T) {
	d := newFakeDevice(t, false, "pending")
	d.auth["interval"], d.auth["expires_in"] = 600, 10
	tok, err := flows.Device(context.Background(), d.config(nil))
	if !errors.Is(err, flows.ErrDeviceCodeExpired) || tok != nil {
		t.Fatalf("got %v, %v; want ErrDeviceCodeExpired", tok, err)
	}
	if w := d.clk.Waits(); len(w) != 1 || w[0] != 10*time.Second {
		t.Fatalf("waited %v, want [10s]: until the code's expiry, not the interval", w)
	}
	if _, polls, _ := d.record(); len(polls) != 0 {
		t.Fatalf("%d polls after the code expired", len(polls))
	}
}

func TestDeviceContextCancel(t *testing.T) {
	d := newFakeDevice(t, false)
	clk := flowstest.NewFakeClock(t0) // manual: the poll wait never fires
	ctx, cancel := context.WithCancel(context.Background())
	cfg := d.config(func(c *flows.DeviceConfig) {
		c.Clock = clk
		c.ShowCode = func(flows.DeviceAuthorization) { cancel() }
	})
	if _, err := flows.Device(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, polls, _ := d.record(); len(polls) != 0 {
		t.Errorf("%d polls after cancel", len(polls))
	}
}

func TestDeviceAuthorizationErrors(t *testing.T) {
	srv, mux := newServer(t)
	rg := &registrar{}
	mux.HandleFunc("/oauth/register", rg.handler(t))
	mux.HandleFunc("/api/oauth/device/code", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]string
		_ = json.NewDecoder(r.Body).Decode(&m)
		if m["client_id"] == "stale" {
			oauthErr(w, 401, "invalid_client", "unknown client")
			return
		}
		writeJSON(w, 200, map[string]any{"device_code": "d", "user_code": "u", "verification_uri": "https://h/device", "expires_in": 900})
	})
	mux.HandleFunc("/api/oauth/device/token", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"access_token": "t", "token_type": "Bearer"})
	})
	disc := discFor(srv.URL, nil)
	ccfg := flows.ClientConfig{}
	tok, err := flows.Device(context.Background(), flows.DeviceConfig{
		Clock: flowstest.NewAutoClock(t0), Discovery: disc, Client: flows.Client{ID: "stale", Source: flows.SourceCache},
		ShowCode:   func(flows.DeviceAuthorization) {},
		Reregister: func(ctx context.Context) (flows.Client, error) { return ccfg.Reregister(ctx, disc) },
	})
	if err != nil || tok.AccessToken != "t" || rg.calls.Load() != 1 {
		t.Fatalf("token %+v err %v registrations %d", tok, err, rg.calls.Load())
	}
	if !tok.Expiry.IsZero() {
		t.Errorf("Expiry %v without expires_in, want zero", tok.Expiry)
	}
}

// PollOnce is one request, no waiting, and says what interval comes next.
func TestDevicePollOnce(t *testing.T) {
	d := newFakeDevice(t, false, "pending", "slow_down")
	cfg := d.config(nil)
	da, err := cfg.Authorize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		code     string
		interval time.Duration
	}{{"authorization_pending", 5 * time.Second}, {"slow_down", 10 * time.Second}, {"", 5 * time.Second}} {
		tok, next, err := cfg.PollOnce(context.Background(), da, 5*time.Second)
		if want.code != "" && !flows.IsCode(err, want.code) || want.code == "" && (err != nil || tok == nil) {
			t.Errorf("poll: token %v, err %v, want %q", tok, err, want.code)
		}
		if next != want.interval {
			t.Errorf("after %q: next interval %s, want %s", want.code, next, want.interval)
		}
	}
	if _, _, times := d.record(); len(times) != 3 || times[2] != times[0] {
		t.Errorf("polls at %v: PollOnce must not wait", times)
	}
}
