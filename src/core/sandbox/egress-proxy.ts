import { chmod } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import { Socket, connect as netConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { LookupSlots, decideDestination } from './egress-policy.js';
import type { EgressDecision, EgressPolicy } from './egress-policy.js';

// The sandbox's only way out (CONTRACT §11, "No path back to the host"): an HTTP proxy on a Unix
// socket, one per terminal, that commands reach through a bridge inside their own network
// namespace. It serves CONNECT tunnels and plain-HTTP absolute-form requests, judges every
// destination with the egress policy and connects to the very address the policy approved.

export interface EgressRefusal {
  /** `host:port` as the client asked for it. */
  destination: string;
  reason: string;
}

export interface EgressProxyOptions {
  socketPath: string;
  policy: EgressPolicy;
  /** Called once per refused destination, so the caller can audit it with the terminal's user. */
  onRefused: (refusal: EgressRefusal) => void;
  maxConnections?: number;
  /** Name lookups this terminal may have in flight; past it a destination is refused at once. */
  maxLookups?: number;
  connectTimeoutMs?: number;
}

const DEFAULT_MAX_CONNECTIONS = 64;
/** Distinct names at once: package managers ask for a handful, and one name's requests share a lookup. */
const DEFAULT_MAX_LOOKUPS = 8;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** A tunnel (or a forwarded exchange) with no traffic either way for this long is closed. */
const IDLE_TIMEOUT_MS = 10 * 60_000;

/**
 * Headers that describe one hop and must not be passed on (RFC 9110 §7.6.1), plus `host`, which
 * is rebuilt from the request target, and `expect`, which this proxy has already answered.
 */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'expect',
]);

class UpstreamTimeout extends Error {
  constructor() {
    super('no answer in time');
  }
}

interface Target {
  /** The host as the client wrote it, canonicalised by the URL parser (IPv6 in brackets). */
  hostname: string;
  port: number;
  destination: string;
}

/**
 * The host and port of an authority. The WHATWG URL parser canonicalises the host (lower case,
 * IDNA, and `2130706433` or `0x7f.1` become 127.0.0.1), so the policy judges what a client means.
 */
function parseAuthority(authority: string, defaultPort: number | null): Target | null {
  if (authority === '' || /[@/?#\\\s]/.test(authority)) return null;
  const explicitPort = /:([0-9]{1,5})$/.exec(authority);
  if (explicitPort === null && defaultPort === null) return null;
  let url: URL;
  try {
    url = new URL(`http://${authority}`);
  } catch {
    return null;
  }
  const port = explicitPort === null ? defaultPort ?? 0 : Number(explicitPort[1]);
  if (url.hostname === '') return null;
  return { hostname: url.hostname, port, destination: `${url.hostname}:${port}` };
}

/** `http://host[:port]/path?query` split into its target and the path to send on. */
function parseAbsoluteHttp(requestTarget: string): { target: Target; hostHeader: string; path: string } | null {
  const parts = /^http:\/\/([^/?#]*)([^#]*)/i.exec(requestTarget);
  if (parts === null) return null;
  const target = parseAuthority(parts[1] ?? '', 80);
  if (target === null) return null;
  const rest = parts[2] ?? '';
  const path = rest.startsWith('/') ? rest : `/${rest}`;
  const hostHeader = target.port === 80 ? target.hostname : target.destination;
  return { target, hostHeader, path };
}

function connectionTokens(headers: IncomingHttpHeaders): Set<string> {
  return new Set((headers.connection ?? '').split(',').map((token) => token.trim().toLowerCase()).filter(Boolean));
}

/** Drops hop-by-hop headers, those the Connection header names, and every `Proxy-*` header. */
function endToEndHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = connectionTokens(headers);
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name) || name.startsWith('proxy-')) continue;
    kept[name] = value;
  }
  return kept;
}

function plainText(status: number, statusText: string, body: string): string {
  return (
    `HTTP/1.1 ${status} ${statusText}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

function answer(response: ServerResponse, status: number, body: string, options: { close?: boolean } = {}): void {
  if (response.destroyed || response.writableEnded) return;
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const headers: Record<string, string | number> = { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) };
  // Node ends the connection after a reply that says so.
  if (options.close === true) headers.connection = 'close';
  response.writeHead(status, headers);
  response.end(body);
}

function errorCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === 'string' ? code : error instanceof Error ? error.message : 'connection failed';
}

function ignoreError(): void {
  // Socket errors end that socket (its 'close' cleans up); they must never reach the process.
}

/** How long a connection turned away by the cap may take to read its 503. */
const TURNED_AWAY_GRACE_MS = 1000;

export class EgressProxy {
  readonly #server: Server;
  readonly #policy: EgressPolicy;
  readonly #onRefused: (refusal: EgressRefusal) => void;
  readonly #maxConnections: number;
  readonly #connectTimeoutMs: number;
  readonly #lookups: LookupSlots;
  readonly #clients = new Set<Socket>();
  /** Connections turned away by the cap: they get one 503 and nothing else. */
  readonly #turnedAway = new Set<Duplex>();
  readonly #upstreams = new Set<Socket>();
  #closing: Promise<void> | null = null;

  private constructor(options: EgressProxyOptions) {
    this.#policy = options.policy;
    this.#onRefused = options.onRefused;
    this.#maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.#lookups = new LookupSlots(options.maxLookups ?? DEFAULT_MAX_LOOKUPS);
    this.#server = createServer();
    // Past this, the kernel's accepted connections are closed at once by Node, unanswered: the cap
    // below answers 503 to a few more, but nothing lets a command pile up the service's descriptors.
    this.#server.maxConnections = this.#maxConnections * 2;
    this.#server.on('connection', (socket: Socket) => { this.#admit(socket); });
    this.#server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      this.#forward(request, response).catch((error: unknown) => { answer(response, 502, `The sandbox's egress proxy failed: ${errorCode(error)}\n`); });
    });
    this.#server.on('connect', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.#tunnel(request, socket, head).catch(() => socket.destroy());
    });
  }

  static async start(options: EgressProxyOptions): Promise<EgressProxy> {
    const proxy = new EgressProxy(options);
    await proxy.#listen(options.socketPath);
    return proxy;
  }

  /** Closes the listener and every open connection and tunnel; safe to call more than once. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#server.close(() => { resolve(); });
      for (const socket of [...this.#clients, ...this.#turnedAway, ...this.#upstreams]) socket.destroy();
    });
    return this.#closing;
  }

  async #listen(socketPath: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      // Exclusive: in a worker of WORKERS > 1, node:cluster would otherwise have the primary bind
      // the socket and hand each connection over to this process.
      this.#server.listen({ path: socketPath, exclusive: true }, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    // After start, a failed accept (say, EMFILE) must not end the service; the next one may work.
    this.#server.on('error', ignoreError);
    try {
      // Only the service's user (and the bridge it starts) may speak to the proxy.
      await chmod(socketPath, 0o600);
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  #admit(socket: Socket): void {
    socket.on('error', ignoreError);
    if (this.#clients.size >= this.#maxConnections) {
      this.#turnedAway.add(socket);
      socket.once('close', () => this.#turnedAway.delete(socket));
      socket.end(plainText(503, 'Service Unavailable', "The sandbox's egress proxy has too many open connections\n"));
      // A client that never reads its answer must not keep the connection open.
      setTimeout(() => socket.destroy(), TURNED_AWAY_GRACE_MS).unref();
      return;
    }
    this.#clients.add(socket);
    socket.once('close', () => this.#clients.delete(socket));
  }

  #refuse(destination: string, reason: string): string {
    try {
      this.#onRefused({ destination, reason });
    } catch {
      // A failing audit hook must not leave the client without its answer or stop the proxy.
    }
    return `Refused by the sandbox's egress policy: ${destination}: ${reason}\n`;
  }

  async #decide(target: Target): Promise<EgressDecision> {
    try {
      return await decideDestination(this.#policy, target.hostname, target.port, this.#lookups);
    } catch (error) {
      // When the decision itself fails, the answer is no: the proxy never guesses open.
      return { allowed: false, reason: `the destination could not be checked (${errorCode(error)})` };
    }
  }

  #track(upstream: Socket): void {
    upstream.on('error', ignoreError);
    this.#upstreams.add(upstream);
    upstream.once('close', () => this.#upstreams.delete(upstream));
  }

  async #forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (this.#turnedAway.has(request.socket)) {
      request.socket.destroy();
      return;
    }
    const parsed = parseAbsoluteHttp(request.url ?? '');
    if (parsed === null) {
      answer(response, 400, "The sandbox's egress proxy serves CONNECT host:port and absolute http:// requests only\n");
      return;
    }
    const { target, hostHeader, path } = parsed;
    const decision = await this.#decide(target);
    if (this.#closing !== null) {
      request.socket.destroy();
      return;
    }
    if (!decision.allowed) {
      // The connection ends with its first refusal: a client pipelining thousands of refused
      // requests on one connection would otherwise flood the audit log at no cost.
      answer(response, 403, this.#refuse(target.destination, decision.reason), { close: true });
      return;
    }

    const headers = endToEndHeaders(request.headers);
    headers.host = hostHeader;
    // A body of unknown length arrives chunked; it leaves chunked (Node frames it for us).
    if (request.headers['transfer-encoding'] !== undefined && request.headers['content-length'] === undefined) {
      headers['transfer-encoding'] = 'chunked';
    }
    // The address the policy approved, never the name again: a second lookup could answer
    // differently (DNS rebinding). `agent: false` keeps no pooled connection outside close().
    const upstream = httpRequest({
      host: decision.address,
      family: decision.family,
      port: target.port,
      method: request.method,
      path,
      headers,
      agent: false,
      setHost: false,
    });
    const connectTimer = setTimeout(() => upstream.destroy(new UpstreamTimeout()), this.#connectTimeoutMs);
    upstream.on('socket', (socket: Socket) => {
      this.#track(socket);
      socket.once('connect', () => { clearTimeout(connectTimer); });
      socket.setTimeout(IDLE_TIMEOUT_MS, () => upstream.destroy(new UpstreamTimeout()));
    });
    upstream.on('close', () => { clearTimeout(connectTimer); });
    upstream.on('error', (error: unknown) => {
      clearTimeout(connectTimer);
      if (error instanceof UpstreamTimeout) answer(response, 504, `The sandbox's egress proxy timed out reaching ${target.destination}\n`);
      else answer(response, 502, `The sandbox's egress proxy could not reach ${target.destination}: ${errorCode(error)}\n`);
    });
    upstream.on('response', (reply: IncomingMessage) => {
      // A reply cut short upstream must reach the client cut short, never as a complete body.
      reply.on('error', () => response.destroy());
      reply.on('close', () => {
        if (!reply.complete) response.destroy();
      });
      response.writeHead(reply.statusCode ?? 502, reply.statusMessage, endToEndHeaders(reply.headers));
      reply.pipe(response);
    });
    response.on('close', () => {
      if (!response.writableFinished) upstream.destroy();
    });
    request.on('error', () => upstream.destroy());
    request.pipe(upstream);
  }

  async #tunnel(request: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', ignoreError);
    // Node types the CONNECT socket as a Duplex; from this net-based server it is a net.Socket.
    if (this.#turnedAway.has(client) || !(client instanceof Socket)) {
      client.destroy();
      return;
    }
    const target = parseAuthority(request.url ?? '', null);
    if (target === null) {
      client.end(plainText(400, 'Bad Request', "The sandbox's egress proxy needs CONNECT host:port\n"));
      return;
    }
    const decision = await this.#decide(target);
    if (this.#closing !== null || client.destroyed) {
      client.destroy();
      return;
    }
    if (!decision.allowed) {
      client.end(plainText(403, 'Forbidden', this.#refuse(target.destination, decision.reason)));
      return;
    }

    // The approved address, not the name: see #forward.
    const upstream = netConnect({ host: decision.address, family: decision.family, port: target.port });
    this.#track(upstream);
    let established = false;
    const connectTimer = setTimeout(() => upstream.destroy(new UpstreamTimeout()), this.#connectTimeoutMs);
    upstream.once('close', () => { clearTimeout(connectTimer); });
    upstream.once('error', (error: unknown) => {
      clearTimeout(connectTimer);
      if (established) return;
      const body = `The sandbox's egress proxy could not reach ${target.destination}: ${errorCode(error)}\n`;
      if (error instanceof UpstreamTimeout) client.end(plainText(504, 'Gateway Timeout', body));
      else client.end(plainText(502, 'Bad Gateway', body));
    });
    // A client gone is a tunnel gone. The other way round, the upstream's end reaches the client
    // through pipe() (its last bytes first); only a broken upstream cuts the client off at once.
    client.once('close', () => upstream.destroy());
    upstream.once('close', (hadError: boolean) => {
      if (hadError && established) client.destroy();
    });
    upstream.once('connect', () => {
      clearTimeout(connectTimer);
      established = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      const closeIdle = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.setTimeout(IDLE_TIMEOUT_MS, closeIdle);
      upstream.setTimeout(IDLE_TIMEOUT_MS, closeIdle);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }
}
