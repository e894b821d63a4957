// Package flows logs a program in to MCP servers: it discovers a server's
// authorization server (Discover), picks or registers a client
// (ResolveClient), runs a login (AuthCode in the user's browser, Device
// on another device, or a machine grant with GrantConfig), and refreshes,
// revokes and steps up the tokens it got (Refresh, Revoke, StepUp).
// Transport puts a credential on every request to an MCP server and
// renews it when refused; Confine keeps a credential on its server's
// origin, and DPoP binds tokens to a key. Package creds stores what a
// login got; the examples show each step against flows/flowstest.
//
// It never prints and never stores anything: user interaction goes through
// callbacks (OpenBrowser, ShowCode, OnPoll), persistence through
// RegistrationCache, time through a Clock, and HTTP through the caller's
// *http.Client. Config structs are usable at their zero value where that
// makes sense (nil client: http.DefaultClient; nil clock: RealClock).
//
// It speaks both the mcpauth service contract and any server following the
// MCP authorization specification (2025-11-25) and the RFCs it names.
//
// # Discovery
//
// Discover probes, recording every request in Discovery.Probes:
//
//  1. an unauthenticated MCP initialize POST to the MCP URL; a 401 Bearer
//     challenge may carry resource_metadata and scope (RFC 9728 §5.1);
//  2. protected resource metadata at the challenge's resource_metadata URL,
//     then path-inserted (/.well-known/oauth-protected-resource/mcp), then
//     at the root;
//  3. for each authorization server listed: RFC 8414 path-inserted
//     (/.well-known/oauth-authorization-server{path}), OpenID Connect
//     path-inserted (/.well-known/openid-configuration{path}), OpenID
//     Connect path-appended ({issuer}/.well-known/openid-configuration).
//
// Any 4xx, 5xx, non-JSON body, body over 1 MiB or network error moves on to
// the next candidate, except a refused connection: that host is not probed
// again, and a refusing MCP host ends discovery (ErrUnreachable). Without any protected resource metadata the base URL
// is taken as the authorization server (MCP 2025-03-26 behaviour); without
// its metadata either, and only when the MCP URL answered 401, the default
// endpoints {origin}/authorize, /token and /register, with a warning in
// Discovery.Warnings.
//
// Discovered documents are distrusted: the PRM resource must equal the target
// (compared canonically: lower-case scheme and host, no default port, no
// fragment, "/" equal to an empty path; any other trailing slash counts, per
// RFC 9728 §3.3), or, for the document at the root well-known location, be
// the origin or a path prefix of it (ResourceCovers); the metadata issuer must
// be identical to the issuer it was fetched for, character for character
// (RFC 8414 §3.3, as the iss of RFC 9207); every endpoint must be https or
// http on a loopback host; and code_challenge_methods_supported must contain
// S256 unless DiscoverConfig.AllowMissingS256. A metadata URL that redirects
// is not followed (RFC 8414 §3, RFC 9728 §3: the document is at that URL):
// its probe shows the Location, and discovery moves on.
//
// # Client identity
//
// ResolveClient uses, in order: a pre-registered client ID; a client ID
// metadata document URL when the server advertises
// client_id_metadata_document_supported; a cached registration for
// (issuer, resource) whose secret has not expired; a new RFC 7591
// registration. AuthCode and Device re-register once when the server answers
// invalid_client, if given a Reregister func.
//
// # Authorization code flow
//
// AuthCode listens on 127.0.0.1 (RFC 8252 §7.3) before opening the browser,
// sends state, an S256 PKCE challenge and the RFC 8707 resource, and answers
// each callback itself: the state is compared in constant time first, and a
// request with a wrong state or path gets a 400 and is ignored; then the
// RFC 9207 iss is checked; then the code or error is read. The steps are
// exported, as in golang.org/x/oauth2: AuthCodeConfig.NewRequest,
// AuthCodeConfig.Authorize (the front channel with an injected approver in
// place of the browser, as the conformance suite and the benchmark run it)
// and AuthCodeConfig.Exchange; DeviceConfig.Authorize and
// DeviceConfig.PollOnce likewise for the device flow.
//
// # Device flow and its two dialects
//
// Device speaks two dialects of RFC 8628:
//
//   - JSON (the service contract): JSON bodies {client_id, scope} to the
//     device authorization endpoint and {device_code, client_id, grant_type}
//     to the sibling endpoint ending in /api/oauth/device/token;
//   - form (RFC 8628): form-encoded bodies to device_authorization_endpoint,
//     polling the metadata's token_endpoint.
//
// The rule: JSON when the path of device_authorization_endpoint ends in
// /api/oauth/device/code, else form. DeviceConfig.Dialect overrides it.
// Polling follows RFC 8628 §3.5: wait interval (5 s if absent) before each
// poll; authorization_pending polls on; slow_down adds 5 s to every later
// interval; access_denied, expired_token and the local expiry each end the
// flow with their own error.
//
// # Machine grants and DPoP
//
// Without a user at a browser, GrantConfig drives the client credentials
// grant (ClientCredentials, RFC 6749 §4.4) and the JWT bearer grant
// (JWTBearer, RFC 7523 §2.1); Enterprise chains an RFC 8693 token exchange
// at the enterprise IdP (ID token for an ID-JAG, TokenExchange) with the
// JWT bearer grant, as the MCP enterprise-managed authorization extension
// describes. The client authenticates with client_secret_basic,
// client_secret_post or private_key_jwt (a Signer from LoadSigner: RFC 7523
// §3 assertion with iss = sub = client ID, aud the token endpoint or the
// issuer, a fresh jti, iat and a 60-second exp).
//
// With GrantConfig.DPoP every token request carries a fresh RFC 9449 proof
// (htm, htu, iat, jti, and the server's nonce once known), a use_dpop_nonce
// answer is retried once with the DPoP-Nonce it sent, and a token_type
// other than DPoP is an error (ErrNotDPoPBound). DPoP.Client wraps an
// *http.Client for resource requests: Authorization: DPoP, a proof with
// ath = base64url(SHA-256(token)), and the same single nonce retry.
//
// # Scope and registration
//
// The scope is the challenge's, else the PRM scopes_supported, plus
// offline_access exactly when the authorization server lists it
// (WithOfflineAccess). Registrations are native applications
// (application_type) with the refresh_token grant.
//
// # Refresh, revocation, step-up
//
// Refresh redeems a refresh token (RFC 6749 §6) with the RFC 8707 resource,
// keeping the old refresh token when the server does not rotate; a refused
// one matches ErrRefreshRefused. NeedsRefresh applies the 60 s margin.
// Locking across processes is the caller's (the CLI holds a file lock per
// stored entry). Revoke is RFC 7009. StepUp runs a call and, on a 403
// insufficient_scope with a scope, re-authorizes for the union of the
// granted and required scopes, at most twice, then returns *StepUpError.
//
// # Errors
//
// Server errors are *OAuthError. The sentinels (ErrAccessDenied,
// ErrExpiredToken, ErrDeviceCodeExpired, ErrStateMismatch, ErrIssuerMismatch,
// ErrTimeout, ErrUnauthorized, ...) are matched with errors.Is, so a caller can
// branch on them (the CLI maps them to exit codes).
package flows
