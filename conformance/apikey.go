package conformance

import (
	"context"
	"regexp"
	"sync"
)

var apiKeyShape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^mcpa_[0-9A-Za-z]{40,}$`) }) // compiled on first use, not at start-up

func apiKeyChecks() []Check {
	return []Check{
		probe(Check{ID: "KEY-01", Title: "the API key works as a bearer token on /api/ping", Area: "apikey",
			Source: "contract §API key", Needs: []Need{NeedAPIKey}},
			withAPIKey(pinged), pingAnswer),
		{
			ID: "KEY-02", Title: "the API key has the form mcpa_ + base62", Area: "apikey",
			Source: "decisions.md §API keys", Severity: Should, Needs: []Need{NeedAPIKey},
			Run: given((*Env).apiKey, func(ctx context.Context, e *Env, k string) error {
				if !apiKeyShape().MatchString(k) {
					return Fail("want mcpa_ followed by 40+ base62 characters, got %d characters starting %q", len(k), k[:min(len(k), 5)])
				}
				return nil
			}),
		},
		probe(Check{ID: "KEY-03", Title: "the API key works on /mcp", Area: "apikey",
			Source: "contract §API key (same access as a JWT)", Needs: []Need{NeedAPIKey}},
			withAPIKey(func(k string) sender { return mcpAs("Bearer " + k) }),
			status(200, "HTTP 200 for initialize")),
		probe(Check{ID: "KEY-04", Title: "the API key with one character changed gets 401", Area: "apikey",
			Source: "contract §Authentication 1", Needs: []Need{NeedAPIKey}},
			withAPIKey(func(k string) sender {
				b := []byte(k)
				if b[len(b)-1] == 'a' {
					b[len(b)-1] = 'b'
				} else {
					b[len(b)-1] = 'a'
				}
				return pinged(string(b))
			}),
			status(401)),
		{
			ID: "KEY-05", Title: "the API key and a JWT of the same user give the same user_id", Area: "apikey",
			Source: "contract §API key (same access as a JWT)", Needs: []Need{NeedAPIKey, NeedApproval},
			Run: func(ctx context.Context, e *Env) error {
				if e.target.APIKey != "" {
					return Skip("the API key was given, so it may belong to another user than the approver's")
				}
				k, err := e.apiKey(ctx)
				if err != nil {
					return err
				}
				tok, err := e.token(ctx)
				if err != nil {
					return err
				}
				var uids [2]string
				for i, cred := range []string{k, tok} {
					if uids[i], err = e.pingAs(ctx, cred); err != nil {
						return err
					}
				}
				if uids[0] != uids[1] {
					return Fail("user_id with the API key %q, with the JWT %q", uids[0], uids[1])
				}
				return nil
			},
		},
		{
			ID: "KEY-06", Title: "regenerating the API key invalidates the previous one at once", Area: "apikey",
			Source: "contract §API key; §Errors (regenerated key's predecessor rejected)",
			Needs:  []Need{NeedApproval, NeedDestructive},
			Run: func(ctx context.Context, e *Env) error {
				old, next, err := e.approver().RegenerateAPIKey(ctx)
				if err != nil {
					return setupFail("regenerating the key in Settings", err)
				}
				r, err := e.GetBearer(ctx, "/api/ping", next)
				if err != nil {
					return err
				}
				if _, err := pingOK(r); err != nil {
					return Fail("the new key: %v", err)
				}
				if r, err = e.GetBearer(ctx, "/api/ping", old); err != nil {
					return err
				}
				if r.Status != 401 {
					return Fail("the previous key: want HTTP 401, got %s", r.Snippet())
				}
				return nil
			},
		},
	}
}
