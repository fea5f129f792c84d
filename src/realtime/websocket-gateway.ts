import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { User } from '../core/auth/permissions.js';
import { AppError } from '../core/errors/app-error.js';
import { acceptedHosts, hostName } from '../http/host-guard.js';
import { requestLine } from '../http/request-id.js';
import { originTrusted, ownOrigins } from '../http/write-guards.js';
import { terminalCallerRefusal, terminalConnectionCheck } from '../http/terminal-callers.js';
import { createContextInner, type AppDeps, type Context } from '../procedures/context.js';
import { appErrorFrom } from '../procedures/error-mapping.js';
import { createCallerFactory } from '../procedures/trpc.js';
import { newId } from '../core/ids.js';
import { appRouter } from '../routers/app-router.js';
import type { TerminalSession } from '../core/terminals/terminal-session.js';
import type { SocketChannel } from '../core/metrics/service-metrics.js';
import { MainChannel } from './main-channel.js';
import { TerminalChannel, terminalForSocket } from './terminal-channel.js';

const createCaller = createCallerFactory(appRouter);

/** `/ws` and `/ws/markdown-stream` are opened as `system.me` is called: counted in the general group, then the token checked. */
async function openMainChannel(ctx: Context): Promise<void> {
  await createCaller(ctx).system.me({});
}

type Channel = { kind: 'main'; markdown: boolean } | { kind: 'terminal'; terminalId: string };

function metricsChannel(channel: Channel): SocketChannel {
  if (channel.kind === 'terminal') return 'terminal';
  return channel.markdown ? 'markdown' : 'main';
}

const terminalPath = /^\/api\/terminals\/([^/]+)\/ws$/;

/** Which channel a path opens, or null for an unknown path (404, before anything else). */
function channelFor(pathname: string): Channel | null {
  if (pathname === '/ws') return { kind: 'main', markdown: false };
  if (pathname === '/ws/markdown-stream') return { kind: 'main', markdown: true };
  const terminalId = terminalPath.exec(pathname)?.[1];
  if (terminalId === undefined) return null;
  try {
    return { kind: 'terminal', terminalId: decodeURIComponent(terminalId) };
  } catch {
    return null; // malformed percent-encoding: no such terminal
  }
}

/**
 * The WebSocket upgrades (CONTRACT §8) on the HTTP server, checked in the contract's order (§2):
 * path (404) → Host (403) → not from inside a terminal (403) → Origin (403), then a procedure's
 * chain: rate limit (429) → token (401, or 503 while the identity provider is unreachable), the
 * token from the Authorization header or the `access_token` query. A refused upgrade is an HTTP
 * reply in the error envelope. Open sockets are pinged every WS_PING_INTERVAL_MS and dropped when
 * a ping goes unanswered.
 */
export function attachWebSockets(server: Server, deps: AppDeps, clientIp: (req: IncomingMessage) => string): { close(): void } {
  const { config } = deps;
  const hosts = acceptedHosts(config);
  // Only commands sharing the host's network can reach the service (see server.ts).
  const fromTerminal = deps.sandbox.network === 'host' ? terminalConnectionCheck(deps.terminals) : () => false;
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.BODY_LIMIT });
  const alive = new WeakMap<WebSocket, boolean>();

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    // An upgrade gets the request line every HTTP request gets: 101 when taken, else the refusal.
    const logLine = requestLine(deps.logger, req);
    void upgrade(req, socket, head, logLine).then(
      (refusedWith) => {
        if (refusedWith !== undefined) logLine(refusedWith);
      },
      (error: unknown) => {
        deps.logger.error({ err: error }, 'websocket upgrade failed');
        logLine(refuse(socket, appErrorFrom(error)));
      },
    );
  });

  /** The refusal's status, or undefined once the socket is handed to its channel. */
  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, logLine: (status: number) => void): Promise<number | undefined> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const channel = channelFor(url.pathname);
    const refusal = channel ? screen(req) : AppError.notFound('WebSocket channel');
    if (refusal || !channel) {
      return refuse(socket, refusal ?? AppError.notFound('WebSocket channel'));
    }
    const ip = clientIp(req);
    // The upgrade runs a procedure as any request does: its rate group, then the token, then
    // (for a terminal) the terminal's guard, feature flag and owner (CONTRACT §2).
    let caller: Promise<User> | undefined;
    const token = upgradeToken(req, url);
    const ctx = createContextInner(deps, { requestId: newId(), ip, identify: () => (caller ??= deps.auth.identify(token, ip)) });
    let user: User;
    let terminal: TerminalSession | undefined;
    try {
      if (channel.kind === 'terminal') terminal = await terminalForSocket(deps, ctx, channel.terminalId);
      else await openMainChannel(ctx);
      user = await ctx.identify();
    } catch (error) {
      return refuse(socket, appErrorFrom(error));
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      logLine(101);
      const counted = metricsChannel(channel);
      deps.metrics.socketOpened(counted);
      // 'close' comes once however the socket ends: closed by either side, terminated, or dropped.
      ws.once('close', () => {
        deps.metrics.socketClosed(counted);
      });
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
      ws.on('error', () => undefined);
      if (terminal) new TerminalChannel(ws, terminal, { user, ip }, deps);
      else new MainChannel(ws, { user, ip }, deps, channel.kind === 'main' && channel.markdown);
    });
    return undefined;
  }

  /** Host, terminal caller and Origin, in the contract's order: the refusal, or null to go on. */
  function screen(req: IncomingMessage): AppError | null {
    if (req.headers.host === undefined || !hosts.has(hostName(req.headers.host))) {
      return new AppError('SECURITY_VIOLATION', 'Host header not accepted; add it to ALLOWED_HOSTS');
    }
    if (fromTerminal(req.socket)) return terminalCallerRefusal();
    const origin = req.headers.origin;
    const own = ownOrigins(config, (server.address() as AddressInfo | null)?.port);
    if (origin !== undefined && !originTrusted(origin, req.headers.host, own)) return new AppError('SECURITY_VIOLATION', 'Origin not allowed; add it to ALLOWED_ORIGINS');
    return null;
  }

  const pinger = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, config.WS_PING_INTERVAL_MS);
  pinger.unref();

  return {
    close() {
      clearInterval(pinger);
      for (const ws of wss.clients) ws.close(1001, 'Server shutting down');
      wss.close();
    },
  };
}

/** The token of an upgrade: the Authorization header, else `access_token` in the query. */
function upgradeToken(req: IncomingMessage, url: URL): string | null {
  const header = req.headers.authorization;
  if (header !== undefined) return /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] ?? header;
  const query = url.searchParams.get('access_token');
  return query === null || query === '' ? null : query;
}

/** Answers a refused upgrade as plain HTTP in the error envelope, then closes the connection; its status. */
function refuse(socket: Duplex, error: AppError): number {
  if (!socket.writable) return error.status;
  const body = JSON.stringify(error.toEnvelope());
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
    ...error.headers,
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n');
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n${head}\r\n\r\n${body}`);
  return error.status;
}
