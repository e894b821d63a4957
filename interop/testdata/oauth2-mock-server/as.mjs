// oauth2-mock-server as the authorization server of one MCP resource, for
// mcpauth's interop lab (interop/oauth2mock_test.go): OpenID Connect
// discovery only (no RFC 8414 metadata), no dynamic registration (any
// client id is taken as pre-registered), no consent page (/authorize
// redirects at once), JWT access tokens signed by a key in its JWKS.
//
// Two adjustments through its documented events, so the lab's MCP server
// can check its tokens: the audience is the RFC 8707 resource the client
// asked for (the mock ignores the parameter), and access tokens live
// ACCESS_TTL seconds (its default is an hour).
//
// Environment (set by the Go test):
//   AS_ISSUER    http://127.0.0.1:<port>, the port of the socket on fd 3
//   ACCESS_TTL   access token lifetime in seconds
import http from 'node:http';
import { OAuth2Server } from 'oauth2-mock-server';

const issuer = process.env.AS_ISSUER;
const ttl = Number(process.env.ACCESS_TTL);
if (!issuer || !ttl) {
  console.error('as.mjs: AS_ISSUER and ACCESS_TTL are required');
  process.exit(2);
}

const server = new OAuth2Server();
server.issuer.url = issuer;
await server.issuer.keys.generate('RS256');

server.service.on('beforeTokenSigning', (token, req) => {
  const resource = req.body?.resource;
  if (resource) {
    token.payload.aud = resource;
  }
  token.payload.exp = token.payload.iat + ttl;
});
server.service.on('beforeResponse', (response, req) => {
  if (response.body.expires_in) {
    response.body.expires_in = ttl;
  }
  // The lab counts refresh grants in this output (interop/node_test.go).
  if (req.body?.grant_type === 'refresh_token') console.log('GRANT refresh_token');
});

http.createServer(server.service.requestHandler).listen({ fd: 3 }, () => console.log(`oauth2-mock-server listening at ${issuer}`));
