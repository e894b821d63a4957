// Package mcpsdk lets a client built on the Go MCP SDK
// (github.com/modelcontextprotocol/go-sdk) use the logins package creds
// keeps: give mcp.StreamableClientTransport the handler NewOAuthHandler
// returns (or take Handler.Transport), and each request carries the
// stored access token for that MCP server.
//
// What the handler adds to the SDK's own auth.AuthorizationCodeHandler,
// which registers a new client and sends the user to the browser whenever
// the server refuses a token:
//
//   - the logins the mcpauth CLI (or your program, through creds) stored,
//     shared with every other program on the machine;
//   - refresh under the cross-process lock creds takes, both ahead of
//     expiry and when the server refuses a token (401 invalid_token),
//     so a token the server's clock has expired costs no browser;
//   - a login only when refreshing cannot help, through the
//     Options.Login the caller supplies (a browser login with
//     flows.AuthCode, or the device flow with flows.Device);
//   - step-up on 403 insufficient_scope through Options.StepUp, bounded
//     to Options.MaxStepUps;
//   - the origin rule: the token goes to the origin of the MCP URL the
//     stored credential belongs to and nowhere else.
//
// The SDK sends "Authorization: Bearer": a DPoP-bound credential
// (RFC 9449) is refused with ErrDPoPBound, since an oauth2.TokenSource
// cannot sign a proof for each request. Use an http.Client from flows
// (flows.DPoP.Client) for those servers.
//
// It lives apart from creds so that programs which do not use the SDK do
// not link it.
package mcpsdk
