package server

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpauth/mcpauth/server/store"
)

const (
	maxRedirectURIs   = 10
	maxRedirectURILen = 2000
	maxClientNameLen  = 200
	// maxRegistrationBytes bounds the metadata one registration stores,
	// all strings together, below what the per-field bounds allow (ten
	// 2000-byte redirect URIs): registering is anonymous, and real clients
	// send a few hundred bytes.
	maxRegistrationBytes = 4096
)

// registrationRequest is RFC 7591 §2 client metadata. Fields are decoded one
// by one (see decodeRegistration) so a wrong type is invalid_client_metadata
// rather than a generic parse error, and unknown fields are ignored as
// RFC 7591 §2 requires.
type registrationRequest struct {
	ClientName              string
	RedirectURIs            []string
	GrantTypes              []string
	ResponseTypes           []string
	Scope                   string
	TokenEndpointAuthMethod string
	ApplicationType         string
}

type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	Scope                   string   `json:"scope"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ApplicationType         string   `json:"application_type"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
}

func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	if !hasMediaType(r, "application/json") {
		writeOAuthError(w, invalidRequest("Content-Type must be application/json"))
		return
	}
	req, oerr := decodeRegistration(r)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	if oerr := validateRegistration(&req, s.grants); oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	if n := req.storedBytes(); n > maxRegistrationBytes {
		writeOAuthError(w, newError(http.StatusBadRequest, errInvalidClientMetadata,
			"the client metadata is %d bytes; at most %d are stored per registration", n, maxRegistrationBytes))
		return
	}
	now := s.clock.Now()
	var c store.Client
	for range 3 { // a collision of 128 random bits will not happen; bound it anyway
		id, err := randomToken(16)
		if err != nil {
			s.serverError(w, r, "generating client id", err)
			return
		}
		c = store.Client{
			ID:                      id,
			Name:                    req.ClientName,
			RedirectURIs:            req.RedirectURIs,
			GrantTypes:              req.GrantTypes,
			ResponseTypes:           req.ResponseTypes,
			Scope:                   req.Scope,
			TokenEndpointAuthMethod: "none",
			ApplicationType:         req.ApplicationType,
			CreatedAt:               now,
		}
		err = s.store.CreateClient(r.Context(), c)
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrAlreadyExists) {
			s.serverError(w, r, "storing client", err)
			return
		}
	}
	writeJSON(w, http.StatusCreated, registrationResponse{
		ClientID:                c.ID,
		ClientName:              c.Name,
		RedirectURIs:            nonNil(c.RedirectURIs),
		GrantTypes:              c.GrantTypes,
		ResponseTypes:           nonNil(c.ResponseTypes),
		Scope:                   c.Scope,
		TokenEndpointAuthMethod: c.TokenEndpointAuthMethod,
		ApplicationType:         c.ApplicationType,
		ClientIDIssuedAt:        now.Unix(),
	})
}

// storedBytes is the size of the metadata a registration stores.
func (req *registrationRequest) storedBytes() int {
	n := len(req.ClientName) + len(req.Scope) + len(req.TokenEndpointAuthMethod) + len(req.ApplicationType)
	for _, list := range [][]string{req.RedirectURIs, req.GrantTypes, req.ResponseTypes} {
		for _, v := range list {
			n += len(v)
		}
	}
	return n
}

func decodeRegistration(r *http.Request) (registrationRequest, *oauthError) {
	var raw map[string]json.RawMessage
	if err := decodeJSONBody(r, &raw); err != nil {
		return registrationRequest{}, err
	}
	var req registrationRequest
	if bad := decodeFields(raw, []metadataField{
		{"client_name", &req.ClientName},
		{"redirect_uris", &req.RedirectURIs},
		{"grant_types", &req.GrantTypes},
		{"response_types", &req.ResponseTypes},
		{"scope", &req.Scope},
		{"token_endpoint_auth_method", &req.TokenEndpointAuthMethod},
		{"application_type", &req.ApplicationType},
	}); bad != "" {
		return req, newError(http.StatusBadRequest, errInvalidClientMetadata, "%s has the wrong type", bad)
	}
	return req, nil
}

// metadataField is a client metadata member (RFC 7591 §2) and where it goes.
type metadataField struct {
	name string
	dst  any
}

// decodeFields decodes each present, non-null field of raw into its dst and
// returns the name of the first one of the wrong type, or "".
func decodeFields(raw map[string]json.RawMessage, fields []metadataField) string {
	for _, f := range fields {
		v, ok := raw[f.name]
		if !ok || string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, f.dst); err != nil {
			return f.name
		}
	}
	return ""
}

// validClientName: at most maxClientNameLen printable characters, for
// registration and metadata documents alike.
func validClientName(name string) bool {
	return utf8.RuneCountInString(name) <= maxClientNameLen && utf8.ValidString(name) && strings.IndexFunc(name, unicode.IsControl) < 0
}

// validateRegistration applies decisions.md "Registration", with the
// grants of grants, and fills defaults.
func validateRegistration(req *registrationRequest, grants grantRegistry) *oauthError {
	bad := func(format string, args ...any) *oauthError {
		return newError(http.StatusBadRequest, errInvalidClientMetadata, format, args...)
	}
	req.ClientName = strings.TrimSpace(req.ClientName)
	if !validClientName(req.ClientName) {
		return bad("client_name must be at most %d printable characters", maxClientNameLen)
	}
	if len(req.GrantTypes) == 0 {
		req.GrantTypes = []string{grantAuthCode}
	}
	for _, name := range req.GrantTypes {
		switch g := grants.lookup(name); {
		case g == nil:
			return bad("unsupported grant type %q; supported: %s", name, strings.Join(grants.names(), ", "))
		case g.clients&publicClients == 0:
			return bad("the %s grant is for confidential clients; clients registered here are public", name)
		}
	}
	req.GrantTypes = uniq(req.GrantTypes)
	if slices.Contains(req.GrantTypes, grantRefresh) && !slices.ContainsFunc(req.GrantTypes, func(name string) bool {
		return name != grantRefresh && grants.lookup(name).issuesRefresh
	}) {
		// Nothing would ever issue this client a refresh token.
		return bad("the refresh_token grant needs the %s grant", strings.Join(grants.refreshStarters(), " or "))
	}
	supported := grants.responseTypesFor(grants.names())
	for _, rt := range req.ResponseTypes {
		if !slices.Contains(supported, rt) {
			return bad("unsupported response type %q; supported: %s", rt, strings.Join(supported, ", "))
		}
	}
	// The response types are those that fit the grants, whatever the client
	// sent (decisions.md "Registration"): RFC 7591 §2.1 lets a server
	// correct metadata that does not fit together, and clients such as
	// mcp-remote --device-code send response_types ["code"] beside the
	// device grant alone.
	req.ResponseTypes = grants.responseTypesFor(req.GrantTypes)
	scope, oerr := normalizeScope(req.Scope)
	if oerr != nil {
		return bad("unsupported scope %q; supported: mcp, offline_access", truncate(req.Scope, 100))
	}
	req.Scope = scope
	if req.TokenEndpointAuthMethod != "" && req.TokenEndpointAuthMethod != "none" {
		return bad("token_endpoint_auth_method must be none: clients are public and use PKCE")
	}
	if g := grants.redirecting(req.GrantTypes); g != nil && len(req.RedirectURIs) == 0 {
		return newError(http.StatusBadRequest, errInvalidRedirectURI, "redirect_uris is required for the %s grant", g.name)
	}
	if len(req.RedirectURIs) > maxRedirectURIs {
		return newError(http.StatusBadRequest, errInvalidRedirectURI, "at most %d redirect_uris", maxRedirectURIs)
	}
	for _, u := range req.RedirectURIs {
		if reason := checkRedirectURI(u); reason != "" {
			return newError(http.StatusBadRequest, errInvalidRedirectURI, "redirect_uri %q: %s", truncate(u, 100), reason)
		}
	}
	return checkApplicationType(req)
}

// checkRedirectURI returns why u is not an acceptable redirect URI, or "".
// Allowed: https; http on a loopback host; a private-use scheme, which
// RFC 8252 §7.1 requires to be a reverse domain name (so it has a dot).
func checkRedirectURI(raw string) string {
	if len(raw) > maxRedirectURILen {
		return "too long"
	}
	if !utf8.ValidString(raw) || strings.IndexFunc(raw, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0 {
		return "contains spaces or control characters"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "not a valid URI"
	}
	if !u.IsAbs() {
		return "must be absolute"
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "must not contain a fragment"
	}
	if u.User != nil {
		return "must not contain user info"
	}
	switch u.Scheme {
	case "https":
		if u.Host == "" {
			return "https URI needs a host"
		}
	case "http":
		if !isLoopbackHost(u.Hostname()) {
			return "http is only allowed on a loopback host (127.0.0.1, [::1], localhost)"
		}
	default:
		if !strings.Contains(u.Scheme, ".") {
			return "scheme must be https, http on loopback, or a private-use reverse-domain scheme"
		}
	}
	return ""
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func uniq(in []string) []string {
	out := make([]string, 0, len(in))
	for _, v := range in {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
