package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpauth/mcpauth/internal/redact"
)

// Secrets never reach a report by construction: every secret the run
// obtains is registered once in its runState's redact.Secrets (learnt from
// every request and answer on the wire, whatever the content type, and
// from what the approver hands over), and a check's reason and exchanges
// are masked with it when they become report data (finish), so that every
// format inherits it.

// learn registers the secrets of one exchange: credentials the suite sent
// and tokens, codes and cookies the server answered with.
func (rs *runState) learn(req *http.Request, sent []byte, resp *Response) {
	rs.secrets.LearnURL(req.URL.String())
	rs.secrets.LearnHeader(req.Header)
	rs.secrets.LearnBody(sent)
	rs.secrets.LearnHeader(resp.Header)
	rs.secrets.LearnBody(resp.Body)
}

// learnTarget registers the credentials the run was given.
func (rs *runState) learnTarget(t Target) {
	rs.secrets.Add(t.APIKey)
	rs.learnCookies(t.Session)
}

func (rs *runState) learnCookies(cs []*http.Cookie) {
	for _, c := range cs {
		rs.secrets.Add(c.Value)
	}
}

// finish turns a check's verdict into report data with the run's secrets
// masked; it is also run over every result once all checks are done, for
// the secrets a later check learnt.
func (rs *runState) finish(r *Result) {
	r.Reason = rs.secrets.Mask(r.Reason)
	for i := range r.Exchanges {
		r.Exchanges[i].remask(rs.secrets)
	}
}

// grantedToken says what a successful answer of any content type that
// carries a token granted, its secrets masked: "granted a token:
// access_token=[redacted 43 chars], refresh_token=[…]". "" for other
// answers.
func grantedToken(status int, body []byte) string {
	var o map[string]any
	if status < 200 || status > 299 || json.Unmarshal(body, &o) != nil {
		return ""
	}
	if at, ok := o["access_token"].(string); !ok || at == "" {
		return ""
	}
	var parts []string
	for _, k := range []string{"access_token", "refresh_token", "id_token"} {
		if v, ok := o[k].(string); ok {
			parts = append(parts, k+"="+redact.Redacted(v))
		}
	}
	return "granted a token: " + strings.Join(parts, ", ")
}

// compactJSON is raw on one line: a reason quoting indented JSON must not
// print as a bare "[".
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return strings.Join(strings.Fields(string(raw)), " ")
	}
	return b.String()
}

// approver is the target's approver with every secret it hands the suite
// (a code in a redirect, an API key) registered with the run.
func (e *Env) approver() Approver {
	return secretApprover{Approver: e.target.Approver, secrets: e.run.secrets}
}

type secretApprover struct {
	Approver
	secrets *redact.Secrets
}

func (a secretApprover) ApproveConsent(ctx context.Context, authURL string) (*url.URL, error) {
	return a.learnURL(a.Approver.ApproveConsent(ctx, authURL))
}

func (a secretApprover) DenyConsent(ctx context.Context, authURL string) (*url.URL, error) {
	return a.learnURL(a.Approver.DenyConsent(ctx, authURL))
}

func (a secretApprover) learnURL(u *url.URL, err error) (*url.URL, error) {
	if u != nil {
		a.secrets.LearnURL(u.String())
	}
	return u, err
}

func (a secretApprover) APIKey(ctx context.Context) (string, error) {
	k, err := a.Approver.APIKey(ctx)
	a.secrets.Add(k)
	return k, err
}

func (a secretApprover) RegenerateAPIKey(ctx context.Context) (string, string, error) {
	old, next, err := a.Approver.RegenerateAPIKey(ctx)
	a.secrets.Add(old, next)
	return old, next, err
}
