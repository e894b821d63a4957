// Starts the MCP TypeScript SDK's example server, simpleStreamableHttp, with
// --oauth: the MCP server on MCP_PORT and its demo OAuth authorization
// server on MCP_AUTH_PORT (the example's own env vars; it defaults to 3000
// and 3001). The example runs unchanged; three adjustments are made from
// outside, so that tests may run it in parallel on a shared machine:
//
//   - MCP_LISTEN_FDS="PORT=FD,PORT=FD": listen(PORT) takes the already
//     listening socket inherited as FD instead of binding PORT again. The
//     Go test helper (internal/tsserver) opens both sockets on 127.0.0.1:0
//     and hands them over, so no other process can take a port between the
//     moment it is chosen and the moment node listens;
//   - any other listen(port) listens on 127.0.0.1 only (the example calls
//     listen(port), which is every interface);
//   - "localhost", which the example puts in its URLs and uses to reach its
//     own introspection endpoint, resolves to 127.0.0.1 first.
//
// By hand:
//   MCP_PORT=3000 MCP_AUTH_PORT=3001 node testdata/mcp-ts-server/serve.mjs
import dns from 'node:dns';
import net from 'node:net';

dns.setDefaultResultOrder('ipv4first');

const inherited = new Map();
for (const pair of (process.env.MCP_LISTEN_FDS ?? '').split(',').filter(Boolean)) {
  const [port, fd] = pair.split('=').map(Number);
  if (!Number.isInteger(port) || !Number.isInteger(fd)) {
    console.error(`serve.mjs: bad MCP_LISTEN_FDS entry ${JSON.stringify(pair)} (want PORT=FD)`);
    process.exit(2);
  }
  inherited.set(port, fd);
}

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const bare = typeof port === 'number' || (typeof port === 'string' && /^[0-9]+$/.test(port));
  if (bare && typeof args[1] !== 'string') {
    const fd = inherited.get(Number(port));
    if (fd !== undefined) {
      inherited.delete(Number(port));
      return listen.call(this, { fd }, ...args.slice(1));
    }
    args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};

if (!process.argv.includes('--oauth')) {
  process.argv.push('--oauth');
}
await import('@modelcontextprotocol/sdk/examples/server/simpleStreamableHttp.js');
