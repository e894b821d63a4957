// Cloudflare's workers-oauth-provider in its one-Worker shape: the
// authorization server (dynamic registration, PKCE, RFC 8707 resources,
// rotating refresh tokens, opaque tokens kept in KV by hash) and its only
// resource, a small MCP server at /mcp that the provider guards. For
// mcpauth's interop lab (interop/workers_test.go).
//
// /authorize is the Worker's own, as the library wants: a sign-in and
// consent form (any name), approved with the library's consent helpers.
// The MCP server answers JSON-RPC with JSON (no SSE): initialize, ping,
// tools/list and tools/call whoami, which names the signed-in user.
//
// ACCESS_TTL (a wrangler --var) is the access token lifetime in seconds.
import { OAuthProvider } from '@cloudflare/workers-oauth-provider';

const html = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const defaultHandler = {
  async fetch(req, env) {
    const url = new URL(req.url);
    if (url.pathname !== '/authorize') return new Response('not found', { status: 404 });
    const oauth = env.OAUTH_PROVIDER;
    if (req.method === 'GET') {
      const request = await oauth.parseAuthRequest(req);
      const consent = await oauth.beginConsent(request);
      const scopes = (request.scope ?? []).map((s) => `<input type="hidden" name="scope" value="${html(s)}">`).join('');
      consent.headers.set('Content-Type', 'text/html; charset=utf-8');
      return new Response(`<!doctype html><title>Sign in</title>
<form method="post"><input type="hidden" name="handle" value="${html(consent.handle)}">${scopes}
<label>Name <input name="login"></label>
<button name="decision" value="approve">Allow</button> <button name="decision" value="deny">Deny</button></form>`, { headers: consent.headers });
    }
    const form = await req.formData();
    const handle = String(form.get('handle'));
    if (form.get('decision') !== 'approve') {
      const denied = await oauth.denyConsent(req, handle);
      return new Response(null, { status: 302, headers: denied.headers });
    }
    const user = String(form.get('login') || 'anonymous');
    const approved = await oauth.approveConsent(req, handle, { scope: form.getAll('scope').map(String) });
    const { redirectTo } = await oauth.completeAuthorization({
      request: approved.request, userId: user, metadata: {}, scope: approved.request.scope, props: { user },
    });
    approved.headers.set('Location', redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  },
};

const mcpHandler = {
  async fetch(req, env, ctx) {
    if (req.method !== 'POST') return new Response(null, { status: 405, headers: { Allow: 'POST' } });
    const msg = await req.json();
    if (msg.id === undefined) return new Response(null, { status: 202 });
    const reply = (result) => Response.json({ jsonrpc: '2.0', id: msg.id, result });
    switch (msg.method) {
      case 'initialize':
        return reply({ protocolVersion: msg.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'mcpauth-interop-worker', version: '1' } });
      case 'ping':
        return reply({});
      case 'tools/list':
        return reply({ tools: [{ name: 'whoami', description: 'the signed-in user', inputSchema: { type: 'object' } }] });
      case 'tools/call':
        return reply({ content: [{ type: 'text', text: JSON.stringify({ sub: ctx.props.user }) }] });
      default:
        return Response.json({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `method not found: ${msg.method}` } });
    }
  },
};

export default {
  async fetch(req, env, ctx) {
    const origin = new URL(req.url).origin;
    // The lab counts refresh grants in this output (interop/node_test.go).
    if (req.method === 'POST' && new URL(req.url).pathname === '/oauth/token') {
      const form = await req.clone().formData().catch(() => null);
      if (form?.get('grant_type') === 'refresh_token') console.log('GRANT refresh_token');
    }
    const provider = new OAuthProvider({
      apiRoute: '/mcp',
      apiHandler: mcpHandler,
      defaultHandler,
      authorizeEndpoint: '/authorize',
      tokenEndpoint: '/oauth/token',
      clientRegistrationEndpoint: '/oauth/register',
      scopesSupported: ['mcp', 'offline_access'],
      resourceMetadata: { resource: `${origin}/mcp`, authorization_servers: [origin] },
      requiredScopes: ['mcp'],
      accessTokenTTL: Number(env.ACCESS_TTL ?? 3600),
    });
    return provider.fetch(req, env, ctx);
  },
};
