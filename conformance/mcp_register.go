package conformance

import (
	"context"

	"github.com/mcpauth/mcpauth/flows"
)

// The mcp profile's registration checks: dynamic client registration (RFC
// 7591) and client ID metadata documents.

const (
	srcDCR     = srcMCPAuth + " §Dynamic client registration"
	srcCIMDMCP = srcMCPAuth + " §Client ID Metadata Documents"
)

// mcpRegister posts client metadata, the profile's own (what the CLI
// registers) with the members of extra set over it (nil values removed),
// to the registration endpoint.
func (e *Env) mcpRegister(ctx context.Context, s *mcpSite, extra map[string]any) (*Response, error) {
	ep, err := e.registrationEndpoint(s)
	if err != nil {
		return nil, err
	}
	md := e.mcpClientFields(s)
	md["client_name"] = "mcpauth conformance " + randomString(4)
	for k, v := range extra {
		if v == nil {
			delete(md, k)
		} else {
			md[k] = v
		}
	}
	return e.PostJSON(ctx, ep, md)
}

// mcpRegistered registers the profile's client raw, for the checks of
// what the registration response says: a refusal is MCP-10's finding.
func (e *Env) mcpRegistered(ctx context.Context, s *mcpSite) (object, error) {
	o, err := registered(e.mcpRegister(ctx, s, nil))
	return o, e.blockedBy(stepRegister, err)
}

// registered reads a successful registration response; it takes the
// registration call's results as they are, passing a transport error on.
func registered(r *Response, err error) (object, error) {
	if err != nil {
		return nil, err
	}
	if r.Status != 201 {
		return nil, Fail("want HTTP 201, got %s", r.Snippet())
	}
	o, err := decodeObject(r)
	if err != nil {
		return nil, err
	}
	if _, err := o.str("client_id"); err != nil {
		return nil, err
	}
	return o, nil
}

// documentRequest publishes a metadata document (edited by edit) and
// builds an authorization request with its URL as client_id, where the
// target advertises and can fetch them.
func (e *Env) documentRequest(ctx context.Context, s *mcpSite, edit func(id string, doc map[string]any)) (cid string, h *DocumentHost, authURL string, err error) {
	if !s.flag("client_id_metadata_document_supported") {
		return "", nil, "", Skip("the server does not advertise client_id_metadata_document_supported")
	}
	if !e.target.CIMDPrivate {
		return "", nil, "", Skip("needs a target that fetches client metadata documents from the suite's loopback host (--cimd-private)")
	}
	if cid, h, err = e.publishDocument(ctx, edit); err != nil {
		return "", nil, "", err
	}
	hc, _ := e.wire()
	cfg := flows.AuthCodeConfig{HTTPClient: hc, Discovery: s.discovery(), Client: flows.Client{ID: cid, AuthMethod: flows.AuthMethodNone}}
	req, err := cfg.NewRequest(loopbackRedirect)
	if err != nil {
		return "", nil, "", setupFail("building an authorization request", err)
	}
	return cid, h, req.URL(), nil
}

// mcpRefusedDocument publishes a metadata document made invalid by edit
// and checks that an authorization request naming it is refused, without a
// redirect to the request's redirect URI.
func mcpRefusedDocument(id, title, source string, edit func(id string, doc map[string]any)) Check {
	return mcpCheck(id, areaRegistration, title, source, Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
		_, _, authURL, err := e.documentRequest(ctx, s, edit)
		if err != nil {
			return err
		}
		return e.wantAuthorizationRefused(ctx, authURL, loopbackRedirect)
	})
}

func mcpRegistrationChecks() []Check {
	return []Check{
		mcpCheck("MCP-10", areaRegistration, "dynamic registration accepts a native public client and keeps its application_type",
			srcDCR+" (application_type, 2026-07-28); RFC 7591 §3 and §3.2.1", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				o, err := e.mcpRegistered(ctx, s)
				if err != nil {
					return err
				}
				// A server that does not know application_type ignores it
				// (RFC 7591 §2); one that keeps it must keep it native.
				if o.has("application_type") {
					return o.wantStr("application_type", "native")
				}
				return nil
			}),
		mcpCheck("MCP-37", areaRegistration, "registration echoes the redirect_uris exactly as registered",
			"RFC 7591 §3.2.1 (returns all registered metadata); "+srcDCR, Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				o, err := e.mcpRegistered(ctx, s)
				if err != nil {
					return err
				}
				return o.wantSet("redirect_uris", e.redirectURI())
			}),
		mcpCheck("MCP-38", areaRegistration, "a public client keeps token_endpoint_auth_method none",
			"RFC 7591 §2 and §3.2.1; "+srcDCR+" (public clients)", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				o, err := e.mcpRegistered(ctx, s)
				if err != nil {
					return err
				}
				if !o.has("token_endpoint_auth_method") {
					return nil // RFC 7591 §2: the default is client_secret_basic, but an omitted echo is not a change
				}
				return o.wantStr("token_endpoint_auth_method", "none")
			}),
		mcpCheck("MCP-39", areaRegistration, "a redirect URI with a fragment is refused with invalid_redirect_uri",
			"RFC 7591 §3.2.2; RFC 6749 §3.1.2 (MUST NOT include a fragment)", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.mcpRegister(ctx, s, map[string]any{"redirect_uris": []string{e.redirectURI() + "#frag"}})
				if err != nil {
					return err
				}
				return wantOAuthError(r, 400, "invalid_redirect_uri", "invalid_client_metadata")
			}),
		mcpCheck("MCP-40", areaRegistration, "a body that is not JSON is refused with 400 and an RFC 7591 error",
			"RFC 7591 §3.2.2", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				ep, err := e.registrationEndpoint(s)
				if err != nil {
					return err
				}
				r, err := e.PostRaw(ctx, ep, "application/json", []byte(`{"redirect_uris": [`))
				if err != nil {
					return err
				}
				return wantOAuthError(r, 400, "invalid_client_metadata", "invalid_request")
			}),
		mcpCheck("MCP-41", areaRegistration, "a plain-http redirect URI off loopback is refused",
			srcMCPAuth+" §Communication security (redirect URIs MUST be localhost or https); OAuth 2.1 §2.3.1", Should, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				r, err := e.mcpRegister(ctx, s, map[string]any{"redirect_uris": []string{"http://client.example.com/callback"}})
				if err != nil {
					return err
				}
				if r.Status == 201 {
					return Fail("registered http://client.example.com/callback: %s", r.Snippet())
				}
				return wantOAuthError(r, 400, "invalid_redirect_uri", "invalid_client_metadata")
			}),
		mcpCheck("MCP-11", areaRegistration, "a client metadata document is accepted as client_id, when advertised",
			srcMCPAuth+" §Client ID Metadata Documents", Must, nil, func(ctx context.Context, e *Env, s *mcpSite) error {
				cid, h, authURL, err := e.documentRequest(ctx, s, nil)
				if err != nil {
					return err
				}
				r, err := e.Get(ctx, authURL, "Accept", "text/html")
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
		mcpRefusedDocument("MCP-42", "a metadata document whose client_id is not its own URL is refused",
			srcCIMDMCP+" (client_id MUST match the document URL)", func(_ string, doc map[string]any) {
				doc["client_id"] = "https://client.example.com/other.json"
			}),
		mcpRefusedDocument("MCP-43", "a redirect_uri the metadata document does not list is not redirected to",
			srcCIMDMCP+" (redirect URIs from the document); "+srcMCPAuth+" §Open redirection", func(_ string, doc map[string]any) {
				doc["redirect_uris"] = []string{"https://client.example.com/callback"}
			}),
	}
}
