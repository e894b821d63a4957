package flows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Dialect is the wire format of the device flow endpoints.
type Dialect string

const (
	// DialectAuto picks JSON when the device authorization endpoint path ends
	// in /api/oauth/device/code, else form.
	DialectAuto Dialect = ""
	// DialectJSON is the service contract's: JSON bodies, polled at the
	// sibling /api/oauth/device/token.
	DialectJSON Dialect = "json"
	// DialectForm is RFC 8628: form bodies, polled at the token endpoint.
	DialectForm Dialect = "form"
)

const (
	jsonDeviceCodeSuffix = "/api/oauth/device/code"
	defaultPollInterval  = 5 * time.Second
	slowDownStep         = 5 * time.Second // RFC 8628 §3.5
	defaultDeviceExpiry  = 30 * time.Minute
	defaultMaxRetries    = 3
	maxPolls             = 100000 // belt and braces; expiry ends the loop first
)

// DeviceConfig configures the device authorization grant (RFC 8628).
type DeviceConfig struct {
	HTTPClient *http.Client // nil means http.DefaultClient
	Clock      Clock        // nil means RealClock; all waiting goes through it
	Discovery  *Discovery
	Client     Client
	Scope      string // "" means Discovery.Scope
	NoResource bool   // form dialect only: omit the RFC 8707 resource
	Dialect    Dialect
	// ShowCode is called once with the code for the user. Required.
	ShowCode func(DeviceAuthorization)
	// OnPoll, when set, is called after every poll.
	OnPoll func(PollEvent)
	// Reregister: as in AuthCodeConfig, once on invalid_client at the device
	// authorization endpoint.
	Reregister func(ctx context.Context) (Client, error)
	// MaxRetries bounds consecutive network errors, 5xx and 429 answers while
	// polling; 0 means 3.
	MaxRetries int
	// DPoP, when set, binds the tokens to its key (RFC 9449).
	DPoP *DPoP
}

// DeviceAuthorization is an RFC 8628 §3.2 response. Expiry is computed from
// the Clock at receipt.
type DeviceAuthorization struct {
	DeviceCode              string    `json:"device_code"`
	UserCode                string    `json:"user_code"`
	VerificationURI         string    `json:"verification_uri"`
	VerificationURIComplete string    `json:"verification_uri_complete,omitempty"`
	ExpiresIn               int64     `json:"expires_in"`
	Interval                int64     `json:"interval,omitempty"`
	Expiry                  time.Time `json:"expiry"`
}

// PollEvent reports one poll of the token endpoint.
type PollEvent struct {
	Attempt  int           // 1-based
	Status   int           // HTTP status, 0 on a network error
	Err      error         // nil on success; authorization_pending, slow_down, ...
	Interval time.Duration // the interval in force for the next poll
}

// Endpoints returns the dialect in use and the URLs it talks to.
func (cfg DeviceConfig) Endpoints() (d Dialect, codeURL, tokenURL string, err error) {
	if cfg.Discovery == nil || cfg.Discovery.AuthServer == nil || cfg.Discovery.AuthServer.DeviceAuthorizationEndpoint == "" {
		return "", "", "", errors.New("device flow: the authorization server has no device_authorization_endpoint")
	}
	md := cfg.Discovery.AuthServer
	codeURL = md.DeviceAuthorizationEndpoint
	u, err := url.Parse(codeURL)
	if err != nil {
		return "", "", "", fmt.Errorf("device flow: %w", err)
	}
	d = cfg.Dialect
	if d == DialectAuto {
		d = DialectForm
		if strings.HasSuffix(u.Path, jsonDeviceCodeSuffix) {
			d = DialectJSON
		}
	}
	switch d {
	case DialectJSON:
		if strings.HasSuffix(u.Path, "/code") {
			u.Path = strings.TrimSuffix(u.Path, "code") + "token"
		} else {
			u.Path = strings.TrimSuffix(u.Path, "/") + "/token"
		}
		u.RawPath, u.RawQuery = "", ""
		tokenURL = u.String()
	case DialectForm:
		tokenURL = md.TokenEndpoint
	default:
		return "", "", "", fmt.Errorf("device flow: unknown dialect %q", d)
	}
	return d, codeURL, tokenURL, nil
}

// Device runs the device flow: request a code, show it, poll until the user
// approves, denies, or the code expires.
func Device(ctx context.Context, cfg DeviceConfig) (*Token, error) {
	if cfg.ShowCode == nil {
		return nil, errors.New("device flow: ShowCode is required")
	}
	da, err := cfg.Authorize(ctx)
	if err != nil && errors.Is(err, ErrInvalidClient) && cfg.Reregister != nil &&
		(cfg.Client.Source == SourceRegistered || cfg.Client.Source == SourceCache) {
		c, rerr := cfg.Reregister(ctx)
		if rerr != nil {
			return nil, fmt.Errorf("%w; re-registering failed: %w", err, rerr)
		}
		cfg.Client = c
		da, err = cfg.Authorize(ctx)
	}
	if err != nil {
		return nil, err
	}
	cfg.ShowCode(*da)
	return cfg.Poll(ctx, da)
}

// Authorize requests a device code (RFC 8628 §3.1).
func (cfg DeviceConfig) Authorize(ctx context.Context) (*DeviceAuthorization, error) {
	dialect, codeURL, _, err := cfg.Endpoints()
	if err != nil {
		return nil, err
	}
	scope := cfg.Discovery.Scope
	if cfg.Scope != "" {
		scope = WithOfflineAccess(cfg.Scope, cfg.Discovery.AuthServer)
	}
	form := url.Values{}
	if scope != "" {
		form.Set("scope", scope)
	}
	if dialect != DialectJSON && !cfg.NoResource && cfg.Discovery.Resource != "" {
		form.Set("resource", cfg.Discovery.Resource)
	}
	// RFC 8628 §3.1: the client authenticates as at the token endpoint.
	resp, body, err := cfg.tokenRequest(codeURL, dialect).post(ctx, form)
	if err != nil {
		return nil, fmt.Errorf("device authorization at %s: %w", codeURL, err)
	}
	if !isSuccess(resp.StatusCode) {
		return nil, fmt.Errorf("device authorization at %s: %w", codeURL, responseError(resp, body))
	}
	da, err := parseDeviceAuthorization(body, clockOr(cfg.Clock).Now())
	if err != nil {
		return nil, fmt.Errorf("device authorization at %s: %w", codeURL, err)
	}
	return da, nil
}

func parseDeviceAuthorization(body []byte, now time.Time) (*DeviceAuthorization, error) {
	var raw struct {
		DeviceCode              string          `json:"device_code"`
		UserCode                string          `json:"user_code"`
		VerificationURI         string          `json:"verification_uri"`
		VerificationURL         string          `json:"verification_url"` // pre-RFC spelling (Google)
		VerificationURIComplete string          `json:"verification_uri_complete"`
		ExpiresIn               json.RawMessage `json:"expires_in"`
		Interval                json.RawMessage `json:"interval"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("response is not a JSON object: %w", err)
	}
	da := &DeviceAuthorization{DeviceCode: raw.DeviceCode, UserCode: raw.UserCode,
		VerificationURI: raw.VerificationURI, VerificationURIComplete: raw.VerificationURIComplete}
	if da.VerificationURI == "" {
		da.VerificationURI = raw.VerificationURL
	}
	if da.DeviceCode == "" || da.UserCode == "" || da.VerificationURI == "" {
		return nil, errors.New("response lacks device_code, user_code or verification_uri")
	}
	var err error
	if len(raw.ExpiresIn) > 0 {
		if da.ExpiresIn, err = parseSeconds(raw.ExpiresIn); err != nil {
			return nil, fmt.Errorf("expires_in: %w", err)
		}
	}
	if len(raw.Interval) > 0 {
		if da.Interval, err = parseSeconds(raw.Interval); err != nil {
			return nil, fmt.Errorf("interval: %w", err)
		}
	}
	life := secondsDuration(da.ExpiresIn)
	if life <= 0 {
		life = defaultDeviceExpiry
	}
	da.Expiry = now.Add(life)
	return da, nil
}

// Poll polls until the user decides or the code expires (RFC 8628 §3.4–3.5):
// it waits interval (5 s when absent) before each poll; authorization_pending
// polls on; slow_down adds 5 s to every later interval; network errors, 5xx
// and 429 are retried MaxRetries times in a row at the same interval.
// access_denied and expired_token come back as *OAuthError matching
// ErrAccessDenied and ErrExpiredToken; the local expiry as
// ErrDeviceCodeExpired.
func (cfg DeviceConfig) Poll(ctx context.Context, da *DeviceAuthorization) (*Token, error) {
	if _, _, _, err := cfg.Endpoints(); err != nil {
		return nil, err
	}
	clk := clockOr(cfg.Clock)
	interval := secondsDuration(da.Interval)
	if interval <= 0 {
		interval = defaultPollInterval
	}
	maxRetries := cfg.MaxRetries
	if maxRetries <= 0 {
		maxRetries = defaultMaxRetries
	}
	failures := 0
	for attempt := 1; attempt <= maxPolls; attempt++ {
		// An interval past the code's expiry (a server's, or grown by
		// slow_down) waits only until the expiry: a poll after it is useless.
		wait := min(interval, max(da.Expiry.Sub(clk.Now()), 0))
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("device flow: %w", ctx.Err())
		case <-clk.After(wait):
		}
		if !clk.Now().Before(da.Expiry) {
			return nil, ErrDeviceCodeExpired
		}
		tok, status, err := cfg.pollOnce(ctx, da.DeviceCode)
		interval = nextInterval(err, interval)
		transient := false
		switch {
		case err == nil, IsCode(err, "authorization_pending"), IsCode(err, "slow_down"):
			failures = 0
		case ctx.Err() != nil:
			return nil, fmt.Errorf("device flow: %w", ctx.Err())
		case isTransient(err, status):
			transient = true
			failures++
		}
		if cfg.OnPoll != nil {
			cfg.OnPoll(PollEvent{Attempt: attempt, Status: status, Err: err, Interval: interval})
		}
		switch {
		case err == nil:
			return tok, nil
		case IsCode(err, "authorization_pending"), IsCode(err, "slow_down"):
			continue
		case transient && failures <= maxRetries:
			continue
		}
		return nil, fmt.Errorf("device flow: %w", err)
	}
	return nil, ErrDeviceCodeExpired
}

// PollOnce makes one token request for da now, without waiting (RFC 8628
// §3.4), and returns the interval to wait before the next one: interval, or
// interval + 5 s after slow_down (§3.5). Poll is PollOnce in a paced loop;
// callers that pace polls themselves (the conformance suite, the benchmark)
// call it directly.
func (cfg DeviceConfig) PollOnce(ctx context.Context, da *DeviceAuthorization, interval time.Duration) (*Token, time.Duration, error) {
	tok, _, err := cfg.pollOnce(ctx, da.DeviceCode)
	return tok, nextInterval(err, interval), err
}

// nextInterval applies slow_down (RFC 8628 §3.5) to the poll interval.
func nextInterval(err error, interval time.Duration) time.Duration {
	if IsCode(err, "slow_down") {
		return interval + slowDownStep
	}
	return interval
}

func (cfg DeviceConfig) pollOnce(ctx context.Context, deviceCode string) (*Token, int, error) {
	dialect, _, tokenURL, err := cfg.Endpoints()
	if err != nil {
		return nil, 0, err
	}
	form := url.Values{"grant_type": {GrantTypeDeviceCode}, "device_code": {deviceCode}}
	if dialect != DialectJSON && !cfg.NoResource {
		form.Set("resource", cfg.Discovery.Resource)
	}
	tok, _, err := cfg.tokenRequest(tokenURL, dialect).Do(ctx, form)
	var oe *OAuthError
	switch {
	case err == nil:
		return tok, http.StatusOK, nil
	case errors.As(err, &oe) && oe.StatusCode != 0:
		return nil, oe.StatusCode, err // the server answered: the poll's result
	}
	return nil, 0, fmt.Errorf("polling %s: %w", tokenURL, err)
}

// tokenRequest is how the device flow talks to endpoint: the client's
// authentication and DPoP, in the dialect's encoding.
func (cfg DeviceConfig) tokenRequest(endpoint string, dialect Dialect) TokenRequest {
	return TokenRequest{HTTPClient: cfg.HTTPClient, Clock: cfg.Clock, Endpoint: endpoint, Issuer: cfg.Discovery.Issuer,
		Client: cfg.Client, DPoP: cfg.DPoP, JSON: dialect == DialectJSON}
}

// isTransient: worth retrying at the same interval.
func isTransient(err error, status int) bool {
	var oe *OAuthError
	if errors.As(err, &oe) {
		return oe.StatusCode >= 500 || oe.StatusCode == http.StatusTooManyRequests ||
			oe.Code == "temporarily_unavailable"
	}
	return status == 0 // no HTTP answer: network error
}
