// Better Auth with its OAuth 2.1 provider plugin (@better-auth/oauth-provider)
// as the authorization server of one MCP resource, for mcpauth's interop lab
// (interop/betterauth_test.go). Better Auth has no sign-in or consent pages
// of its own (the application hosts them), so this script serves plain HTML
// ones that a browser without JavaScript can submit: they hand the signed
// authorization query (oauth_query) back to Better Auth's own endpoints,
// which check it. Everything else is the plugin's defaults, with what the
// lab exercises switched on: unauthenticated dynamic registration (as MCP
// clients need), the device flow (oauthDeviceAuthorization), RFC 8707
// resource-bound JWT access tokens for the MCP resource (the JWT plugin),
// and a pre-registered confidential client for the client credentials
// grant. The database is Better Auth's in-memory adapter.
//
// Environment (set by the Go test):
//   AS_ORIGIN       http://127.0.0.1:<port>, the port of the socket on fd 3;
//                   Better Auth's issuer is this plus its base path, /api/auth
//   MCP_RESOURCE    the protected resource tokens are issued for
//   ACCESS_TTL      access token lifetime in seconds
//   MACHINE_CLIENT_FILE  where to write the client credentials client's
//                   id and secret (JSON, mode 0600): the plugin generates both
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { betterAuth } from 'better-auth';
import { memoryAdapter } from 'better-auth/adapters/memory';
import { getAuthTables } from 'better-auth/db';
import { jwt } from 'better-auth/plugins';
import { oauthDeviceAuthorization, oauthProvider, oauthProviderAuthServerMetadata, oauthProviderOpenIdConfigMetadata } from '@better-auth/oauth-provider';

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`as.mjs: ${name} is required`);
    process.exit(2);
  }
  return v;
};
const origin = env('AS_ORIGIN');
const resource = env('MCP_RESOURCE');
const accessTTL = Number(env('ACCESS_TTL'));
const machineClientFile = env('MACHINE_CLIENT_FILE');

// The lab's user; the sign-in page takes a user name and makes it an email.
const user = { name: 'alice', email: 'alice@example.test', password: 'alice-password' };

const options = {
  baseURL: origin,
  secret: randomBytes(32).toString('hex'),
  telemetry: { enabled: false },
  emailAndPassword: { enabled: true },
  plugins: [
    jwt(),
    oauthProvider({
      loginPage: `${origin}/sign-in`,
      consentPage: `${origin}/consent`,
      scopes: ['openid', 'profile', 'email', 'offline_access', 'mcp'],
      resources: [resource],
      clientRegistrationDefaultResources: [resource],
      allowDynamicClientRegistration: true,
      allowUnauthenticatedClientRegistration: true,
      accessTokenExpiresIn: accessTTL,
      m2mAccessTokenExpiresIn: accessTTL,
      // Client credentials scopes are an administrator's to give (without
      // this RBAC hook nobody may); the lab's user administers clients.
      clientPrivileges: ({ user: who }) => who?.email === user.email,
    }),
    oauthDeviceAuthorization({ verificationUri: `${origin}/device` }),
  ],
};
// The memory adapter wants every table, the plugins' too, to exist.
const tables = Object.values(getAuthTables(options)).map((t) => [t.modelName, []]);
const auth = betterAuth({ ...options, database: memoryAdapter(Object.fromEntries(tables)) });

const authServerMetadata = oauthProviderAuthServerMetadata(auth);
const openIDConfig = oauthProviderOpenIdConfigMetadata(auth);

// toRequest makes a Fetch API request of a Node.js one, with its body read.
async function toRequest(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    for (const one of [].concat(v)) headers.append(k, one);
  }
  const init = { method: req.method, headers };
  if (req.method !== 'GET' && req.method !== 'HEAD') init.body = body;
  return { request: new Request(origin + req.url, init), body };
}

async function send(res, response) {
  const headers = {};
  response.headers.forEach((v, k) => { if (k !== 'set-cookie') headers[k] = v; });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers['set-cookie'] = cookies;
  res.writeHead(response.status, headers);
  res.end(Buffer.from(await response.arrayBuffer()));
}

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (title, body, status = 200) => new Response(
  `<!doctype html><html><head><title>${esc(title)}</title></head><body><h1>${esc(title)}</h1>${body}</body></html>`,
  { status, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } });
// failed is the error page for Better Auth's refusal.
const failed = async (what, response) => page('Error', `<p>${esc(what)}: ${esc(response.status)} ${esc(await response.text())}</p>`, response.status >= 400 ? response.status : 502);
const hidden = (name, value) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`;
const signInFields = '<label>User <input type="text" name="username"></label> <label>Password <input type="password" name="password"></label>';

// callAuth calls one of Better Auth's endpoints as the page's browser would
// (its cookies, a same-origin request), with a JSON body.
function callAuth(path, cookie, body) {
  const headers = { 'content-type': 'application/json', origin };
  if (cookie) headers.cookie = cookie;
  return auth.handler(new Request(`${origin}/api/auth${path}`, { method: 'POST', headers, body: JSON.stringify(body) }));
}

// redirectFrom turns Better Auth's answer to a page's POST (a redirect, or
// JSON naming where to go) into a redirect for the browser, keeping its
// cookies; anything else is shown as an error page.
async function redirectFrom(response, extraCookies = []) {
  const cookies = [...extraCookies, ...response.headers.getSetCookie()];
  let location = response.headers.get('location');
  let text = '';
  if (!location) {
    text = await response.text();
    try {
      const j = JSON.parse(text);
      location = j.redirect_uri || j.url;
    } catch { /* not JSON: shown below */ }
  }
  if (!location || response.status >= 400) {
    return page('Error', `<p>${esc(response.status)} ${esc(text)}</p>`, response.status >= 400 ? response.status : 502);
  }
  const headers = new Headers({ location, 'cache-control': 'no-store' });
  for (const c of cookies) headers.append('set-cookie', c);
  return new Response(null, { status: 302, headers });
}

// cookieHeader is the Cookie header a browser would send after these
// Set-Cookie headers, added to the one it sent.
function cookieHeader(sent, setCookies) {
  const parts = sent ? [sent] : [];
  for (const c of setCookies) parts.push(c.split(';')[0]);
  return parts.join('; ');
}

async function signIn(form, oauthQuery) {
  const body = { email: `${form.get('username')}@example.test`, password: form.get('password') ?? '' };
  if (oauthQuery) body.oauth_query = oauthQuery;
  return callAuth('/sign-in/email', '', body);
}

async function pages(request, form) {
  const url = new URL(request.url);
  const cookie = request.headers.get('cookie') ?? '';
  const query = url.search.slice(1);
  switch (`${request.method} ${url.pathname}`) {
    case 'GET /sign-in':
      return page('Sign in', `<form method="post" action="/sign-in">${hidden('oauth_query', query)}${signInFields}<button type="submit">Sign in</button></form>`);
    case 'POST /sign-in':
      return redirectFrom(await signIn(form, form.get('oauth_query')));
    case 'GET /consent':
      return page('Authorize', `<p>${esc(url.searchParams.get('client_id'))} asks for: ${esc(url.searchParams.get('scope'))}</p>`
        + `<form method="post" action="/consent">${hidden('oauth_query', query)}<button type="submit" name="accept" value="allow">Allow</button></form>`
        + `<form method="post" action="/consent">${hidden('oauth_query', query)}<button type="submit" name="accept" value="deny">Deny</button></form>`);
    case 'POST /consent':
      return redirectFrom(await callAuth('/oauth2/consent', cookie, { accept: form.get('accept') === 'allow', oauth_query: form.get('oauth_query') }));
    case 'GET /device':
      return page('Connect a device', `<form method="post" action="/device"><label>Code <input type="text" name="user_code" value="${esc(url.searchParams.get('user_code') ?? '')}"></label> ${signInFields}<button type="submit" name="action" value="approve">Approve</button></form>`);
    case 'POST /device': {
      const signedIn = await signIn(form);
      if (!signedIn.ok) return failed('sign-in', signedIn);
      const session = cookieHeader(cookie, signedIn.headers.getSetCookie());
      const userCode = form.get('user_code') ?? '';
      // The plugin wants the code looked up by the signed-in user (which
      // claims it for that session) before it is approved.
      const claimed = await auth.handler(new Request(`${origin}/api/auth/device?user_code=${encodeURIComponent(userCode)}`, { headers: { cookie: session } }));
      if (!claimed.ok) return failed('the code', claimed);
      const approved = await callAuth('/device/approve', cookieHeader(session, claimed.headers.getSetCookie()), { userCode });
      if (!approved.ok) return failed('approving', approved);
      return page('Device connected', '<p>You may close this page.</p>');
    }
  }
  return null;
}

async function handle(req, res) {
  const { request, body } = await toRequest(req);
  const path = new URL(request.url).pathname;
  let response;
  if (path === '/.well-known/oauth-authorization-server/api/auth') {
    response = await authServerMetadata(request);
  } else if (path === '/api/auth/.well-known/openid-configuration') {
    response = await openIDConfig(request);
  } else if (path.startsWith('/api/auth/')) {
    response = await auth.handler(request);
    // The lab counts refresh grants in this output (interop/node_test.go).
    if (path === '/api/auth/oauth2/token' && response.ok
      && new URLSearchParams(body.toString()).get('grant_type') === 'refresh_token') {
      console.log('GRANT refresh_token');
    }
  } else {
    const form = request.method === 'POST' ? new URLSearchParams(body.toString()) : null;
    response = await pages(request, form) ?? new Response('not found', { status: 404 });
  }
  await send(res, response);
}

await auth.api.signUpEmail({ body: user }).catch((e) => { console.error("signup", e); throw e; });
// The plugin creates clients for a signed-in user (here, the lab's).
const { headers: signedIn } = await auth.api.signInEmail({ body: { email: user.email, password: user.password }, returnHeaders: true }).catch((e) => { console.error("signin", e); throw e; });
const machine = await auth.api.adminCreateOAuthClient({
  headers: { cookie: cookieHeader('', signedIn.getSetCookie()) },
  body: {
    client_name: 'interop-machine',
    grant_types: ['client_credentials'],
    token_endpoint_auth_method: 'client_secret_basic',
    client_credentials_scopes: ['mcp'],
  },
});
writeFileSync(machineClientFile, JSON.stringify({ client_id: machine.client_id, client_secret: machine.client_secret }), { mode: 0o600 });

createServer((req, res) => {
  handle(req, res).catch((err) => {
    console.error('as.mjs:', err);
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('server error');
  });
}).listen({ fd: 3 }, () => console.log(`better-auth listening at ${origin}`));
