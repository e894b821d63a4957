package conformance

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpauth/mcpauth/flows"
)

var userCodeShape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z]{4}-[0-9]{4}$`) }) // compiled on first use, not at start-up

const deviceCodePath, deviceTokenPath = "/api/oauth/device/code", "/api/oauth/device/token"

// deviceField is a check on the device authorization response object.
func deviceField(id, title, source string, check func(e *Env, o object) error) Check {
	return probe(Check{ID: id, Title: title, Area: "device", Source: source},
		deviceCode(func(cid string) map[string]string { return map[string]string{"client_id": cid, "scope": "mcp"} }),
		jsonOK(check))
}

// deviceCode posts the JSON device code request built from the suite's client id.
func deviceCode(body func(cid string) map[string]string) sender {
	return asClient(func(cid string) sender { return postJSON(deviceCodePath, body(cid)) })
}

// atDevice requests a device code for the suite's client and sends the
// request built from it.
func atDevice(build func(cid string, d *flows.DeviceAuthorization) sender) sender {
	return func(ctx context.Context, e *Env) (*Response, error) {
		cid, d, err := e.deviceSetup(ctx)
		if err != nil {
			return nil, err
		}
		return build(cid, d)(ctx, e)
	}
}

// polled polls the device token endpoint as clientID.
func polled(clientID string, d *flows.DeviceAuthorization) sender {
	return func(ctx context.Context, e *Env) (*Response, error) { return e.poll(ctx, clientID, d) }
}

// after moves the clock by d, then sends s.
func after(d time.Duration, s sender) sender {
	return func(ctx context.Context, e *Env) (*Response, error) {
		if err := e.Advance(ctx, d); err != nil {
			return nil, err
		}
		return s(ctx, e)
	}
}

// isOAuthError reports whether r is an OAuth error with code.
func isOAuthError(r *Response, code string) bool {
	var oe oauthError
	return r.Status >= 400 && json.Unmarshal(r.Body, &oe) == nil && oe.Error == code
}

// pollPatiently polls, and polls again after waiting for real while the answer
// is slow_down (twice at most), so that checks about approval are not judged
// on pacing; the pacing checks poll with poll.
func (e *Env) pollPatiently(ctx context.Context, cid string, d *flows.DeviceAuthorization) (*Response, error) {
	cfg, rec := e.deviceConfig(cid)
	wait := time.Duration(max(d.Interval, 1)) * time.Second
	for i := 0; ; i++ {
		_, next, err := cfg.PollOnce(ctx, d, wait)
		if i == 2 || !flows.IsCode(err, "slow_down") {
			return rec.answer(err)
		}
		wait = next
		e.Progress("slow_down; polling again in %s", wait)
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// pollError is a check that a poll built from a fresh device code gets an error.
func pollError(id, title, source string, status int, codes []string, body func(cid string, d *flows.DeviceAuthorization) map[string]string) Check {
	return probe(Check{ID: id, Title: title, Area: "device", Source: source},
		atDevice(func(cid string, d *flows.DeviceAuthorization) sender { return postJSON(deviceTokenPath, body(cid, d)) }),
		oauthErr(status, codes...))
}

func pollBody(cid, deviceCode string) map[string]string {
	return map[string]string{"device_code": deviceCode, "client_id": cid, "grant_type": flows.GrantTypeDeviceCode}
}

// slowDownThenWait: poll after the interval, poll again at once (slow_down),
// wait after, then poll and expect want.
func slowDownThenWait(id, title string, after time.Duration, want string) Check {
	return Check{
		ID: id, Title: title, Area: "device", Source: "RFC 8628 §3.5 via decisions.md §Device flow",
		Needs: []Need{NeedTimeTravel}, Wait: 5*time.Second + after,
		Run: func(ctx context.Context, e *Env) error {
			cid, d, err := e.deviceSetup(ctx)
			if err != nil {
				return err
			}
			if err := e.Advance(ctx, 5*time.Second); err != nil {
				return err
			}
			if r, err := e.poll(ctx, cid, d); err != nil || !isOAuthError(r, "authorization_pending") {
				return setupFail("first poll after the interval", errOr(err, r))
			}
			r, err := e.poll(ctx, cid, d)
			if err != nil {
				return err
			}
			if err := wantOAuthError(r, 400, "slow_down"); err != nil {
				return Fail("an immediate second poll: %v", err)
			}
			if err := e.Advance(ctx, after); err != nil {
				return err
			}
			if r, err = e.poll(ctx, cid, d); err != nil {
				return err
			}
			if err := wantOAuthError(r, 400, want); err != nil {
				return Fail("a poll %s after slow_down: %v", after, err)
			}
			return nil
		},
	}
}

// deviceAge is a check on a device code left unapproved for age.
func deviceAge(id, title string, age time.Duration, want string) Check {
	return pollAfter(Check{ID: id, Title: title, Area: "device", Source: "contract §States and transitions (device code, 900 s)"}, age, want)
}

// pollAfter is the check c that a poll age after the device code was issued
// gets 400 want.
func pollAfter(c Check, age time.Duration, want string) Check {
	c.Needs, c.Wait = []Need{NeedTimeTravel}, age
	return probe(c, atDevice(func(cid string, d *flows.DeviceAuthorization) sender { return after(age, polled(cid, d)) }),
		oauthErr(400, want))
}

// approvedDevice requests a device code, has it approved with the user code
// as typed (typed(userCode)), and returns what the next poll gets.
func (e *Env) approvedDevice(ctx context.Context, approve bool, typed func(string) string) (string, *flows.DeviceAuthorization, *Response, error) {
	cid, d, err := e.deviceSetup(ctx)
	if err != nil {
		return "", nil, nil, err
	}
	if err := e.approveDevice(ctx, d, typed(d.UserCode), approve); err != nil {
		return "", nil, nil, err
	}
	r, err := e.pollPatiently(ctx, cid, d)
	return cid, d, r, err
}

// deviceApproved sends the poll that follows approvedDevice.
func deviceApproved(approve bool, typed func(string) string) sender {
	return func(ctx context.Context, e *Env) (*Response, error) {
		_, _, r, err := e.approvedDevice(ctx, approve, typed)
		return r, err
	}
}

func same(s string) string { return s }

// Sources the device checks cite.
const (
	deviceRecordSrc = "contract §Device code record"
	deviceRFCSrc    = "RFC 8628 via decisions.md §Device flow"
	deviceErrSrc    = "RFC 6749 §5.2 via decisions.md §HTTP status of OAuth errors"
)

// deviceChecks are the device area in ID order: the device code request,
// polling, then approval and expiry.
func deviceChecks() []Check {
	return slices.Concat(deviceCodeChecks(), devicePollChecks(), deviceApprovalChecks())
}

// deviceCodeChecks: POST /api/oauth/device/code (DEV-01 to DEV-11).
func deviceCodeChecks() []Check {
	const contract, rfc, errSrc = deviceRecordSrc, deviceRFCSrc, deviceErrSrc
	return []Check{
		deviceField("DEV-01", "the device code response has every field with its type", contract,
			func(e *Env, o object) error {
				for _, k := range []string{"device_code", "user_code", "verification_uri"} {
					if s, err := o.str(k); err != nil {
						return err
					} else if s == "" {
						return Fail("%s is empty", k)
					}
				}
				for _, k := range []string{"expires_in", "interval"} {
					if _, err := o.integer(k); err != nil {
						return err
					}
				}
				return nil
			}),
		deviceField("DEV-02", "user_code is four letters, a hyphen, four digits", contract,
			func(e *Env, o object) error {
				uc, err := o.str("user_code")
				if err != nil {
					return err
				}
				if !userCodeShape().MatchString(uc) {
					return Fail("user_code: want the shape ABCD-1234, got %q", uc)
				}
				return nil
			}),
		deviceField("DEV-03", "verification_uri is {base}/auth/device", contract,
			func(e *Env, o object) error { return o.wantStr("verification_uri", e.URL("/auth/device")) }),
		deviceField("DEV-04", "expires_in is 900", contract,
			func(e *Env, o object) error { return o.wantInt("expires_in", 900) }),
		deviceField("DEV-05", "interval is 5", contract,
			func(e *Env, o object) error { return o.wantInt("interval", 5) }),
		deviceField("DEV-06", "verification_uri_complete is {base}/auth/device?user_code=…", rfc+"; RFC 8628 §3.3.1",
			func(e *Env, o object) error {
				uc, err := o.str("user_code")
				if err != nil {
					return err
				}
				c, err := o.str("verification_uri_complete")
				if err != nil {
					return err
				}
				u, err := url.Parse(c)
				if err != nil || !strings.HasPrefix(c, e.URL("/auth/device?")) || u.Query().Get("user_code") != uc {
					return Fail("verification_uri_complete: want %s?user_code=%s, got %q", e.URL("/auth/device"), uc, c)
				}
				return nil
			}),
		probe(Check{ID: "DEV-07", Title: "a device code request from an unknown client gets 401 invalid_client", Area: "device",
			Source: "contract §Errors; decisions.md §Registration (device flow client_id)"},
			fresh(func() sender {
				return postJSON(deviceCodePath, map[string]string{"client_id": "unknown-" + randomString(8)})
			}),
			oauthErr(401, "invalid_client")),
		probe(Check{ID: "DEV-08", Title: "the device code endpoint also accepts a form-encoded request", Area: "device",
			Source: rfc + "; RFC 8628 §3.1"},
			asClient(func(cid string) sender {
				return postForm(deviceCodePath, url.Values{"client_id": {cid}, "scope": {"mcp"}})
			}),
			func(_ *Env, r *Response) error {
				if r.Status != 200 {
					return Fail("want HTTP 200, got %s", r.Snippet())
				}
				var d flows.DeviceAuthorization
				if err := r.JSON(&d); err != nil || d.DeviceCode == "" {
					return Fail("want a device authorization response, got %s", r.Snippet())
				}
				return nil
			}),
		probe(Check{ID: "DEV-09", Title: "a device code request in another content type gets 400 invalid_request", Area: "device",
			Source: "decisions.md §Token endpoint (device endpoints content types)"},
			asClient(func(cid string) sender { return postRaw(deviceCodePath, "text/plain", `{"client_id":"`+cid+`"}`) }),
			oauthErr(400, "invalid_request")),
		probe(Check{ID: "DEV-10", Title: "a device code request with a scope other than mcp gets 400 invalid_scope", Area: "device",
			Source: errSrc + "; RFC 8628 §3.2"},
			deviceCode(func(cid string) map[string]string { return map[string]string{"client_id": cid, "scope": "admin"} }),
			oauthErr(400, "invalid_scope")),
		probe(Check{ID: "DEV-11", Title: "scope may be omitted from the device code request", Area: "device",
			Source: "contract §POST /api/oauth/device/code"},
			deviceCode(func(cid string) map[string]string { return map[string]string{"client_id": cid} }),
			status(200)),
	}
}

// devicePollChecks: polling before approval (DEV-12 to DEV-23).
func devicePollChecks() []Check {
	const errSrc = deviceErrSrc
	return []Check{
		probe(Check{ID: "DEV-12", Title: "polling an unapproved code gets a 400 JSON error with no-store", Area: "device",
			Source: "contract §States and transitions; decisions.md §HTTP status of OAuth errors"},
			atDevice(polled),
			// The first poll may come before the interval has passed since
			// issue; whether that is "too frequent" is the server's call.
			all(oauthErr(400, "authorization_pending", "slow_down"), jsonType, noStore)),
		pollAfter(Check{ID: "DEV-13", Title: "a poll after the interval gets authorization_pending", Area: "device",
			Source: "contract §States and transitions (device code)"}, 5*time.Second, "authorization_pending"),
		probe(Check{ID: "DEV-14", Title: "a second poll right after the first gets slow_down", Area: "device",
			Source: "contract §States and transitions (poll too frequent); RFC 8628 §3.5"},
			atDevice(func(cid string, d *flows.DeviceAuthorization) sender {
				return func(ctx context.Context, e *Env) (*Response, error) {
					if _, err := e.poll(ctx, cid, d); err != nil {
						return nil, err
					}
					return e.poll(ctx, cid, d)
				}
			}),
			oauthErr(400, "slow_down")),
		slowDownThenWait("DEV-15", "after slow_down the interval is 10 s: a poll 5 s later still gets slow_down", 5*time.Second, "slow_down"),
		slowDownThenWait("DEV-16", "after slow_down, a poll 10 s later gets authorization_pending", 10*time.Second, "authorization_pending"),
		pollError("DEV-17", "an unknown device_code gets 400 invalid_grant",
			"RFC 6749 §5.2 (invalid_grant) chosen by the suite: decisions.md does not name it", 400, []string{"invalid_grant"},
			func(cid string, _ *flows.DeviceAuthorization) map[string]string {
				return pollBody(cid, randomString(24))
			}),
		probe(Check{ID: "DEV-18", Title: "a device code polled by another client gets 400 invalid_grant", Area: "device",
			Source: "RFC 6749 §5.2 (grant issued to another client)"},
			atDevice(func(_ string, d *flows.DeviceAuthorization) sender {
				return func(ctx context.Context, e *Env) (*Response, error) {
					other, err := e.client(ctx, 1)
					if err != nil {
						return nil, err
					}
					return e.poll(ctx, other, d)
				}
			}),
			oauthErr(400, "invalid_grant")),
		pollError("DEV-19", "a poll with another grant_type gets 400 unsupported_grant_type", errSrc, 400, []string{"unsupported_grant_type"},
			func(cid string, d *flows.DeviceAuthorization) map[string]string {
				b := pollBody(cid, d.DeviceCode)
				b["grant_type"] = "authorization_code"
				return b
			}),
		pollError("DEV-20", "a poll without device_code gets 400 invalid_request", errSrc, 400, []string{"invalid_request"},
			func(cid string, _ *flows.DeviceAuthorization) map[string]string {
				return map[string]string{"client_id": cid, "grant_type": flows.GrantTypeDeviceCode}
			}),
		pollError("DEV-21", "a poll from an unknown client gets 401 invalid_client", errSrc, 401, []string{"invalid_client"},
			func(_ string, d *flows.DeviceAuthorization) map[string]string {
				return pollBody("unknown-"+randomString(8), d.DeviceCode)
			}),
		formPoll("DEV-22", "the device token endpoint also accepts a form-encoded poll", "/api/oauth/device/token"),
		formPoll("DEV-23", "the device grant is accepted form-encoded at /oauth/token", "/oauth/token"),
	}
}

// deviceApprovalChecks: approval, denial, expiry, and the error format of
// the device token endpoint (DEV-24 to DEV-30).
func deviceApprovalChecks() []Check {
	return []Check{
		probe(Check{ID: "DEV-24", Title: "after approval the next poll returns a Bearer token with no-store", Area: "device",
			Source: "contract §States and transitions (approved)", Needs: []Need{NeedApproval}},
			deviceApproved(true, same),
			all(func(_ *Env, r *Response) error {
				t, err := wantTokenResponse(r)
				if err == nil && (!strings.EqualFold(t.TokenType, "Bearer") || t.ExpiresIn != 86400) {
					return Fail("want token_type Bearer and expires_in 86400, got %q and %d", t.TokenType, t.ExpiresIn)
				}
				return err
			}, noStore)),
		probe(Check{ID: "DEV-25", Title: "after denial the next poll gets access_denied", Area: "device",
			Source: "decisions.md §Device flow; RFC 8628 §3.5", Needs: []Need{NeedApproval}},
			deviceApproved(false, same), oauthErr(400, "access_denied")),
		{
			ID: "DEV-26", Title: "a device code that delivered its token is spent: the next poll gets invalid_grant", Area: "device",
			Source: "decisions.md §Device flow", Needs: []Need{NeedApproval},
			Run: func(ctx context.Context, e *Env) error {
				cid, d, r, err := e.approvedDevice(ctx, true, same)
				if err != nil {
					return err
				}
				if _, err := accessToken(r); err != nil {
					return setupFail("polling after approval", err)
				}
				if r, err = e.pollPatiently(ctx, cid, d); err != nil {
					return err
				}
				return wantOAuthError(r, 400, "invalid_grant")
			},
		},
		probe(Check{ID: "DEV-27", Title: "the user code is accepted in lower case and without the hyphen", Area: "device",
			Source: "decisions.md §Device flow", Needs: []Need{NeedApproval}},
			deviceApproved(true, func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "")) }),
			tokenIssued),
		// 10 s short of the lifetime, not 1: a test clock that runs with the
		// wall clock (serve --test-clock) adds the poll's own latency, which
		// on a loaded machine exceeded a second.
		deviceAge("DEV-28", "an unapproved device code is still pending after 890 s", 890*time.Second, "authorization_pending"),
		deviceAge("DEV-29", "an unapproved device code gets expired_token after 900 s", 901*time.Second, "expired_token"),
		{
			ID: "DEV-30", Title: "every device token endpoint error is JSON with no-store", Area: "device",
			Source: "decisions.md §HTTP status of OAuth errors",
			Run: func(ctx context.Context, e *Env) error {
				cid, err := e.client(ctx, 0)
				if err != nil {
					return err
				}
				for _, b := range []map[string]string{
					pollBody(cid, randomString(24)),
					{"client_id": cid, "grant_type": flows.GrantTypeDeviceCode},
					pollBody("unknown-"+randomString(8), randomString(24)),
				} {
					r, err := e.PostJSON(ctx, deviceTokenPath, b)
					if err != nil {
						return err
					}
					if r.Status < 400 || r.ContentType() != "application/json" || !strings.Contains(strings.ToLower(r.Header.Get("Cache-Control")), "no-store") {
						return Fail("want a JSON error with Cache-Control: no-store, got %s (Content-Type %q, Cache-Control %q)",
							r.Snippet(), r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"))
					}
				}
				return nil
			},
		},
	}
}

// formPoll is a check that a form-encoded poll of a pending device code at
// path is understood (RFC 8628 §3.4 clients send forms).
func formPoll(id, title, path string) Check {
	return probe(Check{ID: id, Title: title, Area: "device", Source: "decisions.md §Token endpoint; RFC 8628 §3.4"},
		atDevice(func(cid string, d *flows.DeviceAuthorization) sender {
			return postForm(path, url.Values{"device_code": {d.DeviceCode}, "client_id": {cid}, "grant_type": {flows.GrantTypeDeviceCode}})
		}),
		oauthErr(400, "authorization_pending", "slow_down"))
}
