package conformance

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The common shape of a check, as data: send one request, judge the answer.
// A new check of that shape is a Check literal (ID, Title, Area, Source,
// Severity, Needs) plus a sender and a judge:
//
//	probe(Check{ID: "X-01", Title: "…", Area: "token", Source: "…"},
//		asClient(func(cid string) sender { return postForm("/oauth/token", url.Values{"client_id": {cid}}) }),
//		oauthErr(400, "invalid_request"))
//
// Checks with logic of their own stay functions.

// sender sends a check's request.
type sender func(ctx context.Context, e *Env) (*Response, error)

// judge judges the answer: nil passes, a FailError says what was expected
// and what came.
type judge func(e *Env, r *Response) error

// probe is the check c whose Run sends with s and judges the answer with j.
func probe(c Check, s sender, j judge) Check {
	c.Run = func(ctx context.Context, e *Env) error {
		r, err := s(ctx, e)
		if err != nil {
			return err
		}
		return j(e, r)
	}
	return c
}

// given is a check's Run that first obtains what the check is about (a
// credential, a cookie, a code) with obtain, whose error (a skip, a setup
// failure) is the check's, and then runs with it.
func given[T any](obtain func(*Env, context.Context) (T, error), run func(ctx context.Context, e *Env, v T) error) func(context.Context, *Env) error {
	return func(ctx context.Context, e *Env) error {
		v, err := obtain(e, ctx)
		if err != nil {
			return err
		}
		return run(ctx, e, v)
	}
}

// Senders. get, postJSON, postForm and postRaw send fixed values; asClient,
// withToken, withAPIKey and fresh call their builder when the check runs, so
// client ids, credentials and random parts are fresh on every run.

// asClient registers (or reuses) the suite's first client and sends the
// request built with its id.
func asClient(build func(cid string) sender) sender {
	return func(ctx context.Context, e *Env) (*Response, error) {
		cid, err := e.client(ctx, 0)
		if err != nil {
			return nil, err
		}
		return build(cid)(ctx, e)
	}
}

// withToken obtains an access token (approval needed) and sends the request
// built with it.
func withToken(build func(tok string) sender) sender { return withCredential((*Env).token, build) }

// withAPIKey reads the test user's API key and sends the request built with it.
func withAPIKey(build func(key string) sender) sender { return withCredential((*Env).apiKey, build) }

func withCredential(obtain func(*Env, context.Context) (string, error), build func(string) sender) sender {
	return func(ctx context.Context, e *Env) (*Response, error) {
		cred, err := obtain(e, ctx)
		if err != nil {
			return nil, err
		}
		return build(cred)(ctx, e)
	}
}

// fresh builds the request when the check runs: random parts differ on
// every run, and a large body is not built with the catalogue.
func fresh(build func() sender) sender {
	return func(ctx context.Context, e *Env) (*Response, error) { return build()(ctx, e) }
}

func get(path string, hdr ...string) sender {
	return func(ctx context.Context, e *Env) (*Response, error) { return e.Get(ctx, path, hdr...) }
}

func postJSON(path string, body any) sender {
	return func(ctx context.Context, e *Env) (*Response, error) { return e.PostJSON(ctx, path, body) }
}

func postForm(path string, body url.Values) sender {
	return func(ctx context.Context, e *Env) (*Response, error) { return e.PostForm(ctx, path, body) }
}

func postRaw(path, contentType, body string) sender {
	return func(ctx context.Context, e *Env) (*Response, error) {
		return e.PostRaw(ctx, path, contentType, []byte(body))
	}
}

// Judges.

// oauthErr wants an RFC 6749 §5.2 error (see wantOAuthError).
func oauthErr(status int, codes ...string) judge {
	return func(_ *Env, r *Response) error { return wantOAuthError(r, status, codes...) }
}

// status wants HTTP code; want, when given, says it in the failure instead
// of "HTTP code".
func status(code int, want ...string) judge {
	return func(_ *Env, r *Response) error {
		if r.Status == code {
			return nil
		}
		if len(want) > 0 {
			return Fail("want %s, got %s", want[0], r.Snippet())
		}
		return wantStatus(r, code)
	}
}

// wantStatus fails unless r answered one of codes ("want HTTP 400 or 401").
func wantStatus(r *Response, codes ...int) error {
	if slices.Contains(codes, r.Status) {
		return nil
	}
	want := make([]string, len(codes))
	for i, c := range codes {
		want[i] = strconv.Itoa(c)
	}
	return Fail("want HTTP %s, got %s", strings.Join(want, " or "), r.Snippet())
}

// jsonOK wants HTTP 200 with a JSON object that passes check.
func jsonOK(check func(e *Env, o object) error) judge {
	return func(e *Env, r *Response) error {
		o, err := okObject(r, "HTTP 200")
		if err != nil {
			return err
		}
		return check(e, o)
	}
}

// pingAnswer wants a successful ping (see pingOK).
func pingAnswer(_ *Env, r *Response) error {
	_, err := pingOK(r)
	return err
}

// clientError wants a 4xx; want says it in the failure.
func clientError(want string) judge {
	return func(_ *Env, r *Response) error {
		if r.Status < 400 || r.Status > 499 {
			return Fail("want %s, got %s", want, r.Snippet())
		}
		return nil
	}
}

// all passes when every judge does, and fails with the first that fails.
func all(judges ...judge) judge {
	return func(e *Env, r *Response) error {
		for _, j := range judges {
			if err := j(e, r); err != nil {
				return err
			}
		}
		return nil
	}
}

// jsonType wants Content-Type application/json.
func jsonType(_ *Env, r *Response) error {
	if r.ContentType() != "application/json" {
		return Fail("Content-Type: want application/json, got %q", r.Header.Get("Content-Type"))
	}
	return nil
}

// noStore wants Cache-Control: no-store.
func noStore(_ *Env, r *Response) error {
	if !strings.Contains(strings.ToLower(r.Header.Get("Cache-Control")), "no-store") {
		return Fail("Cache-Control: want no-store, got %q", r.Header.Get("Cache-Control"))
	}
	return nil
}

// tokenIssued wants a successful token response (see accessToken).
func tokenIssued(_ *Env, r *Response) error {
	_, err := accessToken(r)
	return err
}
