package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	prmMeta   flows.ProtectedResourceMetadata
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
			return nil, &stepError{owner: stepChallenge, err: err}
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
			return nil, &stepError{owner: stepResourceMetadata,
				err: fmt.Errorf("no protected resource metadata at the challenge's URL, %s or %s", pathInserted, root)}
		}
		s.resource, _ = s.prm.str("resource")
		s.prmMeta.ScopesSupported, _ = s.prm.strs("scopes_supported")
		as, err := s.prm.strs("authorization_servers")
		if err != nil || len(as) == 0 {
			return nil, &stepError{owner: stepResourceMetadata,
				err: fmt.Errorf("protected resource metadata at %s names no authorization_servers", s.prmURL)}
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
			return nil, &stepError{owner: stepASMetadata,
				err: fmt.Errorf("no authorization server metadata for issuer %s at %q", s.issuer, asURLs(s.issuer))}
		}
		return s, nil
	})
	if err != nil {
		owner := stepResourceMetadata
		var se *stepError
		if errors.As(err, &se) {
			owner = se.owner
		}
		return nil, e.blockedBy(owner, setupFail("discovering the MCP server's authorization", err))
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
	return &flows.Discovery{MCPURL: s.mcpURL, Resource: s.resource, Issuer: s.issuer, AuthServer: s.meta, Scope: s.scope(),
		ResourceMetadata: &s.prmMeta}
}

// registerMCPClient registers a client with the profile's metadata (what
// the CLI registers), for a check that needs one of its own.
func (e *Env) registerMCPClient(ctx context.Context, s *mcpSite) (string, error) {
	hc, _ := e.wire()
	ci, err := flows.Register(ctx, hc, s.meta.RegistrationEndpoint, e.mcpClientMetadata(s))
	if err != nil {
		return "", err
	}
	return ci.ClientID, nil
}

// mcpRequest builds an authorization request of client cid (""; the
// profile's client) for scope.
func (e *Env) mcpRequest(ctx context.Context, s *mcpSite, cid, scope string) (*grant, error) {
	if cid == "" {
		var err error
		if cid, err = e.mcpClient(ctx); err != nil {
			return nil, err
		}
	}
	hc, _ := e.wire()
	cfg := flows.AuthCodeConfig{HTTPClient: hc, Discovery: s.discovery(), Scope: scope, Client: e.flowsClient(s, cid)}
	req, err := cfg.NewRequest(e.redirectURI())
	if err != nil {
		return nil, setupFail("building an authorization request", err)
	}
	return &grant{cfg: cfg, req: req}, nil
}

// mcpAuthorize sends the profile's client (or client cid, when given)
// through sign-in and consent with the request's query edited by edit (nil:
// as flows builds it), and returns the grant and the redirect, unjudged.
func (e *Env) mcpAuthorize(ctx context.Context, s *mcpSite, cid, scope string, edit func(url.Values)) (*grant, *url.URL, error) {
	if e.target.Approver == nil {
		return nil, nil, Skip("needs an approver (--approve=browser, --approve=form, --approve=manual or --browser-command)")
	}
	g, err := e.mcpRequest(ctx, s, cid, scope)
	if err != nil {
		return nil, nil, err
	}
	authURL := editQuery(g.req.URL(), edit)
	// A server error is the server's, not a page the approver could not
	// drive: judge the first answer before the approver takes over.
	if r, err := e.Get(ctx, authURL, "Accept", "text/html"); err != nil {
		return nil, nil, err
	} else if r.Status >= 500 {
		return nil, nil, e.blockedBy(stepSignIn, Fail("the authorization endpoint answered the request with %s", r.Snippet()))
	}
	u, err := e.approveConsent(ctx, authURL)
	if err != nil {
		return nil, nil, e.blockedBy(stepSignIn, err)
	}
	g.Code = u.Query().Get("code")
	return g, u, nil
}

// editQuery returns rawURL with its query edited by edit.
func editQuery(rawURL string, edit func(url.Values)) string {
	if edit == nil {
		return rawURL
	}
	u, _ := url.Parse(rawURL)
	q := u.Query()
	edit(q)
	u.RawQuery = q.Encode()
	return u.String()
}

// mcpGrant runs the front channel for the profile's client with scope.
func (e *Env) mcpGrant(ctx context.Context, scope string) (*grant, *url.URL, error) {
	s, err := e.site(ctx)
	if err != nil {
		return nil, nil, err
	}
	g, u, err := e.mcpAuthorize(ctx, s, "", scope, nil)
	if err != nil {
		return nil, nil, err
	}
	if u.Query().Get("state") != g.req.State || g.Code == "" {
		return nil, u, e.blockedBy(stepSignIn, Fail("want a redirect with a code and state %s, got %s", g.req.State, u))
	}
	return g, u, nil
}

// mcpAccessToken runs the code flow at s and returns the access token.
func (e *Env) mcpAccessToken(ctx context.Context, s *mcpSite) (string, error) {
	r, err := e.mcpTokens(ctx, s.scope())
	if err != nil {
		return "", e.blockedBy(stepSignIn, err)
	}
	tok, err := accessToken(r)
	return tok, e.blockedBy(stepSignIn, err)
}

// mcpTokens runs the whole code flow and returns the token response.
func (e *Env) mcpTokens(ctx context.Context, scope string) (*Response, error) {
	g, _, err := e.mcpGrant(ctx, scope)
	if err != nil {
		return nil, err
	}
	return e.exchange(ctx, g)
}

// mcpCheck is a check of the mcp profile: it runs once discovery succeeded.
func mcpCheck(id, area, title, source string, sev Severity, needs []Need, run func(ctx context.Context, e *Env, s *mcpSite) error) Check {
	return Check{ID: id, Title: title, Area: area, Source: source, Severity: sev, Needs: needs,
		Run: func(ctx context.Context, e *Env) error {
			s, err := e.site(ctx)
			if err != nil {
				return err
			}
			return run(ctx, e, s)
		}}
}

// mcpTokenCheck is an mcp check of what the MCP endpoint does with an
// access token: it runs the code flow (approval needed) for one first.
func mcpTokenCheck(id, area, title, source string, sev Severity, run func(ctx context.Context, e *Env, s *mcpSite, tok string) error) Check {
	return mcpCheck(id, area, title, source, sev, []Need{NeedApproval}, func(ctx context.Context, e *Env, s *mcpSite) error {
		tok, err := e.mcpAccessToken(ctx, s)
		if err != nil {
			return err
		}
		return run(ctx, e, s, tok)
	})
}

// The mcp profile's areas, in the order the catalogue lists them.
const (
	areaPRM          = "resource-metadata"
	areaChallenge    = "challenge"
	areaASMetadata   = "as-metadata"
	areaRegistration = "registration"
	areaPKCE         = "pkce"
	areaAuthorize    = "authorize"
	areaToken        = "token"
	areaAudience     = "audience"
	areaRefresh      = "refresh"
	areaRevocation   = "revocation"
	areaTokenUsage   = "token-usage"
	areaTransport    = "transport"
)

// MCPCatalogue is the mcp profile's catalogue, grouped by area. IDs are
// stable (MCP-01..14 predate the areas); sources name the MCP
// specification section or the RFC and section each rule comes from.
func MCPCatalogue() []Check {
	var all []Check
	for _, area := range [][]Check{
		mcpDiscoveryChecks(), mcpRegistrationChecks(), mcpAuthorizeChecks(),
		mcpTokenChecks(), mcpRefreshChecks(), mcpUsageChecks(), mcpValidationChecks(),
	} {
		all = append(all, area...)
	}
	rank := map[string]int{}
	for i, a := range []string{areaPRM, areaChallenge, areaASMetadata, areaRegistration, areaPKCE, areaAuthorize,
		areaToken, areaAudience, areaRefresh, areaRevocation, areaTokenUsage, areaTransport} {
		rank[a] = i
	}
	slices.SortStableFunc(all, func(a, b Check) int { return rank[a.Area] - rank[b.Area] })
	return all
}
