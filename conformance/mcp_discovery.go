package conformance

import (
	"context"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The mcp profile's discovery: protected resource metadata (RFC 9728), the
// MCP endpoint's challenges (RFC 6750) and the authorization server's
// metadata (RFC 8414, OpenID Connect Discovery).

const (
	srcPRM       = srcMCPAuth + " §Protected resource metadata discovery"
	srcASDiscov  = srcMCPAuth + " §Authorization server metadata discovery"
	srcTokenUse  = srcMCPAuth + " §Access token usage"
	srcTokenHand = srcMCPAuth + " §Token handling"
)

// isLoopbackHost reports whether host (without port) is a loopback name,
// where plain http is allowed (RFC 8252 §7.3, as the MCP spec's
// communication security rules do for localhost).
func isLoopbackHost(host string) bool {
	return host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.")
}

// wantIdentifierURL checks an issuer or resource identifier: absolute,
// https (http only on loopback), no fragment, and no query when noQuery.
func wantIdentifierURL(what, raw string, noQuery bool) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return Fail("%s %q: want an absolute URL", what, raw)
	case u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname())):
		return Fail("%s %q: want https (http only on loopback)", what, raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return Fail("%s %q: want no fragment", what, raw)
	case noQuery && u.RawQuery != "":
		return Fail("%s %q: want no query", what, raw)
	}
	return nil
}

// wantJSONType checks an answer is served as application/json.
func wantJSONType(r *Response) error {
	if r.ContentType() != "application/json" {
		return Fail("%s %s: want Content-Type application/json, got %q", r.Method, r.URL, r.Header.Get("Content-Type"))
	}
	return nil
}

// wantJSONAt fetches the metadata document at u and checks it is served as
// application/json.
func (e *Env) wantJSONAt(ctx context.Context, u string) error {
	r, err := e.Get(ctx, u, "Accept", "application/json")
	if err != nil {
		return err
	}
	return wantJSONType(r)
}

// bearerChallenge is the Bearer challenge of r, or nil.
func bearerChallenge(r *Response) map[string]string {
	for _, c := range parseChallenges(r.Header.Values("WWW-Authenticate")) {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c.Params
		}
	}
	return nil
}

// scopeToken is RFC 6749 §3.3's scope-token: one or more NQCHAR.
var scopeToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]+$`) }) // compiled on first use, not at start-up

func mcpDiscoveryChecks() []Check {
	return slices.Concat(mcpPRMChecks(), mcpChallengeChecks(), mcpASChecks())
}

func mcpPRMChecks() []Check {
	return []Check{
		mcpCheck("MCP-02", areaPRM, "protected resource metadata at the path-inserted location names the MCP URL and its authorization servers",
			srcPRM+"; RFC 9728 §3.1 and §3.3", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				pathInserted, _ := prmURLs(s.mcpURL)
				o, err := e.getMetadata(ctx, pathInserted)
				if err != nil {
					return err
				}
				if err := o.wantStr("resource", s.mcpURL); err != nil {
					return err
				}
				_, err = o.filledStrs("authorization_servers")
				return err
			}),
		// Information only: RFC 9728 puts the metadata at the path-inserted
		// location and MCP clients try that first; the root is a fallback.
		mcpCheck("MCP-03", areaPRM, "protected resource metadata is also at the root location (a fallback clients try second), for a resource that is the MCP URL or a prefix of it",
			srcPRM+" (root as fallback); RFC 9728 §3.1", Info, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				_, root := prmURLs(s.mcpURL)
				res, err := e.metadataStr(ctx, root, "resource")
				if err != nil {
					return err
				}
				if res != s.mcpURL && !strings.HasPrefix(s.mcpURL, strings.TrimRight(res, "/")+"/") {
					return Fail("resource %q at the root is neither the MCP URL %s nor a prefix of it", res, s.mcpURL)
				}
				return nil
			}),
		mcpCheck("MCP-15", areaPRM, "protected resource metadata is served as application/json",
			"RFC 9728 §3.2", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				return e.wantJSONAt(ctx, s.prmURL)
			}),
		mcpCheck("MCP-16", areaPRM, "the metadata the challenge's resource_metadata names has resource equal to the MCP URL the client requested",
			"RFC 9728 §3.3 (metadata from a WWW-Authenticate resource_metadata URL); "+srcPRM, Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				u := s.challenge["resource_metadata"]
				if u == "" {
					return Fail("the 401 challenge has no resource_metadata (see MCP-01)")
				}
				o, err := e.getMetadata(ctx, u)
				if err != nil {
					return err
				}
				return o.wantStr("resource", s.mcpURL)
			}),
		mcpCheck("MCP-17", areaPRM, "protected resource metadata lists scopes_supported, so clients know what to ask for",
			srcMCPAuth+" §Scope selection strategy; RFC 9728 §2 (RECOMMENDED)", Should, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				_, err := s.prm.filledStrs("scopes_supported")
				return err
			}),
		mcpCheck("MCP-18", areaPRM, "bearer_methods_supported, when present, does not offer the query string",
			srcTokenUse+" (MUST NOT in the query string); RFC 9728 §2; RFC 6750 §2.3", Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				if !s.prm.has("bearer_methods_supported") {
					return nil
				}
				ms, err := s.prm.strs("bearer_methods_supported")
				if err != nil {
					return err
				}
				if slices.Contains(ms, "query") {
					return Fail("bearer_methods_supported: %q offers query", ms)
				}
				return nil
			}),
		mcpCheck("MCP-19", areaPRM, "resource is an absolute https URL without a fragment",
			"RFC 9728 §2; RFC 8707 §2 (MUST NOT include a fragment)", Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				return wantIdentifierURL("resource", s.resource, false)
			}),
		mcpCheck("MCP-20", areaPRM, "every authorization_servers entry is an issuer identifier: https, no query, no fragment",
			"RFC 9728 §2; RFC 8414 §2 (issuer)", Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				as, _ := s.prm.strs("authorization_servers")
				for _, a := range as {
					if err := wantIdentifierURL("authorization server", a, true); err != nil {
						return err
					}
				}
				return nil
			}),
	}
}

func mcpChallengeChecks() []Check {
	return []Check{
		{
			ID: "MCP-01", Title: "the MCP endpoint answers an unauthenticated request with 401 and a Bearer challenge naming resource_metadata",
			Area: areaChallenge, Source: srcMCPAuth + " §Authorization server discovery; RFC 9728 §5.1",
			Run: func(ctx context.Context, e *Env) error {
				r, err := e.postMCPAt(ctx, e.BaseURL(), "")
				if err != nil {
					return err
				}
				if r.Status != 401 {
					return Fail("want HTTP 401, got %s", r.Snippet())
				}
				if c := bearerChallenge(r); c != nil {
					u, err := url.Parse(c["resource_metadata"])
					if err != nil || !u.IsAbs() {
						return Fail("resource_metadata: want an absolute URL, got %q", c["resource_metadata"])
					}
					return nil
				}
				return Fail("want WWW-Authenticate: Bearer resource_metadata=…, got %q", r.Header.Values("WWW-Authenticate"))
			},
		},
		{
			ID: "MCP-14", Title: "a token the server never issued gets 401 with a Bearer challenge, not another error",
			Area: areaChallenge, Source: srcTokenHand + " (invalid or expired tokens MUST receive 401); RFC 6750 §3.1",
			Run: func(ctx context.Context, e *Env) error {
				r, err := e.postMCPAt(ctx, e.BaseURL(), "Bearer invalid-"+randomString(24))
				if err != nil {
					return err
				}
				if r.Status != 401 {
					return Fail("want HTTP 401 for an invalid token, got %s", r.Snippet())
				}
				if bearerChallenge(r) == nil {
					return Fail("want WWW-Authenticate: Bearer (error=\"invalid_token\") with the 401, got %q", r.Header.Values("WWW-Authenticate"))
				}
				return nil
			},
		},
		mcpCheck("MCP-21", areaChallenge, "the 401 for an invalid token says error=\"invalid_token\"",
			"RFC 6750 §3 and §3.1", Should, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.postMCPAt(ctx, s.mcpURL, "Bearer invalid-"+randomString(24))
				if err != nil {
					return err
				}
				if c := bearerChallenge(r); c == nil || c["error"] != "invalid_token" {
					return Fail("want a Bearer challenge with error=\"invalid_token\", got %s %q", r.Snippet(), r.Header.Values("WWW-Authenticate"))
				}
				return nil
			}),
		mcpCheck("MCP-22", areaChallenge, "the 401 for an invalid token also names resource_metadata, so a client can start over",
			srcMCPAuth+" §Authorization server discovery (MUST use WWW-Authenticate on 401); RFC 9728 §5.1", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.postMCPAt(ctx, s.mcpURL, "Bearer invalid-"+randomString(24))
				if err != nil {
					return err
				}
				if c := bearerChallenge(r); r.Status != 401 || c == nil || c["resource_metadata"] == "" {
					return Fail("want 401 with a Bearer challenge naming resource_metadata, got %s %q", r.Snippet(), r.Header.Values("WWW-Authenticate"))
				}
				return nil
			}),
		mcpCheck("MCP-23", areaChallenge, "the challenge's scope, when present, is a space-separated list of scope tokens",
			srcMCPAuth+" §Scope selection strategy; RFC 6750 §3; RFC 6749 §3.3", Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				sc, ok := s.challenge["scope"]
				if !ok {
					return nil
				}
				for _, tok := range strings.Split(sc, " ") {
					if !scopeToken().MatchString(tok) {
						return Fail("scope %q: %q is not a scope token (RFC 6749 §3.3)", sc, tok)
					}
				}
				return nil
			}),
		mcpCheck("MCP-24", areaChallenge, "an empty Bearer credential is refused with 400 or 401, not served or a server error",
			"RFC 6750 §3.1 (invalid_request, invalid_token); "+srcTokenHand, Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.postMCPAt(ctx, s.mcpURL, "Bearer ")
				if err != nil {
					return err
				}
				return wantStatus(r, 400, 401)
			}),
		mcpCheck("MCP-25", areaChallenge, "a GET of the MCP endpoint without a token gets 401 (or 405 where there is no GET stream), never content",
			srcMCPAuth+" §Access token usage (authorization on every HTTP request); MCP transports §Streamable HTTP", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.Get(ctx, s.mcpURL, "Accept", "text/event-stream")
				if err != nil {
					return err
				}
				return wantStatus(r, 401, 405)
			}),
		mcpCheck("MCP-26", areaChallenge, "Basic credentials at the MCP endpoint get 401 with a Bearer challenge",
			srcTokenUse+"; RFC 6750 §3", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.postMCPAt(ctx, s.mcpURL, "Basic "+randomString(12))
				if err != nil {
					return err
				}
				if r.Status != 401 || bearerChallenge(r) == nil {
					return Fail("want 401 with WWW-Authenticate: Bearer, got %s %q", r.Snippet(), r.Header.Values("WWW-Authenticate"))
				}
				return nil
			}),
	}
}
