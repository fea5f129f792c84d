import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { Agent, createServer as createHttpServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, RequestOptions, Server as HttpServer } from 'node:http';
import { connect, createServer as createTcpServer } from 'node:net';
import type { AddressInfo, Server as TcpServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../../src/core/sandbox/egress-policy.js';
import { EgressProxy, type EgressRefusal } from '../../src/core/sandbox/egress-proxy.js';
import { waitFor } from '../helpers/wait-for.js';

// The sandbox's egress proxy on its Unix socket (CONTRACT §11, "No path back to the host"), with
// real HTTP servers on loopback addresses standing in for the outside world: Linux routes all of
// 127.0.0.0/8 to lo, so 127.0.0.3 and .4 are two allowed "hosts" and .5 one the policy refuses.

const execFileAsync = promisify(execFile);

interface Echo {
  server: HttpServer;
  host: string;
  port: number;
  /** Requests this server received, so a test can prove one never arrived. */
  seen: string[];
}

/** An HTTP server that answers with what it received: method, path, headers and body. */
async function startEcho(host: string, name: string): Promise<Echo> {
  const seen: string[] = [];
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push(`${request.method ?? ''} ${request.url ?? ''}`);
      const body = Buffer.concat(chunks).toString();
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ server: name, method: request.method, url: request.url, headers: request.headers, body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, host, port: (server.address() as AddressInfo).port, seen };
}

interface Reply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
  reused: boolean;
}

/** One request through the proxy's Unix socket, absolute-form as an HTTP client sends it to a proxy. */
function viaProxy(socketPath: string, url: string, options: RequestOptions & { body?: string } = {}): Promise<Reply> {
  const { body, ...rest } = options;
  return new Promise((resolve, reject) => {
    const request = httpRequest({ socketPath, path: url, headers: { host: URL.canParse(url) ? new URL(url).host : 'origin-form.invalid' }, ...rest }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString(), reused: request.reusedSocket });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** Reads from `socket` until `done` says the text so far is complete, or the socket ends. */
function readUntil(socket: Socket, done: (text: string) => boolean = () => false): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const finish = (): void => {
      socket.off('data', onData);
      resolve(text);
    };
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      if (done(text)) finish();
    };
    socket.on('data', onData);
    socket.once('close', finish);
    socket.once('error', reject);
  });
}

/** Opens a raw connection to the proxy and sends a CONNECT; returns the answer's head (or all of it). */
async function sendConnect(socketPath: string, authority: string): Promise<{ socket: Socket; answer: string }> {
  const socket = connect(socketPath);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  const answer = await readUntil(socket, (text) => text.startsWith('HTTP/1.1 200') && text.includes('\r\n\r\n'));
  return { socket, answer };
}

/** An HTTP exchange spoken through an established tunnel. */
function throughTunnel(socket: Socket, host: string, body: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ createConnection: () => socket, method: 'POST', path: '/tunnelled', headers: { host, connection: 'close' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString(), reused: false });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

function closed(socket: Socket): Promise<void> {
  return socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => { resolve(); }));
}

async function closeServer(server: HttpServer | TcpServer): Promise<void> {
  if ('closeAllConnections' in server) server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
}

describe('egress proxy', () => {
  let folder = '';
  let socketPath = '';
  let proxy: EgressProxy;
  let a: Echo;
  let b: Echo;
  let refusedTarget: Echo;
  let freePort = 0;
  const refusals: EgressRefusal[] = [];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'egress-proxy-'));
    socketPath = join(folder, 'proxy.sock');
    a = await startEcho('127.0.0.3', 'a');
    b = await startEcho('127.0.0.4', 'b');
    refusedTarget = await startEcho('127.0.0.5', 'refused');
    // A port on an allowed address with nothing listening: the proxy must answer 502, not hang.
    const probe = await startEcho('127.0.0.3', 'gone');
    freePort = probe.port;
    await closeServer(probe.server);
    const policy = createEgressPolicy({
      allow: [`127.0.0.3:${a.port}`, `127.0.0.4:${b.port}`, `127.0.0.3:${freePort}`, 'localhost'],
      protectedPorts: [],
    });
    proxy = await EgressProxy.start({ socketPath, policy, onRefused: (refusal) => refusals.push(refusal) });
  });

  afterAll(async () => {
    await proxy.close();
    for (const echo of [a, b, refusedTarget]) await closeServer(echo.server);
    rmSync(folder, { recursive: true, force: true });
  });

  beforeEach(() => {
    refusals.length = 0;
  });

  it('forwards a plain-HTTP request to an allowed destination, body both ways', async () => {
    const body = 'x'.repeat(1 << 20);
    const reply = await viaProxy(socketPath, `http://127.0.0.3:${a.port}/x?y=1`, { method: 'POST', body, headers: { host: 'ignored.invalid', 'content-type': 'text/plain' } });
    expect(reply.status).toBe(200);
    const echoed = JSON.parse(reply.body);
    expect(echoed).toMatchObject({ server: 'a', method: 'POST', url: '/x?y=1', body });
    // The Host header comes from the request target, not from what the client claimed.
    expect(echoed.headers.host).toBe(`127.0.0.3:${a.port}`);
    expect(refusals).toEqual([]);
  });

  it('drops hop-by-hop and Proxy-* headers, keeps end-to-end ones', async () => {
    const socket = connect(socketPath);
    socket.write(
      `GET http://127.0.0.3:${a.port}/hop HTTP/1.1\r\nHost: 127.0.0.3:${a.port}\r\nProxy-Authorization: Basic Zm9vOmJhcg==\r\n` +
        'Proxy-Connection: keep-alive\r\nConnection: close, X-Hop\r\nX-Hop: secret\r\nX-End: kept\r\n\r\n',
    );
    const text = await readUntil(socket);
    expect(text.startsWith('HTTP/1.1 200')).toBe(true);
    const echoed = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(echoed.url).toBe('/hop');
    expect(echoed.headers['x-end']).toBe('kept');
    for (const name of ['proxy-authorization', 'proxy-connection', 'x-hop']) expect(echoed.headers).not.toHaveProperty(name);
  });

  it('opens a CONNECT tunnel to an allowed destination and carries HTTP both ways through it', async () => {
    const { socket, answer } = await sendConnect(socketPath, `127.0.0.3:${a.port}`);
    expect(answer).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    const reply = await throughTunnel(socket, `127.0.0.3:${a.port}`, 'through the tunnel');
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ server: 'a', method: 'POST', url: '/tunnelled', body: 'through the tunnel' });
    expect(refusals).toEqual([]);
  });

  it('refuses a loopback destination not on the list with 403, and reports it once', async () => {
    const destination = `127.0.0.5:${refusedTarget.port}`;
    const reason = '127.0.0.5 is a loopback address';
    const { answer } = await sendConnect(socketPath, destination);
    expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(answer).toMatch(/\r\ncontent-type: text\/plain; charset=utf-8\r\n/i);
    expect(answer.endsWith(`\r\n\r\nRefused by the sandbox's egress policy: ${destination}: ${reason}\n`)).toBe(true);
    expect(refusals).toEqual([{ destination, reason }]);

    const reply = await viaProxy(socketPath, `http://${destination}/secret`);
    expect(reply.status).toBe(403);
    expect(reply.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(reply.body).toBe(`Refused by the sandbox's egress policy: ${destination}: ${reason}\n`);
    expect(refusals).toEqual([{ destination, reason }, { destination, reason }]);
    expect(refusedTarget.seen).toEqual([]);
  });

  it('refuses an allowed address on a port its entry does not name', async () => {
    const reply = await viaProxy(socketPath, `http://127.0.0.3:${b.port}/`);
    expect(reply.status).toBe(403);
    expect(refusals).toEqual([{ destination: `127.0.0.3:${b.port}`, reason: '127.0.0.3 is a loopback address' }]);
  });

  it('refuses a name that resolves to loopback even though the allow list names it', async () => {
    const reply = await viaProxy(socketPath, `http://localhost:${a.port}/`);
    expect(reply.status).toBe(403);
    expect(reply.body).toMatch(new RegExp(`^Refused by the sandbox's egress policy: localhost:${a.port}: (127\\.0\\.0\\.1|::1) is a loopback address\\n$`));
    const { answer } = await sendConnect(socketPath, `localhost:${a.port}`);
    expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(refusals.map((refusal) => refusal.destination)).toEqual([`localhost:${a.port}`, `localhost:${a.port}`]);
    expect(a.seen.filter((line) => line === 'GET /')).toEqual([]);
  });

  it('refuses numeric spellings of a loopback address the URL parser reads as 127.0.0.1', async () => {
    const reply = await viaProxy(socketPath, `http://2130706433:${a.port}/`);
    expect(reply.status).toBe(403);
    expect(refusals).toEqual([{ destination: `127.0.0.1:${a.port}`, reason: '127.0.0.1 is a loopback address' }]);
  });

  it('serves several requests on one kept-alive connection, to different hosts, until a refusal ends it', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await viaProxy(socketPath, `http://127.0.0.3:${a.port}/one`, { agent });
      const second = await viaProxy(socketPath, `http://127.0.0.4:${b.port}/two`, { agent });
      const refused = await viaProxy(socketPath, `http://127.0.0.5:${refusedTarget.port}/three`, { agent });
      const third = await viaProxy(socketPath, `http://127.0.0.3:${a.port}/four`, { agent });
      expect([first.status, second.status, refused.status, third.status]).toEqual([200, 200, 403, 200]);
      expect(JSON.parse(first.body)).toMatchObject({ server: 'a', url: '/one' });
      expect(JSON.parse(second.body)).toMatchObject({ server: 'b', url: '/two' });
      expect(JSON.parse(third.body)).toMatchObject({ server: 'a', url: '/four' });
      // A refusal ends its connection (no pipelined flood of refusals), so the next request opens a new one.
      expect([first.reused, second.reused, refused.reused, third.reused]).toEqual([false, true, true, false]);
    } finally {
      agent.destroy();
    }
  });

  it('answers 400 to anything but CONNECT and absolute http:// requests', async () => {
    expect((await viaProxy(socketPath, '/origin-form')).status).toBe(400);
    expect((await viaProxy(socketPath, `https://127.0.0.3:${a.port}/`)).status).toBe(400);
    expect((await viaProxy(socketPath, `ftp://127.0.0.3:${a.port}/`)).status).toBe(400);
    const { answer } = await sendConnect(socketPath, '127.0.0.3');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(a.seen).not.toContain('GET /origin-form');
    expect(refusals).toEqual([]);
  });

  it('answers 502 when an allowed destination does not answer', async () => {
    expect((await viaProxy(socketPath, `http://127.0.0.3:${freePort}/`)).status).toBe(502);
    const { answer } = await sendConnect(socketPath, `127.0.0.3:${freePort}`);
    expect(answer).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n/);
    expect(answer).toContain('ECONNREFUSED');
  });

  it('runs real curl through it, plain and tunnelled; a refused destination gets 403', async () => {
    // curl speaks to a proxy over TCP; a tiny bridge stands in for the socat one inside the sandbox.
    const bridge = createTcpServer((client) => {
      const upstream = connect(socketPath);
      for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
        from.on('error', () => to.destroy());
        from.on('close', () => to.destroy());
        from.pipe(to);
      }
    });
    await new Promise<void>((resolve) => bridge.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(bridge.address() as AddressInfo).port}`;
    // execFile, not spawnSync: the proxy runs in this very process and must keep answering.
    const curl = async (...args: string[]): Promise<string> =>
      (await execFileAsync('curl', ['-s', '--max-time', '10', '--proxy', proxyUrl, '-w', '\n%{http_code}', ...args], { env: { PATH: process.env.PATH } })).stdout;
    try {
      const plain = await curl(`http://127.0.0.3:${a.port}/by-curl`);
      expect(plain.endsWith('\n200')).toBe(true);
      expect(JSON.parse(plain.slice(0, plain.lastIndexOf('\n')))).toMatchObject({ server: 'a', url: '/by-curl' });

      const tunnelled = await curl('--proxytunnel', '--data-binary', 'posted by curl', `http://127.0.0.4:${b.port}/tunnel`);
      expect(tunnelled.endsWith('\n200')).toBe(true);
      expect(JSON.parse(tunnelled.slice(0, tunnelled.lastIndexOf('\n')))).toMatchObject({ server: 'b', method: 'POST', body: 'posted by curl' });

      const refused = await curl(`http://127.0.0.5:${refusedTarget.port}/`);
      expect(refused).toBe(`Refused by the sandbox's egress policy: 127.0.0.5:${refusedTarget.port}: 127.0.0.5 is a loopback address\n\n403`);
      expect(refusals).toEqual([{ destination: `127.0.0.5:${refusedTarget.port}`, reason: '127.0.0.5 is a loopback address' }]);
      expect(refusedTarget.seen).toEqual([]);
    } finally {
      await closeServer(bridge);
    }
  });
});

describe('egress proxy: addresses, limits and shutdown', () => {
  let folder = '';
  let echo: Echo;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'egress-proxy-'));
    echo = await startEcho('127.0.0.3', 'a');
  });

  afterAll(async () => {
    await closeServer(echo.server);
    rmSync(folder, { recursive: true, force: true });
  });

  async function startProxy(name: string, maxConnections?: number): Promise<{ proxy: EgressProxy; socketPath: string }> {
    const socketPath = join(folder, name);
    const policy = createEgressPolicy({ allow: [`127.0.0.3:${echo.port}`], protectedPorts: [] });
    const proxy = await EgressProxy.start({ socketPath, policy, onRefused: () => undefined, ...(maxConnections === undefined ? {} : { maxConnections }) });
    return { proxy, socketPath };
  }

  it("cannot be made to hold the service's descriptors: connections past the cap are dropped, and ones that never read are cut", async () => {
    const { proxy, socketPath } = await startProxy('flood.sock', 8);
    const openDescriptors = () => readdirSync('/proc/self/fd').length;
    const before = openDescriptors();
    const sockets: Socket[] = [];
    try {
      // A command opens connections and never reads or closes them.
      for (let index = 0; index < 300; index++) {
        const socket = connect(socketPath);
        socket.on('error', () => undefined);
        socket.pause();
        sockets.push(socket);
      }
      await waitFor(() => (sockets.every((socket) => socket.readyState !== 'opening') ? true : undefined), 5000, 'the connections to open');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // This process holds the 300 client ends itself; the proxy may add its cap, not 300 more.
      expect(openDescriptors() - before).toBeLessThan(300 + 2 * 8 + 20);
    } finally {
      for (const socket of sockets) socket.destroy();
      await proxy.close();
    }
  });

  it('connects to the address the policy approved, never resolving the name again, with the original Host', async () => {
    // `svc.test` exists only in the policy's resolver: a proxy that looked the name up a second
    // time (where DNS rebinding would strike) could not reach it at all.
    const socketPath = join(folder, 'approved.sock');
    const policy = createEgressPolicy({
      allow: ['svc.test', `127.0.0.3:${echo.port}`],
      protectedPorts: [],
      lookup: (host) => Promise.resolve(host === 'svc.test' ? [{ address: '127.0.0.3', family: 4 }] : []),
    });
    const proxy = await EgressProxy.start({ socketPath, policy, onRefused: () => undefined });
    try {
      const reply = await viaProxy(socketPath, `http://svc.test:${echo.port}/named`);
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.body)).toMatchObject({ url: '/named', headers: { host: `svc.test:${echo.port}` } });
      const { socket, answer } = await sendConnect(socketPath, `svc.test:${echo.port}`);
      expect(answer).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
      expect(JSON.parse((await throughTunnel(socket, `svc.test:${echo.port}`, 'named tunnel')).body)).toMatchObject({ body: 'named tunnel' });
    } finally {
      await proxy.close();
    }
  });

  it('turns away connections over the cap with 503, and admits again once one ends', async () => {
    const { proxy, socketPath } = await startProxy('capped.sock', 2);
    try {
      const first = await sendConnect(socketPath, `127.0.0.3:${echo.port}`);
      const second = await sendConnect(socketPath, `127.0.0.3:${echo.port}`);
      expect([first.answer, second.answer]).toEqual(['HTTP/1.1 200 Connection Established\r\n\r\n', 'HTTP/1.1 200 Connection Established\r\n\r\n']);

      const third = connect(socketPath);
      third.on('error', () => undefined);
      const turnedAway = await readUntil(third);
      expect(turnedAway).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
      expect(turnedAway).toContain('too many open connections');

      // The two tunnels still work while the third was turned away.
      const reply = await throughTunnel(second.socket, `127.0.0.3:${echo.port}`, 'still open');
      expect(JSON.parse(reply.body)).toMatchObject({ body: 'still open' });

      first.socket.destroy();
      const again = await waitFor(async () => {
        const attempt = await sendConnect(socketPath, `127.0.0.3:${echo.port}`);
        if (attempt.answer.startsWith('HTTP/1.1 200')) return attempt;
        attempt.socket.destroy();
        return undefined;
      }, 5000, 'a free connection slot');
      again.socket.destroy();
    } finally {
      await proxy.close();
    }
  });

  it('close() ends open tunnels and kept-alive connections, removes the socket, and may be called twice', async () => {
    const { proxy, socketPath } = await startProxy('closing.sock');
    const { socket: tunnel, answer } = await sendConnect(socketPath, `127.0.0.3:${echo.port}`);
    expect(answer.startsWith('HTTP/1.1 200')).toBe(true);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const kept = await viaProxy(socketPath, `http://127.0.0.3:${echo.port}/kept`, { agent });
    expect(kept.status).toBe(200);

    const tunnelClosed = closed(tunnel);
    await Promise.all([proxy.close(), proxy.close()]);
    await tunnelClosed;
    expect(tunnel.destroyed).toBe(true);
    await proxy.close();
    expect(existsSync(socketPath)).toBe(false);
    await expect(viaProxy(socketPath, `http://127.0.0.3:${echo.port}/after`, { agent })).rejects.toThrow();
    agent.destroy();
  });

  it('makes its socket readable and writable by its owner alone', async () => {
    const { proxy, socketPath } = await startProxy('mode.sock');
    try {
      expect(statSync(socketPath).mode & 0o777).toBe(0o600);
    } finally {
      await proxy.close();
    }
  });
});
