// The MCP TypeScript SDK's OAuth client, against a server under test
// (mcpauth serve, in server/tsclient_test.go). The Go test is the browser:
// this script prints "AUTHORIZE <url>" and reads the authorization code
// from stdin, then finishes auth() and calls the whoami tool over
// Streamable HTTP, printing "WHOAMI <text>". A client metadata document URL
// as the third argument makes it identify itself with that URL (CIMD)
// instead of registering.
//
// With MCP_CLIENT_AGAIN=1 (the interop lab, interop/tsclient_test.go) it
// then prints "AGAIN?", waits for a line on stdin (the test moves the
// server's clock meanwhile) and calls whoami again on a new connection,
// with the tokens it holds: refreshed if the server refuses the old one.
//
// Usage: node client.mjs <mcp-url> <redirect-url> [client-metadata-url]
import { createInterface } from "node:readline";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mcpURL, redirectURL, metadataURL] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const state = { client: undefined, tokens: undefined, verifier: undefined };
const provider = {
  get redirectUrl() { return redirectURL; },
  clientMetadataUrl: metadataURL || undefined,
  get clientMetadata() {
    return {
      client_name: "MCP TypeScript SDK client (mcpauth test)",
      redirect_uris: [redirectURL],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "mcp offline_access",
    };
  },
  clientInformation() { return state.client; },
  saveClientInformation(info) { state.client = info; console.log(`REGISTERED ${info.client_id}`); },
  tokens() { return state.tokens; },
  saveTokens(t) { state.tokens = t; console.log(`TOKENS refresh=${t.refresh_token ? "yes" : "no"}`); },
  redirectToAuthorization(url) { console.log(`AUTHORIZE ${url.href}`); },
  saveCodeVerifier(v) { state.verifier = v; },
  codeVerifier() { return state.verifier; },
};

// The SDK asks for the resource's scopes_supported (mcp); offline_access,
// which the authorization server lists, is asked for explicitly.
const scope = "mcp offline_access";
let result = await auth(provider, { serverUrl: mcpURL, scope });
if (result === "REDIRECT") {
  const { value: code } = await lines.next();
  result = await auth(provider, { serverUrl: mcpURL, scope, authorizationCode: code.trim() });
}
console.log(`AUTH ${result}`);
const client = new Client({ name: "mcpauth-test-ts-client", version: "0" });
await client.connect(new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider }));
const res = await client.callTool({ name: "whoami", arguments: {} });
console.log(`WHOAMI ${res.content.map((c) => c.text ?? "").join(" ")}`);
await client.close();
if (process.env.MCP_CLIENT_AGAIN === "1") {
  console.log("AGAIN?");
  await lines.next();
  const again = new Client({ name: "mcpauth-test-ts-client", version: "0" });
  await again.connect(new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider }));
  const res2 = await again.callTool({ name: "whoami", arguments: {} });
  console.log(`WHOAMI ${res2.content.map((c) => c.text ?? "").join(" ")}`);
  await again.close();
}
process.exit(0);
