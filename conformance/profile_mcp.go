package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpauth/mcpauth/flows"
)

// The mcp profile: only what the MCP authorization specification asks of
// any MCP server, found the way an MCP client finds it, from the MCP
// endpoint's 401 challenge on. Target.BaseURL is the MCP endpoint itself.
// Checks that cannot apply to a server (no registration endpoint, no
// refresh tokens offered, no metadata documents advertised) are skipped
// with the reason.

// Profiles name the catalogues a run can use.
const (
	ProfileContract = "contract" // this project's contract and decisions.md (the default)
	ProfileMCP      = "mcp"      // MCP authorization requirements, for any MCP server
)

// ProfileChecks returns the catalogue of a profile.
func ProfileChecks(profile string) ([]Check, error) {
	switch profile {
	case "", ProfileContract:
		return Catalogue(), nil
	case ProfileMCP:
		return MCPCatalogue(), nil
	}
	return nil, fmt.Errorf("unknown profile %q (contract or mcp)", profile)
}

const srcMCPAuth = "MCP authorization 2026-07-28"

// mcpSite is what discovery found, once per run.
type mcpSite struct {
	mcpURL    string
	challenge map[string]string // the Bearer challenge's parameters
	prmURL    string
	prm       object
	resource  string
	issuer    string
	asURL     string
	as        object
	meta      *flows.AuthServerMetadata
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// prmURLs are the protected resource metadata locations of an MCP URL:
// path-inserted, then root (RFC 9728 §3.1).
func prmURLs(mcpURL string) (pathInserted, root string) {
	u, _ := url.Parse(mcpURL)
	root = origin(u) + prmPath
	if p := strings.TrimRight(u.EscapedPath(), "/"); p != "" {
		return root + p, root
	}
	return root, root
}

// asURLs are the metadata locations of an issuer, in the order MCP clients
// try them (RFC 8414 §3.1, OpenID Connect Discovery §4).
func asURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	o, p := origin(u), strings.TrimRight(u.EscapedPath(), "/")
	if p == "" {
		return []string{o + asPath, o + "/.well-known/openid-configuration"}
	}
	return []string{o + asPath + p, o + "/.well-known/openid-configuration" + p, o + p + "/.well-known/openid-configuration"}
}

// site discovers the MCP server's authorization once per run.
func (e *Env) site(ctx context.Context) (*mcpSite, error) {
	s, err := e.run.site.get(ctx, func(ctx context.Context) (*mcpSite, error) {
		s := &mcpSite{mcpURL: e.BaseURL(), challenge: map[string]string{}}
		r, err := e.postMCPAt(ctx, s.mcpURL, "")
		if err != nil {
			return nil, err
		}
		for _, c := range parseChallenges(r.Header.Values("WWW-Authenticate")) {
			if strings.EqualFold(c.Scheme, "Bearer") {
				s.challenge = c.Params
			}
		}
		pathInserted, root := prmURLs(s.mcpURL)
		for _, u := range []string{s.challenge["resource_metadata"], pathInserted, root} {
			if u == "" {
				continue
			}
			if o, err := e.getMetadata(ctx, u); err == nil {
				s.prmURL, s.prm = u, o
				break
			}
		}
		if s.prm == nil {
			return nil, fmt.Errorf("no protected resource metadata at the challenge's URL, %s or %s", pathInserted, root)
		}
		s.resource, _ = s.prm.str("resource")
		as, err := s.prm.strs("authorization_servers")
		if err != nil || len(as) == 0 {
			return nil, fmt.Errorf("protected resource metadata at %s names no authorization_servers", s.prmURL)
		}
		s.issuer = as[0]
		for _, u := range asURLs(s.issuer) {
			r, err := e.Get(ctx, u, "Accept", "application/json")
			if err != nil || r.Status != 200 {
				continue
			}
			o, err := decodeObject(r)
			if err != nil {
				continue
			}
			var md flows.AuthServerMetadata
			if json.Unmarshal(r.Body, &md) != nil {
				continue
			}
			s.asURL, s.as, s.meta = u, o, &md
			break
		}
		if s.as == nil {
			return nil, fmt.Errorf("no authorization server metadata for issuer %s at %q", s.issuer, asURLs(s.issuer))
		}
		return s, nil
	})
	if err != nil {
		return nil, setupFail("discovering the MCP server's authorization", err)
	}
	return s, nil
}

// scope is what a client asks for: the challenge's scope, else the
// resource's scopes_supported.
func (s *mcpSite) scope() string {
	if sc := s.challenge["scope"]; sc != "" {
		return sc
	}
	ss, _ := s.prm.strs("scopes_supported")
	return strings.Join(ss, " ")
}

func (s *mcpSite) offers(member, value string) bool {
	vs, _ := s.as.strs(member)
	return slices.Contains(vs, value)
}

func (s *mcpSite) flag(member string) bool {
	raw, ok := s.as[member]
	return ok && string(raw) == "true"
}

func (s *mcpSite) discovery() *flows.Discovery {
	return &flows.Discovery{MCPURL: s.mcpURL, Resource: s.resource, Issuer: s.issuer, AuthServer: s.meta, Scope: s.scope()}
}

// mcpClient registers (once) a public native client by dynamic
// registration, with refresh_token when the server offers it.
func (e *Env) mcpClient(ctx context.Context) (string, error) {
	s, err := e.site(ctx)
	if err != nil {
		return "", err
	}
	if s.meta.RegistrationEndpoint == "" {
		return "", Skip("the authorization server has no registration_endpoint (give the suite a client another way: not supported yet)")
	}
	id, err := e.run.mcpClient.get(ctx, func(ctx context.Context) (string, error) {
		grants := []string{"authorization_code"}
		if s.offers("grant_types_supported", "refresh_token") {
			grants = append(grants, "refresh_token")
		}
		hc, _ := e.wire()
		ci, err := flows.Register(ctx, hc, s.meta.RegistrationEndpoint, flows.ClientMetadata{
			ClientName: "mcpauth conformance (mcp profile)", RedirectURIs: []string{e.redirectURI()},
			GrantTypes: grants, ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: flows.AuthMethodNone,
		})
		if err != nil {
			return "", err
		}
		return ci.ClientID, nil
	})
	if err != nil {
		return "", setupFail("registering a client", err)
	}
	return id, nil
}

// mcpGrant runs the front channel for the profile's client with scope.
func (e *Env) mcpGrant(ctx context.Context, scope string) (*grant, *url.URL, error) {
	s, err := e.site(ctx)
	if err != nil {
		return nil, nil, err
	}
	cid, err := e.mcpClient(ctx)
	if err != nil {
		return nil, nil, err
	}
	if e.target.Approver == nil {
		return nil, nil, Skip("needs an approver (--approve=form, --approve=manual or --browser-command)")
	}
	hc, _ := e.wire()
	cfg := flows.AuthCodeConfig{HTTPClient: hc, Discovery: s.discovery(), Scope: scope,
		Client: flows.Client{ID: cid, AuthMethod: flows.AuthMethodNone}}
	req, err := cfg.NewRequest(e.redirectURI())
	if err != nil {
		return nil, nil, setupFail("building an authorization request", err)
	}
	u, err := e.approveConsent(ctx, req.URL())
	if err != nil {
		return nil, nil, err
	}
	if u.Query().Get("state") != req.State || u.Query().Get("code") == "" {
		return nil, u, Fail("want a redirect with a code and state %s, got %s", req.State, u)
	}
	return &grant{cfg: cfg, req: req, Code: u.Query().Get("code")}, u, nil
}

// mcpAccessToken runs the code flow at s and returns the access token.
func (e *Env) mcpAccessToken(ctx context.Context, s *mcpSite) (string, error) {
	r, err := e.mcpTokens(ctx, s.scope())
	if err != nil {
		return "", err
	}
	return accessToken(r)
}

// mcpTokens runs the whole code flow and returns the token response.
func (e *Env) mcpTokens(ctx context.Context, scope string) (*Response, error) {
	g, _, err := e.mcpGrant(ctx, scope)
	if err != nil {
		return nil, err
	}
	return e.exchange(ctx, g)
}

func mcpCheck(id, title, source string, sev Severity, needs []Need, run func(ctx context.Context, e *Env, s *mcpSite) error) Check {
	return Check{ID: id, Title: title, Area: "mcp", Source: source, Severity: sev, Needs: needs,
		Run: func(ctx context.Context, e *Env) error {
			s, err := e.site(ctx)
			if err != nil {
				return err
			}
			return run(ctx, e, s)
		}}
}

// MCPCatalogue is the mcp profile's catalogue.
func MCPCatalogue() []Check {
	approval := []Need{NeedApproval}
	return []Check{
		{
			ID: "MCP-01", Title: "the MCP endpoint answers an unauthenticated request with 401 and a Bearer challenge naming resource_metadata",
			Area: "mcp", Source: srcMCPAuth + " §Authorization server discovery; RFC 9728 §5.1",
			Run: func(ctx context.Context, e *Env) error {
				r, err := e.postMCPAt(ctx, e.BaseURL(), "")
				if err != nil {
					return err
				}
				if r.Status != 401 {
					return Fail("want HTTP 401, got %s", r.Snippet())
				}
				for _, c := range parseChallenges(r.Header.Values("WWW-Authenticate")) {
					if strings.EqualFold(c.Scheme, "Bearer") {
						u, err := url.Parse(c.Params["resource_metadata"])
						if err != nil || !u.IsAbs() {
							return Fail("resource_metadata: want an absolute URL, got %q", c.Params["resource_metadata"])
						}
						return nil
					}
				}
				return Fail("want WWW-Authenticate: Bearer resource_metadata=…, got %q", r.Header.Values("WWW-Authenticate"))
			},
		},
		mcpCheck("MCP-02", "protected resource metadata at the path-inserted location names the MCP URL and its authorization servers",
			srcMCPAuth+"; RFC 9728 §3.1 and §3.3", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				pathInserted, _ := prmURLs(s.mcpURL)
				o, err := e.getMetadata(ctx, pathInserted)
				if err != nil {
					return err
				}
				if err := o.wantStr("resource", s.mcpURL); err != nil {
					return err
				}
				as, err := o.strs("authorization_servers")
				if err != nil {
					return err
				}
				if len(as) == 0 {
					return Fail("authorization_servers is empty")
				}
				return nil
			}),
		// Information only: RFC 9728 puts the metadata at the path-inserted
		// location and MCP clients try that first; the root is a fallback.
		mcpCheck("MCP-03", "protected resource metadata is also at the root location (a fallback clients try second), for a resource that is the MCP URL or a prefix of it",
			srcMCPAuth+" §Protected resource metadata discovery (root as fallback); RFC 9728 §3.1", Info, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				_, root := prmURLs(s.mcpURL)
				o, err := e.getMetadata(ctx, root)
				if err != nil {
					return err
				}
				res, err := o.str("resource")
				if err != nil {
					return err
				}
				if res != s.mcpURL && !strings.HasPrefix(s.mcpURL, strings.TrimRight(res, "/")+"/") {
					return Fail("resource %q at the root is neither the MCP URL %s nor a prefix of it", res, s.mcpURL)
				}
				return nil
			}),
		mcpCheck("MCP-04", "authorization server metadata is found at a discovery location with an issuer equal to the one the resource names",
			srcMCPAuth+"; RFC 8414 §3.1 and §3.3; OpenID Connect Discovery §4.3", Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				if err := s.as.wantStr("issuer", s.issuer); err != nil {
					return Fail("metadata at %s: %v (compared as exact strings)", s.asURL, err)
				}
				for _, k := range []string{"authorization_endpoint", "token_endpoint"} {
					if _, err := s.as.str(k); err != nil {
						return err
					}
				}
				return nil
			}),
		mcpCheck("MCP-05", "the authorization server advertises PKCE S256 (MCP clients refuse it otherwise)",
			srcMCPAuth+" §Authorization code protection; RFC 8414 §2", Must, nil, func(_ context.Context, _ *Env, s *mcpSite) error {
				if !s.offers("code_challenge_methods_supported", "S256") {
					return Fail("code_challenge_methods_supported: want it to contain S256, got %s", s.as["code_challenge_methods_supported"])
				}
				return nil
			}),
		mcpCheck("MCP-06", "an authorization request without code_challenge is refused",
			srcMCPAuth+" §Authorization code protection; OAuth 2.1 §4.1.1", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				cid, err := e.mcpClient(ctx)
				if err != nil {
					return err
				}
				hc, _ := e.wire()
				cfg := flows.AuthCodeConfig{HTTPClient: hc, Discovery: s.discovery(), Client: flows.Client{ID: cid, AuthMethod: flows.AuthMethodNone}}
				req, err := cfg.NewRequest(e.redirectURI())
				if err != nil {
					return setupFail("building an authorization request", err)
				}
				u, _ := url.Parse(req.URL())
				q := u.Query()
				q.Del("code_challenge")
				q.Del("code_challenge_method")
				u.RawQuery = q.Encode()
				hdr := []string{"Accept", "text/html"}
				session := e.target.hasSession()
				if session {
					// A form approver signs in through the contract's
					// /auth/login, which another server need not have:
					// then the request is judged without a session.
					if cs, err := e.SessionCookies(ctx); err == nil {
						hdr = append(hdr, "Cookie", cookieHeader(cs))
					} else {
						session = false
					}
				}
				r, err := e.Get(ctx, u.String(), hdr...)
				if err != nil {
					return err
				}
				if r.Status >= 400 {
					return nil // an error page
				}
				loc, err := location(r)
				if err != nil {
					return Fail("want the request refused (an error redirect or page), got %s", r.Snippet())
				}
				if sameEndpoint(loc, e.redirectURI()) && loc.Query().Get("error") != "" && loc.Query().Get("code") == "" {
					return nil
				}
				if !sameEndpoint(loc, e.redirectURI()) && !session {
					return Skip("the server asks for sign-in before judging the request, and no session is available")
				}
				return Fail("want the request refused, got a redirect to %s", loc)
			}),
		mcpCheck("MCP-07", "the code flow with PKCE and resource gives a token the MCP endpoint accepts",
			srcMCPAuth+" §Access token usage; RFC 8707 §2", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				tok, err := e.mcpAccessToken(ctx, s)
				if err != nil {
					return err
				}
				m, err := e.postMCPAt(ctx, s.mcpURL, "Bearer "+tok)
				if err != nil {
					return err
				}
				if m.Status != 200 {
					return Fail("initialize with the token: want HTTP 200, got %s", m.Snippet())
				}
				return nil
			}),
		mcpCheck("MCP-08", "a code_verifier that does not match the challenge is refused",
			srcMCPAuth+" §Authorization code protection; RFC 7636 §4.6", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				g, _, err := e.mcpGrant(ctx, s.scope())
				if err != nil {
					return err
				}
				f := g.exchangeForm()
				f.Set("code_verifier", randomString(32))
				r, err := e.PostForm(ctx, s.meta.TokenEndpoint, f)
				if err != nil {
					return err
				}
				return wantOAuthError(r, 400, "invalid_grant")
			}),
		mcpCheck("MCP-09", "the authorization response carries iss equal to the issuer (RFC 9207), when advertised",
			srcMCPAuth+" (SEP-2468); RFC 9207 §2", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				if !s.flag("authorization_response_iss_parameter_supported") {
					return Skip("the server does not advertise authorization_response_iss_parameter_supported")
				}
				_, u, err := e.mcpGrant(ctx, s.scope())
				if err != nil {
					return err
				}
				if got := u.Query()["iss"]; len(got) != 1 || got[0] != s.issuer {
					return Fail("iss: want exactly %q, got %q", s.issuer, got)
				}
				return nil
			}),
		mcpCheck("MCP-10", "dynamic registration accepts a native public client and keeps its application_type",
			srcMCPAuth+" §Dynamic client registration; RFC 7591 §3", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				if s.meta.RegistrationEndpoint == "" {
					return Skip("the authorization server has no registration_endpoint")
				}
				r, err := e.PostJSON(ctx, s.meta.RegistrationEndpoint, map[string]any{
					"client_name": "mcpauth conformance " + randomString(4), "redirect_uris": []string{e.redirectURI()},
					"grant_types": []string{"authorization_code"}, "response_types": []string{"code"},
					"token_endpoint_auth_method": "none", "application_type": "native",
				})
				if err != nil {
					return err
				}
				if r.Status != 201 {
					return Fail("want HTTP 201, got %s", r.Snippet())
				}
				o, err := decodeObject(r)
				if err != nil {
					return err
				}
				if _, err := o.str("client_id"); err != nil {
					return err
				}
				if o.has("application_type") {
					return o.wantStr("application_type", "native")
				}
				return nil
			}),
		mcpCheck("MCP-11", "a client metadata document is accepted as client_id, when advertised",
			srcMCPAuth+" §Client ID Metadata Documents", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				if !s.flag("client_id_metadata_document_supported") {
					return Skip("the server does not advertise client_id_metadata_document_supported")
				}
				if !e.target.CIMDPrivate {
					return Skip("needs a target that fetches client metadata documents from the suite's loopback host (--cimd-private)")
				}
				cid, h, err := e.publishDocument(ctx, nil)
				if err != nil {
					return err
				}
				hc, _ := e.wire()
				cfg := flows.AuthCodeConfig{HTTPClient: hc, Discovery: s.discovery(), Client: flows.Client{ID: cid, AuthMethod: flows.AuthMethodNone}}
				req, err := cfg.NewRequest(loopbackRedirect)
				if err != nil {
					return setupFail("building an authorization request", err)
				}
				r, err := e.Get(ctx, req.URL(), "Accept", "text/html")
				if err != nil {
					return err
				}
				if h.hitsOf(cid) == 0 {
					return Fail("the server never fetched the document at %s", cid)
				}
				if r.Status == 200 {
					return nil
				}
				if loc, err := location(r); err == nil && !sameEndpoint(loc, loopbackRedirect) && r.Status < 400 {
					return nil // on to sign-in
				}
				return Fail("want the consent page or sign-in, got %s %s", r.Snippet(), r.Header.Get("Location"))
			}),
		mcpCheck("MCP-12", "refresh tokens, when offered, rotate: the old one is refused after use",
			srcMCPAuth+"; OAuth 2.1 §4.3.1; RFC 9700 §4.14.2", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				if !s.offers("grant_types_supported", "refresh_token") || !s.offers("scopes_supported", "offline_access") {
					return Skip("the server offers no refresh tokens (refresh_token grant and offline_access scope)")
				}
				r, err := e.mcpTokens(ctx, strings.TrimSpace(s.scope()+" offline_access"))
				if err != nil {
					return err
				}
				p, err := readPair(r)
				if err != nil {
					return err
				}
				cid, _ := e.mcpClient(ctx)
				refresh := func(rt string) (*Response, error) {
					return e.PostForm(ctx, s.meta.TokenEndpoint, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {cid}})
				}
				if r, err = refresh(p.Refresh); err != nil {
					return err
				}
				q, err := readPair(r)
				if err != nil {
					return Fail("refreshing: %v", err)
				}
				if q.Refresh == p.Refresh {
					return Fail("the refresh token was not rotated")
				}
				if r, err = refresh(p.Refresh); err != nil {
					return err
				}
				return wantOAuthError(r, 400, "invalid_grant")
			}),
		mcpCheck("MCP-13", "a token is accepted only in the Authorization header, not in the query string",
			srcMCPAuth+" §Access token usage; RFC 6750 §2.3", Must, approval, func(ctx context.Context, e *Env, s *mcpSite) error {
				tok, err := e.mcpAccessToken(ctx, s)
				if err != nil {
					return err
				}
				sep := "?"
				if strings.Contains(s.mcpURL, "?") {
					sep = "&"
				}
				m, err := e.Do(ctx, http.MethodPost, s.mcpURL+sep+"access_token="+url.QueryEscape(tok),
					headers("Content-Type", "application/json", "Accept", "application/json, text/event-stream"), mcpInitialize)
				if err != nil {
					return err
				}
				if m.Status != 401 {
					return Fail("want HTTP 401, got %s", m.Snippet())
				}
				return nil
			}),
		{
			ID: "MCP-14", Title: "a token the server never issued gets 401 with a Bearer challenge, not another error",
			Area: "mcp", Source: srcMCPAuth + " §Token handling (invalid or expired tokens MUST receive 401); RFC 6750 §3.1",
			Run: func(ctx context.Context, e *Env) error {
				r, err := e.postMCPAt(ctx, e.BaseURL(), "Bearer invalid-"+randomString(24))
				if err != nil {
					return err
				}
				if r.Status != 401 {
					return Fail("want HTTP 401 for an invalid token, got %s", r.Snippet())
				}
				for _, c := range parseChallenges(r.Header.Values("WWW-Authenticate")) {
					if strings.EqualFold(c.Scheme, "Bearer") {
						return nil
					}
				}
				return Fail("want WWW-Authenticate: Bearer (error=\"invalid_token\") with the 401, got %q", r.Header.Values("WWW-Authenticate"))
			},
		},
	}
}
