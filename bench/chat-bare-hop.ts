// The chat benchmark's physical limit: one `node:http` hop that pipes each request to the fake
// upstream and its reply back, byte for byte, and does nothing else (no parsing, no storage). What
// the service adds beyond this is what its own work costs. UPSTREAM_ORIGIN=<fake origin>; prints
// `{"url": ...}` once listening on 127.0.0.1; stops on SIGTERM.
import { Agent, createServer, request, type IncomingHttpHeaders } from 'node:http';

const upstream = new URL(process.env.UPSTREAM_ORIGIN ?? '');
// Keep-alive to the upstream, as the service's own provider client keeps its sockets.
const agent = new Agent({ keepAlive: true, scheduling: 'lifo' });

/** The caller's headers minus those that describe the caller's own connection. */
function forwarded(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { host: _host, connection: _connection, 'keep-alive': _keepAlive, ...rest } = headers;
  return rest;
}

const server = createServer((req, res) => {
  const outgoing = request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: forwarded(req.headers), agent },
    (reply) => {
      const { connection: _connection, 'keep-alive': _keepAlive, ...headers } = reply.headers;
      res.writeHead(reply.statusCode ?? 502, headers);
      reply.pipe(res);
    },
  );
  outgoing.on('error', () => {
    res.destroy();
  });
  req.pipe(outgoing);
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  agent.destroy();
  process.exit(0);
});
