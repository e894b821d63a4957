package oauthwire

// GrantTypeClientCredentials is the RFC 6749 §4.4 grant type.
const GrantTypeClientCredentials = "client_credentials"

// GrantTypeJWTBearer is the RFC 7523 §2.1 grant type: a JWT issued by a
// party the authorization server trusts (a workload identity provider such
// as GitHub Actions OIDC, or an enterprise IdP's ID-JAG) stands for the
// authorization grant.
const GrantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// GrantTypeRefreshToken is the RFC 6749 §6 grant type.
const GrantTypeRefreshToken = "refresh_token"

// Token exchange identifiers (RFC 8693 §2.1, §3 and the ID-JAG draft).
const (
	GrantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"
	TokenTypeIDJAG         = "urn:ietf:params:oauth:token-type:id-jag"
)
