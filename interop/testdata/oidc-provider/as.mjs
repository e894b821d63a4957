// node-oidc-provider as the authorization server of one MCP resource, for
// mcpauth's interop lab (interop/oidcprovider_test.go). The provider runs
// with its own development sign-in and consent pages (devInteractions) and
// everything the lab exercises switched on: dynamic registration, the
// device flow, client credentials, introspection, revocation and RFC 8707
// resource indicators, with JWT access tokens whose audience is the MCP
// resource, so the lab's MCP server checks them against the JWKS alone.
//
// Environment (set by the Go test):
//   AS_ISSUER       http://127.0.0.1:<port>, the port of the socket on fd 3
//   MCP_RESOURCE    the only resource tokens are issued for (anything else
//                   is invalid_target)
//   ACCESS_TTL      access token lifetime in seconds
//   CC_CLIENT_ID, CC_CLIENT_SECRET  a pre-registered confidential client
//                   for the client credentials grant
import Provider, { errors } from 'oidc-provider';

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`as.mjs: ${name} is required`);
    process.exit(2);
  }
  return v;
};
const issuer = env('AS_ISSUER');
const resource = env('MCP_RESOURCE');
const accessTTL = Number(env('ACCESS_TTL'));

const provider = new Provider(issuer, {
  clients: [{
    client_id: env('CC_CLIENT_ID'),
    client_secret: env('CC_CLIENT_SECRET'),
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
  }],
  scopes: ['openid', 'offline_access', 'mcp'],
  features: {
    registration: { enabled: true },
    deviceFlow: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // A request without resource gets the MCP resource, as the only one.
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (indicator !== resource) {
          throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        }
        return {
          scope: 'mcp',
          audience: resource,
          accessTokenTTL: accessTTL,
          accessTokenFormat: 'jwt',
        };
      },
    },
  },
  // A refresh token for every client allowed the grant, not only for
  // offline_access requested with prompt=consent (the provider's default).
  issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  // Public clients' refresh tokens rotate on every use (the default);
  // reusing a rotated one revokes the grant, so concurrent refreshes by
  // separate processes must be serialised by the client.
  ttl: { AccessToken: accessTTL, ClientCredentials: accessTTL },
});
provider.proxy = false;

provider.on('server_error', (_ctx, err) => console.error('server_error', err));
// The lab counts refresh grants in this output (interop/node_test.go).
provider.on('grant.success', (ctx) => {
  if (ctx.oidc.params.grant_type === 'refresh_token') console.log('GRANT refresh_token');
});
// The lab counts sign-ins, the posts of the login form, in this output
// (interop/oidcbrowser_test.go).
provider.use(async (ctx, next) => {
  await next();
  if (ctx.method === 'POST' && ctx.oidc && ctx.oidc.body && ctx.oidc.body.prompt === 'login') console.log('SIGN-IN POST');
});
provider.listen({ fd: 3 }, () => console.log(`oidc-provider listening at ${issuer}`));
