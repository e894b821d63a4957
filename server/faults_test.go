package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/pkce"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// faultKey signs the JWTs of fault runs, so that a fault can tell a
// well-signed token from a forged one the way a sloppy server would.
const faultKey = "fault-injection-signing-key-0123456789abcdef"

// A fault is one misbehaviour injected into the reference server, from the
// outside: an HTTP middleware (local.Options.Wrap) or a store wrapper. None
// of them can be reached from `mcpauth serve` flags.
type fault struct {
	name string
	// wrap is the middleware; clk is the server's clock, for the faults that
	// must judge time as the server does.
	wrap  func(clk clock.Clock) func(http.Handler) http.Handler
	store func(store.Store) store.Store
	// cimd, when set, configures the server's metadata document fetching
	// (see startSuiteTargetCIMD).
	cimd cimdSetup
	// wantFail are checks that must fail (Must) or warn (Should).
	wantFail []string
}

// The suite is not vacuous: each fault, injected alone into a server that
// otherwise passes everything, makes the checks written for it fail, and
// only those.
func TestConformanceSuiteCatchesFaults(t *testing.T) {
	for _, f := range faults() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			clk := clock.NewOffset(nil)
			opts := local.Options{SigningKey: []byte(faultKey), Store: memory.New()}
			if f.wrap != nil {
				opts.Wrap = f.wrap(clk)
			}
			if f.store != nil {
				opts.Store = f.store(opts.Store)
			}
			target := startSuiteTargetCIMD(t, opts, clk, f.cimd)
			rep := runSuite(t, target)
			byID := map[string]conformance.Result{}
			for _, r := range rep.Results {
				byID[r.ID] = r
				if r.Verdict == conformance.VerdictSkip && cimdSkip(checkByID(r.ID), target.CIMDPrivate) {
					continue
				}
				// Exactly the named checks: a fault blamed on unrelated
				// checks would hide which check is about what.
				if r.Verdict != conformance.VerdictPass && !slices.Contains(f.wantFail, r.ID) {
					t.Errorf("also %s %s: %s", r.Verdict, r.ID, r.Reason)
				}
			}
			for _, id := range f.wantFail {
				r, ok := byID[id]
				want := conformance.VerdictFail
				if r.Severity == conformance.Should {
					want = conformance.VerdictWarn
				}
				switch {
				case !ok:
					t.Errorf("%s: no such check", id)
				case r.Verdict != want:
					t.Errorf("%s: %s, want %s (%s)", id, r.Verdict, want, r.Reason)
				default:
					t.Logf("%s %s: %s", r.Verdict, id, r.Reason)
				}
			}
			mustFail := slices.ContainsFunc(f.wantFail, func(id string) bool { return byID[id].Severity == conformance.Must })
			if rep.Failed() != mustFail {
				t.Errorf("the run failed: %v, want %v", rep.Failed(), mustFail)
			}
		})
	}
}

func faults() []fault {
	return append([]fault{
		// Authorization codes.
		{name: "code usable twice", store: func(s store.Store) store.Store { return reusableCodes{s} },
			wantFail: []string{"TOKEN-10", "TOKEN-11", "REFRESH-07"}},
		{name: "code replay revokes nothing", store: func(s store.Store) store.Store { return noRevocation{s} },
			wantFail: []string{"TOKEN-11", "REVOKE-02"}}, // RevokeToken also serves RFC 7009
		{name: "code expiry ignored", store: func(s store.Store) store.Store { return longCodes{s} },
			wantFail: []string{"TOKEN-18"}},
		{name: "plain PKCE accepted", wrap: noClock(plainPKCE),
			wantFail: []string{"AUTHZ-14"}},
		{name: "unregistered redirect URI followed", wrap: noClock(rewriteResponse(route("GET", "/oauth/authorize"), redirectAnyway)),
			wantFail: []string{"AUTHZ-01", "AUTHZ-02", "AUTHZ-03", "AUTHZ-04", "AUTHZ-05", "AUTHZ-06", "AUTHZ-07", "AUTHZ-08", "AUTHZ-09", "AUTHZ-10", "AUTHZ-11",
				"CIMD-03", "CIMD-04", "CIMD-05", "CIMD-06", "CIMD-08"}}, // refused documents too
		{name: "consent page may be framed", wrap: noClock(rewriteResponse(route("GET", "/oauth/authorize"), func(_ *http.Request, res *faultResponse) {
			res.header.Del("X-Frame-Options")
			res.header.Del("Content-Security-Policy")
		})), wantFail: []string{"HDR-07"}},
		{name: "consent CSRF token not checked", wrap: noClock(forgeCSRF),
			wantFail: []string{"AUTHZ-24"}},

		// Token endpoint responses.
		{name: "expires_in missing", wrap: noClock(rewriteResponse(tokenEndpoints, func(_ *http.Request, res *faultResponse) {
			if res.status == http.StatusOK {
				res.editJSON(func(m map[string]any) { delete(m, "expires_in") })
			}
		})), wantFail: []string{"TOKEN-08", "DEV-24"}},
		{name: "token errors cacheable", wrap: noClock(rewriteResponse(tokenEndpoints, func(_ *http.Request, res *faultResponse) {
			if res.status >= 400 {
				res.header.Set("Cache-Control", "max-age=300")
			}
		})), wantFail: []string{"TOKEN-06", "DEV-12", "DEV-30"}},
		{name: "token response without Pragma", wrap: noClock(rewriteResponse(tokenEndpoints, func(_ *http.Request, res *faultResponse) {
			res.header.Del("Pragma")
		})), wantFail: []string{"TOKEN-09"}},
		{name: "unknown client gets 400", wrap: noClock(rewriteResponse(clientEndpoints, func(_ *http.Request, res *faultResponse) {
			if res.oauthError() == "invalid_client" {
				res.status = http.StatusBadRequest
			}
		})), wantFail: []string{"DEV-07", "DEV-21", "MACH-02", "MACH-04", "MACH-05"}},

		// Device flow.
		{name: "slow_down never sent", wrap: noClock(rewriteResponse(tokenEndpoints, renameError("slow_down", "authorization_pending"))),
			wantFail: []string{"DEV-14", "DEV-15", "DEV-16"}},
		{name: "interval not raised after slow_down", store: func(s store.Store) store.Store {
			return deviceEdit{Store: s, written: func(stored store.DeviceCode, out *store.DeviceCode) { out.Interval = stored.Interval }}
		}, wantFail: []string{"DEV-15"}},
		{name: "expired device code still pending", wrap: noClock(rewriteResponse(tokenEndpoints, renameError("expired_token", "authorization_pending"))),
			wantFail: []string{"DEV-29"}},
		{name: "device code expiry extended", store: func(s store.Store) store.Store {
			return deviceEdit{Store: s,
				seen:    func(d *store.DeviceCode) { d.ExpiresAt = d.ExpiresAt.Add(time.Hour) },
				written: func(stored store.DeviceCode, out *store.DeviceCode) { out.ExpiresAt = stored.ExpiresAt },
			}
		}, wantFail: []string{"DEV-29"}},
		{name: "device denial ignored", store: func(s store.Store) store.Store {
			return deviceEdit{Store: s, seen: func(d *store.DeviceCode) {
				if d.Status == store.DeviceDenied {
					d.Status = store.DevicePending
				}
			}}
		}, wantFail: []string{"DEV-25"}},
		{name: "spent device code delivers again", store: func(s store.Store) store.Store {
			return deviceEdit{Store: s, seen: func(d *store.DeviceCode) {
				if d.Status == store.DeviceSpent {
					d.Status = store.DeviceApproved
				}
			}}
		}, wantFail: []string{"DEV-26"}},
		{name: "user code without hyphen", wrap: noClock(rewriteResponse(route("POST", "/api/oauth/device/code"), func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) {
				uc, _ := m["user_code"].(string)
				m["user_code"] = strings.ReplaceAll(uc, "-", "")
				if c, ok := m["verification_uri_complete"].(string); ok {
					m["verification_uri_complete"] = strings.Replace(c, url.QueryEscape(uc), strings.ReplaceAll(uc, "-", ""), 1)
				}
			})
		})), wantFail: []string{"DEV-02"}},

		// Bearer tokens and API keys.
		{name: "alg none accepted", wrap: noClock(rewriteResponse(route("GET", "/api/ping"), acceptUnsigned)),
			wantFail: []string{"PING-03", "PING-07"}},
		{name: "JWT expiry ignored", wrap: acceptExpired,
			wantFail: []string{"PING-12"}},
		{name: "token in the query string accepted", wrap: noClock(queryToken),
			wantFail: []string{"PING-15", "PING-16"}},
		{name: "token in the query string accepted on /mcp", wrap: noClock(func(next http.Handler) http.Handler {
			q := queryToken(next)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/mcp" {
					q.ServeHTTP(w, r)
					return
				}
				next.ServeHTTP(w, r)
			})
		}), wantFail: []string{"PING-16"}},
		{name: "MCP sessions kept", wrap: noClock(rewriteResponse(func(r *http.Request) bool { return r.URL.Path == "/mcp" }, func(r *http.Request, res *faultResponse) {
			if r.Method == http.MethodPost && res.status == http.StatusOK {
				res.header.Set("Mcp-Session-Id", "session-1")
			}
		})), wantFail: []string{"PING-17"}},
		{name: "CORS reflects any origin with credentials", wrap: noClock(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if o := r.Header.Get("Origin"); o != "" && bearerPaths(r) {
					w.Header().Set("Access-Control-Allow-Origin", o)
					w.Header().Set("Access-Control-Allow-Credentials", "true")
					if r.Method == http.MethodOptions {
						w.Header().Set("Access-Control-Allow-Headers", r.Header.Get("Access-Control-Request-Headers"))
						w.WriteHeader(http.StatusNoContent)
						return
					}
				}
				next.ServeHTTP(w, r)
			})
		}), wantFail: []string{"HDR-09", "HDR-10"}},
		{name: "metadata built from X-Forwarded-Host", wrap: noClock(rewriteResponse(func(r *http.Request) bool {
			return r.Header.Get("X-Forwarded-Host") != ""
		}, func(r *http.Request, res *faultResponse) {
			forged := "https://" + r.Header.Get("X-Forwarded-Host")
			res.editJSON(func(m map[string]any) {
				if _, ok := m["issuer"]; ok {
					m["issuer"] = forged
				}
			})
			if v := res.header.Get("WWW-Authenticate"); v != "" {
				res.header.Set("WWW-Authenticate", `Bearer resource_metadata="`+forged+`/.well-known/oauth-protected-resource", scope="mcp"`)
			}
		})), wantFail: []string{"HDR-11"}},
		{name: "signed-in pages cacheable", wrap: noClock(rewriteResponse(func(r *http.Request) bool {
			return r.Method == "GET" && (r.URL.Path == "/oauth/authorize" || r.URL.Path == "/settings")
		}, func(_ *http.Request, res *faultResponse) {
			if res.status == http.StatusOK {
				res.header.Set("Cache-Control", "public, max-age=600")
			}
		})), wantFail: []string{"HDR-12"}},
		{name: "approval redirects with 307", wrap: noClock(rewriteResponse(route("POST", "/oauth/authorize"), func(_ *http.Request, res *faultResponse) {
			if res.status == http.StatusFound || res.status == http.StatusSeeOther {
				res.status = http.StatusTemporaryRedirect
			}
		})), wantFail: []string{"AUTHZ-27"}},
		{name: "token parameters read from the query string", wrap: noClock(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if route("POST", "/oauth/token")(r) && r.URL.RawQuery != "" {
					f := formOf(r)
					for k, v := range r.URL.Query() {
						f[k] = v
					}
					replaceBody(r, []byte(f.Encode()))
					r.URL.RawQuery = ""
				}
				next.ServeHTTP(w, r)
			})
		}), wantFail: []string{"TOKEN-22"}},
		{name: "auth scheme case-sensitive", wrap: noClock(caseSensitiveScheme),
			wantFail: []string{"PING-10"}},
		{name: "old API key still valid", store: func(s store.Store) store.Store { return &keepOldKeys{Store: s, old: map[string]store.APIKey{}} },
			wantFail: []string{"KEY-06"}},
		{name: "no WWW-Authenticate", wrap: noClock(rewriteResponse(bearerPaths, func(_ *http.Request, res *faultResponse) {
			res.header.Del("WWW-Authenticate")
		})), wantFail: []string{"HDR-01", "HDR-02", "HDR-03", "HDR-04", "HDR-05", "HDR-06"}},
		{name: "challenge without error=invalid_token", wrap: noClock(rewriteResponse(bearerPaths, func(_ *http.Request, res *faultResponse) {
			if v := res.header.Get("WWW-Authenticate"); v != "" {
				v, _, _ = strings.Cut(v, `, error="invalid_token"`)
				res.header.Set("WWW-Authenticate", v)
			}
		})), wantFail: []string{"HDR-03", "HDR-04"}},

		// Browser login.
		{name: "session cookie not HttpOnly", wrap: noClock(rewriteResponse(route("GET", "/auth/callback"), dropCookieAttr("HttpOnly"))),
			wantFail: []string{"LOGIN-04"}},
		{name: "session cookie not Secure", wrap: noClock(rewriteResponse(route("GET", "/auth/callback"), dropCookieAttr("Secure"))),
			wantFail: []string{"LOGIN-04"}},
		{name: "return_to checked by prefix only", wrap: noClock(prefixReturnTo()),
			wantFail: []string{"LOGIN-06"}},
		{name: "access tokens open pages", wrap: noClock(rewriteResponse(tokenEndpoints, sessionCapableTokens)),
			wantFail: []string{"LOGIN-07"}},
		{name: "test clock takes cross-origin forms", wrap: noClock(clockAcceptsForms),
			wantFail: []string{"HDR-08"}},

		// Refresh tokens and revocation (MCP 2026-07-28).
		{name: "refreshed access token does not work", wrap: noClock(rewriteResponse(refreshRequests, func(_ *http.Request, res *faultResponse) {
			if res.status == http.StatusOK {
				res.editJSON(func(m map[string]any) { m["access_token"] = "broken." + fmt.Sprint(m["access_token"]) })
			}
		})), wantFail: []string{"REFRESH-01", "REFRESH-03"}},
		{name: "refresh token issued without offline_access", wrap: noClock(rewriteResponse(tokenEndpoints, func(_ *http.Request, res *faultResponse) {
			if res.status == http.StatusOK {
				res.editJSON(func(m map[string]any) {
					if _, ok := m["refresh_token"]; !ok {
						m["refresh_token"] = "mcpr_never-asked-for"
					}
				})
			}
		})), wantFail: []string{"REFRESH-02"}},
		{name: "refresh widens the scope", wrap: noClock(widenRefreshScope), wantFail: []string{"REFRESH-08"}},
		{name: "refresh token not rotated", wrap: noClock(rewriteResponse(refreshRequests, func(r *http.Request, res *faultResponse) {
			if res.status == http.StatusOK {
				res.editJSON(func(m map[string]any) { m["refresh_token"] = r.PostForm.Get("refresh_token") })
			}
		})), wantFail: []string{"REFRESH-03"}},
		{name: "spent refresh token answered again (reuse grace period)", wrap: refreshReuseWindow(forever),
			wantFail: []string{"REFRESH-03", "REFRESH-04", "REFRESH-05"}},
		{name: "refresh families never revoked", store: func(s store.Store) store.Store { return noFamilyRevocation{s} },
			wantFail: []string{"REFRESH-04", "REFRESH-07", "REVOKE-01"}},
		{name: "refresh token of another client accepted", wrap: noClock(actAsOwner("/oauth/token")),
			wantFail: []string{"REFRESH-06"}},
		{name: "revocation ignores refresh tokens", wrap: noClock(revokeOther(func(tok string) bool { return strings.HasPrefix(tok, "mcpr_") })),
			wantFail: []string{"REVOKE-01"}},
		{name: "revocation ignores access tokens", wrap: noClock(revokeOther(func(tok string) bool { return strings.Count(tok, ".") == 2 })),
			wantFail: []string{"REVOKE-02"}},
		{name: "revoking an unknown token is an error", wrap: noClock(rewriteResponse(revokeRequests, func(r *http.Request, res *faultResponse) {
			if res.status == http.StatusOK && strings.HasPrefix(r.PostForm.Get("token"), "unknown-") {
				res.status = http.StatusBadRequest
				res.body = []byte(`{"error":"invalid_request","error_description":"unknown token"}`)
			}
		})), wantFail: []string{"REVOKE-03"}},
		{name: "unknown client may revoke", wrap: noClock(rewriteResponse(route("POST", "/oauth/revoke"), func(_ *http.Request, res *faultResponse) {
			if res.oauthError() == "invalid_client" {
				res.status, res.body = http.StatusOK, nil
			}
		})), wantFail: []string{"REVOKE-04"}},
		{name: "another client's token revoked", wrap: noClock(actAsOwner("/oauth/revoke")),
			wantFail: []string{"REVOKE-05"}},

		// Client ID Metadata Documents.
		{name: "metadata document clients refused", wrap: noClock(rewriteResponse(func(r *http.Request) bool {
			return r.URL.Path == "/oauth/authorize" && strings.HasPrefix(r.URL.Query().Get("client_id"), "https://")
		}, func(_ *http.Request, res *faultResponse) {
			res.status, res.header = http.StatusBadRequest, http.Header{"Content-Type": {"text/html; charset=utf-8"}}
			res.body = []byte("<p>metadata documents are not supported</p>")
		})), wantFail: []string{"CIMD-01", "CIMD-02"}},
		{name: "metadata document clients refused at the token endpoint", wrap: noClock(rewriteResponse(func(r *http.Request) bool {
			return route("POST", "/oauth/token")(r) && strings.HasPrefix(formOf(r).Get("client_id"), "https://")
		}, func(_ *http.Request, res *faultResponse) {
			res.status, res.body = http.StatusUnauthorized, []byte(`{"error":"invalid_client"}`)
		})), wantFail: []string{"CIMD-02"}},
		{name: "metadata document client_id not compared with its URL", cimd: documentProxy(func(u string, d *proxiedDoc) {
			d.editJSON(func(m map[string]any) { m["client_id"] = u })
		}), wantFail: []string{"CIMD-03"}},
		{name: "metadata document content type not checked", cimd: documentProxy(func(_ string, d *proxiedDoc) {
			d.contentType = "application/json"
		}), wantFail: []string{"CIMD-05"}},
		{name: "metadata document redirects followed", cimd: documentProxy(func(_ string, d *proxiedDoc) { d.follow = true }),
			wantFail: []string{"CIMD-06"}},
		{name: "metadata document secrets ignored", cimd: documentProxy(func(_ string, d *proxiedDoc) {
			d.editJSON(func(m map[string]any) {
				delete(m, "client_secret")
				m["token_endpoint_auth_method"] = "none"
			})
		}), wantFail: []string{"CIMD-08"}},
		{name: "metadata documents fetched from private addresses", cimd: func(_ *testing.T, host *conformance.DocumentHost) (server.MetadataDocumentConfig, bool) {
			return server.MetadataDocumentConfig{AllowPrivateAddresses: true, RootCAs: host.CertPool()}, false
		}, wantFail: []string{"CIMD-07"}},

		// Discovery and registration.
		{name: "issuer with a trailing slash", wrap: noClock(rewriteResponse(route("GET", "/.well-known/oauth-authorization-server"), func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) { m["issuer"] = fmt.Sprint(m["issuer"]) + "/" })
		})), wantFail: []string{"DISC-07"}},
		{name: "resource is the base URL", wrap: noClock(rewriteResponse(route("GET", "/.well-known/oauth-protected-resource"), func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) { m["resource"] = strings.TrimSuffix(fmt.Sprint(m["resource"]), "/mcp") })
		})), wantFail: []string{"DISC-02", "HDR-06"}}, // HDR-06 follows the challenge to the metadata
		{name: "resource metadata without scopes_supported", wrap: noClock(rewriteResponse(func(r *http.Request) bool {
			return r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource")
		}, func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) { delete(m, "scopes_supported") })
		})), wantFail: []string{"DISC-04", "DISC-05"}},
		{name: "plain advertised beside S256", wrap: noClock(rewriteResponse(route("GET", "/.well-known/oauth-authorization-server"), func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) { m["code_challenge_methods_supported"] = []string{"S256", "plain"} })
		})), wantFail: []string{"DISC-14"}},
		{name: "no revocation_endpoint advertised", wrap: noClock(rewriteResponse(route("GET", "/.well-known/oauth-authorization-server"), func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) { delete(m, "revocation_endpoint") })
		})), wantFail: []string{"DISC-16"}},
		{name: "metadata documents not advertised", wrap: noClock(rewriteResponse(route("GET", "/.well-known/oauth-authorization-server"), func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) { m["client_id_metadata_document_supported"] = false })
		})), wantFail: []string{"DISC-17"}},
		{name: "application_type not echoed", wrap: noClock(rewriteResponse(route("POST", "/oauth/register"), func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) { delete(m, "application_type") })
		})), wantFail: []string{"REG-19", "REG-20"}},
		{name: "application_type defaults to native", wrap: noClock(editRegistration(func(m map[string]any) {
			if _, ok := m["application_type"]; !ok {
				m["application_type"] = "native"
			}
		})), wantFail: []string{"REG-20"}},
		{name: "web client takes http redirect URIs", wrap: noClock(editRegistration(func(m map[string]any) {
			if m["application_type"] == "web" && strings.Contains(fmt.Sprint(m["redirect_uris"]), "http://") {
				delete(m, "application_type")
			}
		})), wantFail: []string{"REG-21"}},
		{name: "any application_type accepted", wrap: noClock(editRegistration(func(m map[string]any) {
			if t, ok := m["application_type"]; ok && t != "web" && t != "native" {
				delete(m, "application_type")
			}
		})), wantFail: []string{"REG-22"}},
		{name: "refresh_token registered as the only grant", wrap: noClock(editRegistration(func(m map[string]any) {
			if g, ok := m["grant_types"].([]any); ok && len(g) == 1 && g[0] == "refresh_token" {
				m["grant_types"] = []any{"authorization_code", "refresh_token"}
			}
		})), wantFail: []string{"REG-23"}},
		{name: "missing response_type means code", wrap: noClock(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if q := r.URL.Query(); r.URL.Path == "/oauth/authorize" && !q.Has("response_type") && q.Has("client_id") {
					q.Set("response_type", "code")
					r.URL.RawQuery = q.Encode()
				}
				next.ServeHTTP(w, r)
			})
		}), wantFail: []string{"AUTHZ-26"}},
		{name: "GET on POST endpoints is 404", wrap: noClock(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/oauth/") && r.URL.Path != "/oauth/authorize" {
					http.NotFound(w, r)
					return
				}
				next.ServeHTTP(w, r)
			})
		}), wantFail: []string{"TOKEN-21"}},
		{name: "http redirect URI on a public host registered", wrap: noClock(httpRedirectURIs),
			wantFail: []string{"REG-06"}},
		{name: "oversized body is a server error", wrap: noClock(rewriteResponse(route("POST", "/oauth/register"), func(r *http.Request, res *faultResponse) {
			if r.ContentLength > 1<<20 {
				res.status = http.StatusInternalServerError
			}
		})), wantFail: []string{"REG-11"}},
	}, machineFaults()...)
}

// --- The response-rewriting middleware -----------------------------------

// faultResponse is a buffered response a fault may edit before it is sent.
type faultResponse struct {
	status int
	header http.Header
	body   []byte
}

// rewriteResponse buffers the server's responses to requests match accepts
// and lets edit change them; other requests pass untouched (MCP streams
// included).
func rewriteResponse(match func(*http.Request) bool, edit func(*http.Request, *faultResponse)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !match(r) {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			res := &faultResponse{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
			edit(r, res)
			for k, v := range res.header {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(res.status)
			_, _ = w.Write(res.body)
		})
	}
}

// editJSON edits a JSON object body.
func (res *faultResponse) editJSON(edit func(map[string]any)) {
	var m map[string]any
	if json.Unmarshal(res.body, &m) != nil {
		return
	}
	edit(m)
	res.body, _ = json.Marshal(m)
}

// oauthError is the body's RFC 6749 error code, if any.
func (res *faultResponse) oauthError() string {
	var e struct{ Error string }
	_ = json.Unmarshal(res.body, &e)
	return e.Error
}

// noClock adapts a middleware that does not need the server's clock.
// prefixReturnTo brings back the check that let "/\t/evil" through: a
// return_to starting with "/" but not "//" and free of "\", CR and LF is
// followed after sign-in. It remembers each login's return_to by the state
// sent to the identity provider and rewrites the callback's Location.
func prefixReturnTo() func(http.Handler) http.Handler {
	var mu sync.Mutex
	byState := map[string]string{}
	naive := func(v string) bool {
		return strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//") && !strings.ContainsAny(v, "\\\r\n")
	}
	remember := rewriteResponse(route("GET", "/auth/login"), func(r *http.Request, res *faultResponse) {
		if loc, err := url.Parse(res.header.Get("Location")); err == nil && naive(r.URL.Query().Get("return_to")) {
			mu.Lock()
			byState[loc.Query().Get("state")] = r.URL.Query().Get("return_to")
			mu.Unlock()
		}
	})
	follow := rewriteResponse(route("GET", "/auth/callback"), func(r *http.Request, res *faultResponse) {
		mu.Lock()
		v, ok := byState[r.URL.Query().Get("state")]
		mu.Unlock()
		if ok && res.status == http.StatusFound {
			res.header.Set("Location", v)
		}
	})
	return func(next http.Handler) http.Handler { return remember(follow(next)) }
}

func noClock(mw func(http.Handler) http.Handler) func(clock.Clock) func(http.Handler) http.Handler {
	return func(clock.Clock) func(http.Handler) http.Handler { return mw }
}

func route(method, path string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Method == method && r.URL.Path == path }
}

// tokenEndpoints are where tokens are issued: the token endpoint and the
// device flow's polling endpoint.
func tokenEndpoints(r *http.Request) bool {
	return r.Method == "POST" && (r.URL.Path == "/oauth/token" || r.URL.Path == "/api/oauth/device/token")
}

// clientEndpoints are the endpoints that judge a client_id.
func clientEndpoints(r *http.Request) bool {
	return tokenEndpoints(r) || route("POST", "/api/oauth/device/code")(r)
}

func bearerPaths(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/mcp"
}

func renameError(from, to string) func(*http.Request, *faultResponse) {
	return func(_ *http.Request, res *faultResponse) {
		if res.oauthError() == from {
			res.editJSON(func(m map[string]any) { m["error"] = to })
		}
	}
}

func dropCookieAttr(attr string) func(*http.Request, *faultResponse) {
	return func(_ *http.Request, res *faultResponse) {
		cs := res.header.Values("Set-Cookie")
		res.header.Del("Set-Cookie")
		for _, c := range cs {
			var kept []string
			for _, part := range strings.Split(c, "; ") {
				if !strings.EqualFold(part, attr) {
					kept = append(kept, part)
				}
			}
			res.header.Add("Set-Cookie", strings.Join(kept, "; "))
		}
	}
}

// redirectAnyway sends every refused authorization request to its
// redirect_uri, registered or not (an open redirector).
func redirectAnyway(r *http.Request, res *faultResponse) {
	target := r.URL.Query().Get("redirect_uri")
	if res.status != http.StatusBadRequest || target == "" {
		return
	}
	res.status = http.StatusFound
	res.header = http.Header{"Location": {target + "?error=invalid_request&state=" + url.QueryEscape(r.URL.Query().Get("state"))}}
	res.body = nil
}

// bearerOf returns the token of an Authorization: Bearer header.
func bearerOf(r *http.Request) string {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return tok
}

func pingAs(res *faultResponse, sub string) {
	res.status = http.StatusOK
	res.header = http.Header{"Content-Type": {"application/json"}}
	res.body, _ = json.Marshal(map[string]string{"status": "ok", "user_id": sub})
}

// sessionCapableTokens re-signs every issued access token as a browser
// session token, as a server that does not tell the two apart would issue.
func sessionCapableTokens(_ *http.Request, res *faultResponse) {
	if res.status != http.StatusOK {
		return
	}
	res.editJSON(func(m map[string]any) {
		raw, _ := m["access_token"].(string)
		claims := jwt.MapClaims{}
		if _, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return []byte(faultKey), nil }, jwt.WithoutClaimsValidation()); err != nil {
			return
		}
		claims["token_use"] = "session"
		if signed, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(faultKey)); err == nil {
			m["access_token"] = signed
		}
	})
}

// clockAcceptsForms turns a form post to the test clock, from any origin,
// into the JSON request the server accepts, as a lax endpoint would.
func clockAcceptsForms(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/api/test/clock" {
			r.Header.Del("Origin")
			if r.Header.Get("Content-Type") == "application/x-www-form-urlencoded" {
				if err := r.ParseForm(); err == nil {
					b, _ := json.Marshal(map[string]string{"advance": r.PostForm.Get("advance")})
					r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
					r.Header.Set("Content-Type", "application/json")
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// acceptUnsigned lets through what the server refused if the token's header
// says alg "none", trusting its claims.
func acceptUnsigned(r *http.Request, res *faultResponse) {
	if res.status != http.StatusUnauthorized {
		return
	}
	claims := jwt.MapClaims{}
	tok, _, err := jwt.NewParser().ParseUnverified(bearerOf(r), claims)
	if err != nil || !strings.EqualFold(tok.Method.Alg(), "none") {
		return
	}
	sub, _ := claims.GetSubject()
	pingAs(res, sub)
}

// acceptExpired lets through a well-signed token the server refused for
// being expired by the server's own clock.
func acceptExpired(clk clock.Clock) func(http.Handler) http.Handler {
	return rewriteResponse(route("GET", "/api/ping"), func(r *http.Request, res *faultResponse) {
		if res.status != http.StatusUnauthorized {
			return
		}
		claims := jwt.MapClaims{}
		_, err := jwt.ParseWithClaims(bearerOf(r), claims, func(*jwt.Token) (any, error) { return []byte(faultKey), nil },
			jwt.WithValidMethods([]string{"HS256"}), jwt.WithTimeFunc(clk.Now))
		if !errors.Is(err, jwt.ErrTokenExpired) {
			return
		}
		sub, _ := claims.GetSubject()
		pingAs(res, sub)
	})
}

// --- Request-editing faults ------------------------------------------------

// plainPKCE turns code_challenge_method=plain into the S256 request it
// would be equivalent to, so the server accepts it.
func plainPKCE(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Method == "GET" && r.URL.Path == "/oauth/authorize" && q.Get("code_challenge_method") == "plain" {
			q.Set("code_challenge_method", "S256")
			q.Set("code_challenge", pkce.S256(q.Get("code_challenge")))
			r.URL.RawQuery = q.Encode()
		}
		next.ServeHTTP(w, r)
	})
}

func queryToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok := r.URL.Query().Get("access_token"); tok != "" && r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		next.ServeHTTP(w, r)
	})
}

func caseSensitiveScheme(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only the Bearer scheme's spelling is at fault; Basic and DPoP pass.
		if a := r.Header.Get("Authorization"); a != "" && !strings.HasPrefix(a, "Bearer ") && !strings.HasPrefix(a, "Basic ") && !strings.HasPrefix(a, "DPoP ") {
			r.Header.Set("Authorization", "Unknown scheme")
		}
		next.ServeHTTP(w, r)
	})
}

// replaceBody gives r a new body.
func replaceBody(r *http.Request, b []byte) {
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]*)"`)

// forgeCSRF completes a consent approval posted without its CSRF token with
// a valid one, fetched from the consent page as the same browser.
func forgeCSRF(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/oauth/authorize" {
			next.ServeHTTP(w, r)
			return
		}
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		form, _ := url.ParseQuery(string(b))
		if form.Get("csrf_token") == "" {
			q := url.Values{}
			for k, v := range form {
				if k != "action" {
					q[k] = v
				}
			}
			page := httptest.NewRequest("GET", "/oauth/authorize?"+q.Encode(), nil)
			page.Header.Set("Cookie", r.Header.Get("Cookie"))
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, page)
			if m := csrfField.FindSubmatch(rec.Body.Bytes()); m != nil {
				form.Set("csrf_token", html.UnescapeString(string(m[1])))
				b = []byte(form.Encode())
			}
		}
		replaceBody(r, b)
		next.ServeHTTP(w, r)
	})
}

// httpRedirectURIs registers http redirect URIs on public hosts by passing
// them to the server as https and answering with the original.
func httpRedirectURIs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/oauth/register" {
			next.ServeHTTP(w, r)
			return
		}
		b, _ := io.ReadAll(io.LimitReader(r.Body, 2<<20))
		var body map[string]any
		var swapped []string
		if json.Unmarshal(b, &body) == nil {
			if uris, ok := body["redirect_uris"].([]any); ok {
				for i, u := range uris {
					s, _ := u.(string)
					if pu, err := url.Parse(s); err == nil && pu.Scheme == "http" && !faultLoopbackHost(pu.Hostname()) {
						uris[i] = "https" + strings.TrimPrefix(s, "http")
						swapped = append(swapped, s)
					}
				}
				b, _ = json.Marshal(body)
			}
		}
		replaceBody(r, b)
		if len(swapped) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		rewriteResponse(func(*http.Request) bool { return true }, func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) { m["redirect_uris"] = swapped })
		})(next).ServeHTTP(w, r)
	})
}

func faultLoopbackHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "localhost" || ip != nil && ip.IsLoopback()
}

// --- Store wrappers --------------------------------------------------------

// reusableCodes forgets that a code was used.
type reusableCodes struct{ store.Store }

func (s reusableCodes) GetAuthCode(ctx context.Context, hash string) (store.AuthCode, error) {
	c, err := s.Store.GetAuthCode(ctx, hash)
	c.Used = false
	return c, err
}

func (s reusableCodes) ConsumeAuthCode(ctx context.Context, hash string, r store.Redemption) (store.AuthCode, error) {
	c, err := s.Store.ConsumeAuthCode(ctx, hash, r)
	if errors.Is(err, store.ErrAlreadyUsed) {
		return c, nil
	}
	return c, err
}

// noRevocation drops revocations.
type noRevocation struct{ store.Store }

func (noRevocation) RevokeToken(context.Context, string, time.Time) error { return nil }

// longCodes reports every authorization code as valid for another hour.
type longCodes struct{ store.Store }

func (s longCodes) GetAuthCode(ctx context.Context, hash string) (store.AuthCode, error) {
	c, err := s.Store.GetAuthCode(ctx, hash)
	c.ExpiresAt = c.ExpiresAt.Add(time.Hour)
	return c, err
}

func (s longCodes) ConsumeAuthCode(ctx context.Context, hash string, r store.Redemption) (store.AuthCode, error) {
	r.Now = r.Now.Add(-time.Hour) // the expiry check sees a time an hour earlier
	return s.Store.ConsumeAuthCode(ctx, hash, r)
}

// deviceEdit tampers with device code updates: seen edits the record the
// server decides on, written what is stored afterwards. Either may be nil.
type deviceEdit struct {
	store.Store
	seen    func(d *store.DeviceCode)
	written func(stored store.DeviceCode, out *store.DeviceCode)
}

func (s deviceEdit) UpdateDeviceCode(ctx context.Context, hash string, fn func(store.DeviceCode) (store.DeviceCode, error)) (store.DeviceCode, error) {
	return s.Store.UpdateDeviceCode(ctx, hash, func(stored store.DeviceCode) (store.DeviceCode, error) {
		in := stored
		if s.seen != nil {
			s.seen(&in)
		}
		out, err := fn(in)
		if s.written != nil {
			s.written(stored, &out)
		}
		return out, err
	})
}

// keepOldKeys keeps every replaced API key findable.
type keepOldKeys struct {
	store.Store
	mu  sync.Mutex
	old map[string]store.APIKey
}

func (s *keepOldKeys) SetAPIKey(ctx context.Context, k store.APIKey) error {
	if prev, err := s.Store.GetAPIKeyByUser(ctx, k.UserID); err == nil {
		s.mu.Lock()
		s.old[prev.Hash] = prev
		s.mu.Unlock()
	}
	return s.Store.SetAPIKey(ctx, k)
}

func (s *keepOldKeys) GetAPIKeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	k, err := s.Store.GetAPIKeyByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if prev, ok := s.old[hash]; ok {
			return prev, nil
		}
	}
	return k, err
}

// --- Refresh and revocation faults ----------------------------------------

// formOf parses r's form and gives r its body back, so a middleware can read
// a form and still pass the request on.
func formOf(r *http.Request) url.Values {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	replaceBody(r, b)
	f, _ := url.ParseQuery(string(b))
	r.PostForm = f
	return f
}

// refreshRequests are refresh grants at the token endpoint; matching parses
// the form into r.PostForm for the edit.
func refreshRequests(r *http.Request) bool {
	return route("POST", "/oauth/token")(r) && formOf(r).Get("grant_type") == "refresh_token"
}

// actAsOwner remembers which client each refresh and access token was issued
// to, and on path (the token or revocation endpoint) presents a token as its
// owner whoever sends it, as a server that does not bind tokens to clients.
func actAsOwner(path string) func(http.Handler) http.Handler {
	var mu sync.Mutex
	owner := map[string]string{}
	learn := rewriteResponse(tokenEndpoints, func(r *http.Request, res *faultResponse) {
		cid := r.PostForm.Get("client_id") // parsed before the server read the body
		if res.status != http.StatusOK || cid == "" {
			return
		}
		var m map[string]any
		_ = json.Unmarshal(res.body, &m)
		mu.Lock()
		defer mu.Unlock()
		for _, k := range []string{"refresh_token", "access_token"} {
			if tok, _ := m[k].(string); tok != "" {
				owner[tok] = cid
			}
		}
	})
	return func(next http.Handler) http.Handler {
		inner := learn(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tokenEndpoints(r) {
				formOf(r)
			}
			if r.Method == http.MethodPost && r.URL.Path == path {
				f := formOf(r)
				tok := f.Get("token")
				if path == "/oauth/token" {
					tok = f.Get("refresh_token")
				}
				mu.Lock()
				cid, ok := owner[tok]
				mu.Unlock()
				if ok {
					f.Set("client_id", cid)
					replaceBody(r, []byte(f.Encode()))
				}
			}
			inner.ServeHTTP(w, r)
		})
	}
}

// revokeRequests are posts to the revocation endpoint; matching parses the
// form into r.PostForm for the edit.
func revokeRequests(r *http.Request) bool {
	return route("POST", "/oauth/revoke")(r) && formOf(r) != nil
}

// revokeOther hands the revocation endpoint an unknown token in place of the
// tokens ignore picks, so they are never revoked while the answer stays 200.
func revokeOther(ignore func(tok string) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if route("POST", "/oauth/revoke")(r) {
				if f := formOf(r); ignore(f.Get("token")) {
					f.Set("token", "ignored")
					replaceBody(r, []byte(f.Encode()))
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// noFamilyRevocation revokes no refresh token family.
type noFamilyRevocation struct{ store.Store }

func (noFamilyRevocation) RevokeRefreshFamily(context.Context, string) ([]store.RevokedToken, error) {
	return nil, nil
}

// editRegistration edits the JSON body of registration requests before the
// server reads it.
func editRegistration(edit func(map[string]any)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if route("POST", "/oauth/register")(r) {
				b, _ := io.ReadAll(io.LimitReader(r.Body, 2<<20))
				var m map[string]any
				if json.Unmarshal(b, &m) == nil && m != nil {
					edit(m)
					b, _ = json.Marshal(m)
				}
				replaceBody(r, b)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// --- Metadata document faults ----------------------------------------------

// proxiedDoc is a document on its way from the suite's host to the server.
type proxiedDoc struct {
	status      int
	contentType string
	location    string
	body        []byte
	// follow: fetch the Location of a redirect and hand that over instead.
	follow bool
}

func (d *proxiedDoc) editJSON(edit func(map[string]any)) {
	var m map[string]any
	if json.Unmarshal(d.body, &m) != nil || m == nil {
		return
	}
	edit(m)
	d.body, _ = json.Marshal(m)
}

// documentProxy is a fault in the server's document fetching: its resolver
// sends 127.0.0.1 to a TLS proxy on 127.0.0.2 at the suite host's port,
// which fetches each document from the suite's host and lets edit change it
// before the server judges it, as a server that skipped a rule would see it.
func documentProxy(edit func(url string, d *proxiedDoc)) cimdSetup {
	return func(t *testing.T, host *conformance.DocumentHost) (server.MetadataDocumentConfig, bool) {
		hu, _ := url.Parse(host.URL())
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", hu.Port()))
		if err != nil {
			t.Skipf("no second loopback address for the document proxy: %v", err)
		}
		fetch := &http.Client{
			Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: host.CertPool()}},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       5 * time.Second,
		}
		get := func(u string) (*proxiedDoc, error) {
			resp, err := fetch.Get(u)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			return &proxiedDoc{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), location: resp.Header.Get("Location"), body: b}, nil
		}
		proxy := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u := host.URL() + r.URL.RequestURI()
			d, err := get(u)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			edit(u, d)
			if d.follow && d.location != "" {
				if d, err = get(d.location); err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
					return
				}
			}
			if d.location != "" {
				w.Header().Set("Location", d.location)
			}
			w.Header().Set("Content-Type", d.contentType)
			w.WriteHeader(d.status)
			_, _ = w.Write(d.body)
		}))
		proxy.Listener.Close()
		proxy.Listener = ln
		proxy.StartTLS()
		t.Cleanup(proxy.Close)
		pool := host.CertPool().Clone()
		pool.AddCert(proxy.Certificate())
		return server.MetadataDocumentConfig{
			AllowPrivateAddresses: true, RootCAs: pool,
			LookupIP: func(ctx context.Context, h string) ([]netip.Addr, error) {
				if h == "127.0.0.1" {
					return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
				}
				return net.DefaultResolver.LookupNetIP(ctx, "ip", h)
			},
		}, true
	}
}

// --- The mcp profile ---------------------------------------------------------

// The mcp profile passes against the reference server, started from its MCP
// endpoint; and each fault below makes exactly its checks fail.
func TestConformanceMCPProfile(t *testing.T) {
	run := func(t *testing.T, f fault) {
		clk := clock.NewOffset(nil)
		opts := local.Options{SigningKey: []byte(faultKey), Store: memory.New()}
		if f.wrap != nil {
			opts.Wrap = f.wrap(clk)
		}
		if f.store != nil {
			opts.Store = f.store(opts.Store)
		}
		target := startSuiteTargetCIMD(t, opts, clk, f.cimd)
		target.BaseURL += "/mcp"
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rep := conformance.RunChecks(ctx, target, conformance.MCPCatalogue(), conformance.Options{Parallel: 8})
		for _, r := range rep.Results {
			// A fault may take away what a check needs (a feature, a
			// working token): a skip then says so; the reference skips
			// nothing.
			skipped := r.Verdict == conformance.VerdictSkip && f.name != ""
			if r.Verdict != conformance.VerdictPass && !skipped && !slices.Contains(f.wantFail, r.ID) {
				t.Errorf("%s %s: %s", r.Verdict, r.ID, r.Reason)
			}
			if slices.Contains(f.wantFail, r.ID) && r.Verdict != conformance.VerdictFail && r.Verdict != conformance.VerdictWarn && r.Verdict != conformance.VerdictInfo {
				t.Errorf("%s: %s, want a failure (%s)", r.ID, r.Verdict, r.Reason)
			}
		}
	}
	t.Run("reference", func(t *testing.T) { t.Parallel(); run(t, fault{}) })
	for _, f := range mcpProfileFaults() {
		t.Run(f.name, func(t *testing.T) { t.Parallel(); run(t, f) })
	}
}

func mcpProfileFaults() []fault {
	byName := map[string]fault{}
	for _, f := range faults() {
		byName[f.name] = f
	}
	reuse := func(name string, wantFail ...string) fault {
		f := byName[name]
		if f.name == "" {
			panic("no fault " + name)
		}
		f.wantFail = wantFail
		return f
	}
	prm := "/.well-known/oauth-protected-resource"
	return []fault{
		reuse("no WWW-Authenticate", "MCP-01", "MCP-14", "MCP-16", "MCP-21", "MCP-22", "MCP-26"),
		reuse("challenge without error=invalid_token", "MCP-21"),
		{name: "path-inserted resource is the base URL", wrap: noClock(rewriteResponse(route("GET", prm+"/mcp"), func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) { m["resource"] = strings.TrimSuffix(fmt.Sprint(m["resource"]), "/mcp") })
		})), wantFail: []string{"MCP-02"}},
		// The challenge names the root location: without it, MCP-16 fails
		// too; MCP-03 alone would be information.
		{name: "no root resource metadata", wrap: noClock(rewriteResponse(route("GET", prm), func(_ *http.Request, res *faultResponse) {
			res.status, res.body = http.StatusNotFound, []byte(`{"error":"not_found"}`)
		})), wantFail: []string{"MCP-03", "MCP-16"}},
		reuse("resource is the base URL", "MCP-16"),
		reuse("resource metadata without scopes_supported", "MCP-17"),
		reuse("issuer with a trailing slash", "MCP-04", "MCP-33"),
		reuse("plain advertised beside S256", "MCP-30"),
		{name: "S256 not advertised", wrap: noClock(rewriteResponse(route("GET", "/.well-known/oauth-authorization-server"), func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) { delete(m, "code_challenge_methods_supported") })
		})), wantFail: []string{"MCP-05"}},
		{name: "PKCE optional", wrap: noClock(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if q := r.URL.Query(); r.URL.Path == "/oauth/authorize" && q.Has("client_id") && !q.Has("code_challenge") {
					q.Set("code_challenge", pkce.S256(strings.Repeat("v", 43)))
					q.Set("code_challenge_method", "S256")
					r.URL.RawQuery = q.Encode()
				}
				next.ServeHTTP(w, r)
			})
		}), wantFail: []string{"MCP-06"}},
		reuse("plain PKCE accepted", "MCP-44"),
		{name: "MCP endpoint answers a bad token with 500", wrap: noClock(rewriteResponse(func(r *http.Request) bool {
			return r.URL.Path == "/mcp" && r.Header.Get("Authorization") != ""
		}, func(_ *http.Request, res *faultResponse) {
			if res.status == http.StatusUnauthorized {
				res.status, res.body = http.StatusInternalServerError, []byte(`{"error":"server_error"}`)
				res.header.Del("WWW-Authenticate")
			}
		})), wantFail: []string{"MCP-14", "MCP-21", "MCP-22", "MCP-24", "MCP-26"}},
		// Every check that uses a token at the endpoint.
		{name: "MCP endpoint refuses tokens", wrap: noClock(rewriteResponse(func(r *http.Request) bool {
			return r.URL.Path == "/mcp" && r.Header.Get("Authorization") != ""
		}, func(_ *http.Request, res *faultResponse) {
			res.status, res.body = http.StatusUnauthorized, nil
		})), wantFail: []string{"MCP-07", "MCP-61", "MCP-66", "MCP-74", "MCP-75", "MCP-78"}},
		{name: "iss dropped from the authorization response", wrap: noClock(rewriteResponse(route("POST", "/oauth/authorize"), func(_ *http.Request, res *faultResponse) {
			if u, err := url.Parse(res.header.Get("Location")); err == nil {
				q := u.Query()
				q.Del("iss")
				u.RawQuery = q.Encode()
				res.header.Set("Location", u.String())
			}
		})), wantFail: []string{"MCP-09"}},
		{name: "application_type changed", wrap: noClock(rewriteResponse(route("POST", "/oauth/register"), func(_ *http.Request, res *faultResponse) {
			res.editJSON(func(m map[string]any) { m["application_type"] = "web" })
		})), wantFail: []string{"MCP-10"}},
		reuse("http redirect URI on a public host registered", "MCP-41"),
		{name: "any code_verifier accepted", store: func(s store.Store) store.Store { return anyVerifier{s} },
			wantFail: []string{"MCP-08"}},
		reuse("metadata document clients refused", "MCP-11"),
		reuse("metadata document client_id not compared with its URL", "MCP-42"),
		reuse("unregistered redirect URI followed", "MCP-42", "MCP-43", "MCP-47", "MCP-48", "MCP-50"),
		reuse("missing response_type means code", "MCP-83"),
		reuse("code usable twice", "MCP-60", "MCP-61"),
		reuse("code expiry ignored", "MCP-82"),
		reuse("expires_in missing", "MCP-81"),
		reuse("refresh token not rotated", "MCP-12"),
		reuse("spent refresh token answered again (reuse grace period)", "MCP-12", "MCP-68"),
		reuse("refreshed access token does not work", "MCP-66"),
		reuse("refresh token of another client accepted", "MCP-69"),
		reuse("refresh families never revoked", "MCP-68", "MCP-70"),
		reuse("refresh widens the scope", "MCP-67"),
		reuse("revocation ignores refresh tokens", "MCP-70"),
		reuse("revoking an unknown token is an error", "MCP-71"),
		reuse("revocation ignores access tokens", "MCP-72"),
		reuse("code replay revokes nothing", "MCP-72"),
		reuse("token in the query string accepted", "MCP-13"),
		reuse("token in the query string accepted on /mcp", "MCP-13"),
		reuse("auth scheme case-sensitive", "MCP-78"),
		{name: "Mcp-Method header not checked", wrap: noClock(mcpMethodIgnored), wantFail: []string{"MCP-76", "MCP-77"}},
		{name: "resource ignored at the token endpoint", wrap: noClock(tokenResourceIgnored), wantFail: []string{"MCP-65"}},
		{name: "implicit grant issues a token", wrap: noClock(implicitGranted), wantFail: []string{"MCP-51"}},
		{name: "error forwarded to any redirect URI, one hop away", wrap: noClock(errorForwardedToAnyRedirect),
			wantFail: []string{"MCP-42", "MCP-43", "MCP-47", "MCP-48", "MCP-50"}},
	}
}

// widenRefreshScope grants a refresh whatever scope it asks for, as a
// server that skips RFC 6749 §6's check would: the server sees the request
// without the scope (so it issues the original grant) and the answer
// claims the scope asked for.
func widenRefreshScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !refreshRequests(r) || r.PostForm.Get("scope") == "" {
			next.ServeHTTP(w, r)
			return
		}
		asked := r.PostForm.Get("scope")
		f := r.PostForm
		f.Del("scope")
		replaceBody(r, []byte(f.Encode()))
		rewriteResponse(func(*http.Request) bool { return true }, func(_ *http.Request, res *faultResponse) {
			if res.status == http.StatusOK {
				res.editJSON(func(m map[string]any) { m["scope"] = asked })
			}
		})(next).ServeHTTP(w, r)
	})
}

// anyVerifier redeems every code as if the presented verifier matched its
// challenge: PKCE not checked at the token endpoint.
type anyVerifier struct{ store.Store }

func (s anyVerifier) ConsumeAuthCode(ctx context.Context, hash string, r store.Redemption) (store.AuthCode, error) {
	if c, err := s.Store.GetAuthCode(ctx, hash); err == nil {
		r.CodeChallenge = c.CodeChallenge
	}
	return s.Store.ConsumeAuthCode(ctx, hash, r)
}
