package server

import (
	"net/http"
	"slices"
)

// Grant types the token endpoint serves: RFC 6749 §4.1.3, RFC 8628 §3.4
// and RFC 6749 §6.
const (
	grantAuthCode   = "authorization_code"
	grantDeviceCode = "urn:ietf:params:oauth:grant-type:device_code"
	grantRefresh    = "refresh_token"
	// grantClientCredentials is RFC 6749 §4.4, for machine clients only.
	grantClientCredentials = "client_credentials"
)

// grantHandler answers a token request for grant g with parameters p. It
// checks what is particular to its grant and hands the token to issue.
type grantHandler func(s *Server, w http.ResponseWriter, r *http.Request, p map[string]string, g *grantType)

// clientTypes is a set of RFC 6749 §2.1 client types.
type clientTypes uint8

const (
	// publicClients hold no secret: every client registered here
	// (token_endpoint_auth_method none) or named by a metadata document.
	publicClients clientTypes = 1 << iota
	// confidentialClients authenticate at the token endpoint; none can be
	// registered here, so a grant only they may use is never registered:
	// the operator lists them (Config.MachineClients).
	confidentialClients
)

// grantType is one grant the token endpoint serves.
type grantType struct {
	name  string // the grant_type value (a URN for extension grants)
	label string // its name in the "access token issued" log line and mcpauth_tokens_issued_total
	// handle checks a request for this grant; the token comes from issue.
	handle grantHandler
	// clients are the client types that may register and use the grant.
	clients clientTypes
	// issuesRefresh: the grant's access token comes with a refresh token
	// when the client may have one (grantsRefresh).
	issuesRefresh bool
	// responseType is the authorization endpoint's response_type whose
	// result the grant redeems, or "": a client registered for the grant
	// gets that response type and needs redirect URIs.
	responseType string
	// replayed, when set, is the invalid_grant description for the grant's
	// credential presented twice, which revokes what it issued (RFC 6749
	// §4.1.2); issue then checks the refresh family it started for such a
	// replay (replayedMeanwhile).
	replayed string
}

// grantRegistry is every grant the server serves, in the order its
// metadata lists them.
type grantRegistry []grantType

// newGrantRegistry is the one place grants are registered. The token
// endpoint's dispatch, the metadata's grant_types_supported and
// response_types_supported, registration and metadata documents all read
// it, so adding a grant is one entry here plus its handler. It is a
// function, not a package variable, so that each Server owns its registry
// (no global state), and because a variable would be an initialization
// cycle: the handlers reach the metadata document fetch, which reads it.
func newGrantRegistry() grantRegistry {
	return grantRegistry{
		{name: grantAuthCode, label: "authorization_code", handle: (*Server).exchangeCode, clients: publicClients,
			issuesRefresh: true, responseType: "code", replayed: "authorization code already used"},
		{name: grantDeviceCode, label: "device_code", handle: (*Server).pollDeviceToken, clients: publicClients, issuesRefresh: true},
		{name: grantRefresh, label: "refresh_token", handle: (*Server).refreshGrant, clients: publicClients, issuesRefresh: true},
	}
}

// machineGrants are the grants of operator-registered machine clients,
// added to the registry only when there are some (Config.MachineClients),
// so a server without any neither advertises nor serves them.
func machineGrants() grantRegistry {
	return grantRegistry{
		{name: grantClientCredentials, label: "client_credentials", handle: (*Server).clientCredentialsGrant, clients: confidentialClients},
	}
}

// lookup returns the grant named name, or nil.
func (reg grantRegistry) lookup(name string) *grantType {
	for i := range reg {
		if reg[i].name == name {
			return &reg[i]
		}
	}
	return nil
}

// names are the grant_type values, for grant_types_supported.
func (reg grantRegistry) names() []string {
	out := make([]string, len(reg))
	for i, g := range reg {
		out[i] = g.name
	}
	return out
}

// responseTypesFor is the response types the grants named pair with,
// without repeats, or nil if none does.
func (reg grantRegistry) responseTypesFor(names []string) []string {
	var out []string
	for _, n := range names {
		if g := reg.lookup(n); g != nil && g.responseType != "" && !slices.Contains(out, g.responseType) {
			out = append(out, g.responseType)
		}
	}
	return out
}

// redirecting returns the first of the grants named that redeems the
// authorization endpoint's result, so needs redirect URIs, or nil.
func (reg grantRegistry) redirecting(names []string) *grantType {
	for _, n := range names {
		if g := reg.lookup(n); g != nil && g.responseType != "" {
			return g
		}
	}
	return nil
}

// refreshStarters are the labels of the grants that issue a client's first
// refresh token: every grant that issues one except the refresh grant.
func (reg grantRegistry) refreshStarters() []string {
	var out []string
	for _, g := range reg {
		if g.issuesRefresh && g.name != grantRefresh {
			out = append(out, g.label)
		}
	}
	return out
}

// forPublicClients keeps the names of grants a public client may use, in
// order and without repeats, or returns nil if none is left.
func (reg grantRegistry) forPublicClients(names []string) []string {
	var out []string
	for _, n := range names {
		if g := reg.lookup(n); g != nil && g.clients&publicClients != 0 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
