package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// The mcp profile's checks that the MCP endpoint validates what it is
// given (signature, expiry, scheme) and that the authorization server ages
// its codes.

// Expiry checks move the server's clock (or wait, with --real-time) by at
// most this much: a code's 10 minutes, an access token's lifetime as
// expires_in gives it, up to a day.
const (
	codeLifetime   = 10*time.Minute + time.Second
	maxTokenExpiry = 24*time.Hour + time.Minute
)

// unsignedCopy is tok, a JWT, re-signed with alg "none" and no signature.
func unsignedCopy(tok string) (string, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return "", false
	}
	var hdr map[string]any
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(raw, &hdr) != nil {
		return "", false
	}
	hdr["alg"] = "none"
	b, _ := json.Marshal(hdr)
	return base64.RawURLEncoding.EncodeToString(b) + "." + parts[1] + ".", true
}

func mcpValidationChecks() []Check {
	approval := []Need{NeedApproval}
	return []Check{
		mcpTokenCheck("MCP-78", areaTokenUsage, "the auth scheme is case-insensitive: \"bearer\" works as \"Bearer\" does",
			"RFC 6750 §2.1 via RFC 9110 §11.1 (auth schemes are case-insensitive)", Should, func(ctx context.Context, e *Env, s *mcpSite, tok string) error {
				return e.mcpWantServed(ctx, s, "bearer "+tok, `want HTTP 200 with "bearer"`)
			}),
		mcpTokenCheck("MCP-79", areaTokenUsage, "a JWT access token re-signed with alg none is refused",
			srcTokenHand+" (MUST validate access tokens); RFC 8725 §3.1", Must, func(ctx context.Context, e *Env, s *mcpSite, tok string) error {
				forged, ok := unsignedCopy(tok)
				if !ok {
					return Skip("the access token is not a JWT")
				}
				return e.mcpWantRefused(ctx, s, forged, "an unsigned copy of the token was accepted")
			}),
		{
			ID: "MCP-80", Title: "an access token is refused once its expires_in has passed", Area: areaTokenUsage,
			Source: srcTokenHand + " (expired tokens MUST receive 401); RFC 6749 §5.1", Needs: []Need{NeedApproval, NeedTimeTravel}, Wait: maxTokenExpiry,
			Run: func(ctx context.Context, e *Env) error {
				s, err := e.site(ctx)
				if err != nil {
					return err
				}
				_, o, err := e.mcpTokenObject(ctx, s)
				if err != nil {
					return err
				}
				tok, _ := o.str("access_token")
				secs, err := o.integer("expires_in")
				if err != nil {
					return Skip("the token response has no expires_in to wait out")
				}
				life := time.Duration(secs)*time.Second + 31*time.Second
				if life > maxTokenExpiry {
					return Skip(fmt.Sprintf("expires_in %ds is longer than the %s this check moves time by", secs, maxTokenExpiry))
				}
				if err := e.Advance(ctx, life); err != nil {
					return err
				}
				return e.mcpWantRefused(ctx, s, tok, fmt.Sprintf("the token still works %s after issue (expires_in %d)", life, secs))
			},
		},
		mcpCheck("MCP-81", areaToken, "the token response gives expires_in",
			"RFC 6749 §5.1 (RECOMMENDED); OAuth 2.1 §3.2.3", Should, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				_, o, err := e.mcpTokenObject(ctx, s)
				if err != nil {
					return err
				}
				_, err = o.integer("expires_in")
				return err
			}),
		{
			ID: "MCP-82", Title: "a code is refused 10 minutes after issue", Area: areaToken,
			Source: "RFC 6749 §4.1.2 (a maximum lifetime of 10 minutes is RECOMMENDED); OAuth 2.1 §4.1.2", Severity: Should,
			Needs: []Need{NeedApproval, NeedTimeTravel}, Wait: codeLifetime,
			Run: func(ctx context.Context, e *Env) error {
				s, err := e.site(ctx)
				if err != nil {
					return err
				}
				g, _, err := e.mcpGrant(ctx, s.scope())
				if err != nil {
					return err
				}
				if err := e.Advance(ctx, codeLifetime); err != nil {
					return err
				}
				return e.mcpWantCodeRefused(ctx, s, g)
			},
		},
		mcpRefusal("MCP-83", areaAuthorize, "an authorization request without response_type is refused",
			"RFC 6749 §3.1.1 (REQUIRED) and §4.1.2.1 (invalid_request)", Must, func(_ *Env, q url.Values) string {
				q.Del("response_type")
				return ""
			}),
	}
}
