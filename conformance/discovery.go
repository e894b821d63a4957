package conformance

import (
	"context"
	"fmt"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

const (
	prmPath = "/.well-known/oauth-protected-resource"
	asPath  = "/.well-known/oauth-authorization-server"
)

// getMetadata fetches a discovery document and decodes it as a JSON object.
func (e *Env) getMetadata(ctx context.Context, path string) (object, error) {
	r, err := e.Get(ctx, path, "Accept", "application/json")
	if err != nil {
		return nil, err
	}
	if r.Status != 200 {
		return nil, Fail("GET %s: want HTTP 200, got %s", path, r.Snippet())
	}
	return decodeObject(r)
}

// metadataStr is string member k of the discovery document at path.
func (e *Env) metadataStr(ctx context.Context, path, k string) (string, error) {
	o, err := e.getMetadata(ctx, path)
	if err != nil {
		return "", err
	}
	return o.str(k)
}

// metadataField is a check that one member of a discovery document is right.
func metadataField(id, path, title, source string, check func(e *Env, o object) error) Check {
	return Check{
		ID: id, Title: title, Area: "discovery", Source: source,
		Run: func(ctx context.Context, e *Env) error {
			o, err := e.getMetadata(ctx, path)
			if err != nil {
				return err
			}
			return check(e, o)
		},
	}
}

// servedAsJSON checks the status and the content type of a document.
func servedAsJSON(id, path, title, source string) Check {
	return Check{
		ID: id, Title: title, Area: "discovery", Source: source,
		Run: func(ctx context.Context, e *Env) error {
			r, err := e.Get(ctx, path, "Accept", "application/json")
			if err != nil {
				return err
			}
			if r.Status != 200 {
				return Fail("want HTTP 200, got %s", r.Snippet())
			}
			if ct := r.ContentType(); ct != "application/json" {
				return Fail("want Content-Type application/json, got %q", r.Header.Get("Content-Type"))
			}
			_, err = decodeObject(r)
			return err
		},
	}
}

func asEndpoint(id, field, path string) Check {
	return metadataField(id, asPath, fmt.Sprintf("authorization server metadata: %s is {base}%s", field, path),
		"contract §Discovery documents",
		func(e *Env, o object) error { return o.wantStr(field, e.URL(path)) })
}

func discoveryChecks() []Check {
	const prmSrc = "contract §Discovery documents (RFC 9728)"
	const asSrc = "contract §Discovery documents (RFC 8414)"
	return []Check{
		servedAsJSON("DISC-01", prmPath, "protected resource metadata is served as JSON", "contract §Endpoints/Discovery"),
		metadataField("DISC-02", prmPath, "protected resource metadata: resource is {base}/mcp", prmSrc,
			func(e *Env, o object) error { return o.wantStr("resource", e.URL("/mcp")) }),
		metadataField("DISC-03", prmPath, "protected resource metadata: authorization_servers contains {base}", prmSrc,
			func(e *Env, o object) error {
				as, err := o.strs("authorization_servers")
				if err != nil {
					return err
				}
				for _, s := range as {
					if s == e.BaseURL() {
						return nil
					}
				}
				return Fail("authorization_servers: want it to contain %q, got %q", e.BaseURL(), as)
			}),
		metadataField("DISC-04", prmPath, "protected resource metadata: scopes_supported is [mcp]", prmSrc,
			func(e *Env, o object) error { return o.wantSet("scopes_supported", "mcp") }),
		{
			ID: "DISC-05", Title: "protected resource metadata is also served at the path-inserted location /.well-known/oauth-protected-resource/mcp",
			Area: "discovery", Source: "RFC 9728 §3.1 via decisions.md",
			Run: func(ctx context.Context, e *Env) error {
				o, err := e.getMetadata(ctx, prmPath+"/mcp")
				if err != nil {
					return err
				}
				if err := o.wantStr("resource", e.URL("/mcp")); err != nil {
					return err
				}
				return o.wantSet("scopes_supported", "mcp")
			},
		},
		servedAsJSON("DISC-06", asPath, "authorization server metadata is served as JSON", "contract §Endpoints/Discovery"),
		metadataField("DISC-07", asPath, "authorization server metadata: issuer is the base URL", asSrc+"; RFC 8414 §3.3",
			func(e *Env, o object) error { return o.wantStr("issuer", e.BaseURL()) }),
		asEndpoint("DISC-08", "authorization_endpoint", "/oauth/authorize"),
		asEndpoint("DISC-09", "token_endpoint", "/oauth/token"),
		asEndpoint("DISC-10", "registration_endpoint", "/oauth/register"),
		asEndpoint("DISC-11", "device_authorization_endpoint", "/api/oauth/device/code"),
		metadataField("DISC-12", asPath, "authorization server metadata: response_types_supported is [code]", asSrc,
			func(e *Env, o object) error { return o.wantSet("response_types_supported", "code") }),
		metadataField("DISC-13", asPath, "authorization server metadata: grant_types_supported is [authorization_code, device_code, refresh_token]", asSrc+"; decisions.md MCP 2026-07-28",
			func(e *Env, o object) error {
				// client_credentials too when machine clients are configured.
				return o.wantSetWith("grant_types_supported", []string{oauthwire.GrantTypeClientCredentials}, "authorization_code", flows.GrantTypeDeviceCode, "refresh_token")
			}),
		metadataField("DISC-14", asPath, "authorization server metadata: code_challenge_methods_supported is [S256]", asSrc,
			func(e *Env, o object) error { return o.wantSet("code_challenge_methods_supported", "S256") }),
		metadataField("DISC-15", asPath, "authorization server metadata: scopes_supported is [mcp, offline_access]", asSrc+"; decisions.md MCP 2026-07-28",
			func(e *Env, o object) error { return o.wantSet("scopes_supported", "mcp", "offline_access") }),
		metadataField("DISC-16", asPath, "authorization server metadata: revocation_endpoint is {base}/oauth/revoke, for public clients (auth method none)",
			"RFC 7009 §4; RFC 8414 §2 via "+src2026+" (Metadata)",
			func(e *Env, o object) error {
				if err := o.wantStr("revocation_endpoint", e.URL("/oauth/revoke")); err != nil {
					return err
				}
				return o.wantSet("revocation_endpoint_auth_methods_supported", "none")
			}),
		metadataField("DISC-17", asPath, "authorization server metadata: client_id_metadata_document_supported is true",
			"MCP authorization 2026-07-28 (Client ID Metadata Documents) via "+src2026+" (Metadata)",
			func(e *Env, o object) error {
				raw, ok := o["client_id_metadata_document_supported"]
				if !ok {
					return Fail("member %q missing", "client_id_metadata_document_supported")
				}
				if string(raw) != "true" {
					return Fail("client_id_metadata_document_supported: want true, got %s", compactJSON(raw))
				}
				return nil
			}),
	}
}
