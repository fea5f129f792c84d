import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import type { Socket as UdpSocket } from 'node:dgram';
import { promises as dns } from 'node:dns';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../../src/core/sandbox/egress-policy.js';
import { EgressProxy, type EgressRefusal } from '../../src/core/sandbox/egress-proxy.js';
import { waitFor } from '../helpers/wait-for.js';

// A terminal must not be able to stall the service through the names it asks its egress proxy
// about (CONTRACT §11, "Limits"). A name server on loopback stands in for DNS at the network
// edge: it answers A queries for the names it knows, and never answers anything else, as an
// attacker's name server would for `r<random>.attacker.test`. Before, each such name held one of
// libuv's four pool threads in getaddrinfo for as long as the system resolver waited, and the
// service's own `dns.lookup`, file reads and outgoing calls queued behind them.

interface NameServer {
  socket: UdpSocket;
  address: string;
  /** Queries received, by name, so a test can prove when asking stopped. */
  queries: string[];
}

/** The name and type of a DNS query, and where its question section ends. */
function readQuestion(message: Buffer): { name: string; type: number; end: number } | null {
  let offset = 12;
  const labels: string[] = [];
  for (;;) {
    const length = message[offset];
    if (length === undefined || length > 63) return null;
    offset += 1;
    if (length === 0) break;
    labels.push(message.toString('latin1', offset, offset + length));
    offset += length;
  }
  if (offset + 4 > message.length) return null;
  return { name: labels.join('.').toLowerCase(), type: message.readUInt16BE(offset), end: offset + 4 };
}

async function startNameServer(records: Record<string, string>): Promise<NameServer> {
  const socket = createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (message, peer) => {
    const question = readQuestion(message);
    if (question === null) return;
    queries.push(question.name);
    const address = records[question.name];
    // Type 1 is A. AAAA queries go unanswered even for known names: the resolver must not wait
    // the whole budget for a family that never comes once the other has answered.
    if (address === undefined || question.type !== 1) return;
    const header = Buffer.alloc(12);
    header.writeUInt16BE(message.readUInt16BE(0), 0);
    header.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, no error
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(1, 6);
    const answer = Buffer.alloc(16);
    answer.writeUInt16BE(0xc00c, 0); // the name of the question
    answer.writeUInt16BE(1, 2);
    answer.writeUInt16BE(1, 4);
    answer.writeUInt32BE(60, 6);
    answer.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, index) => answer.writeUInt8(Number(octet), 12 + index));
    socket.send(Buffer.concat([header, message.subarray(12, question.end), answer]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { socket, address: `127.0.0.1:${socket.address().port}`, queries };
}

/** Sends a CONNECT and reads the whole answer of a refusal, or the head of an established tunnel. */
async function connectThrough(socketPath: string, authority: string): Promise<{ answer: string; ms: number }> {
  const started = performance.now();
  const socket = connect(socketPath);
  socket.on('error', () => undefined);
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  const answer = await new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.startsWith('HTTP/1.1 200') && text.includes('\r\n\r\n')) resolve(text);
    });
    socket.once('close', () => { resolve(text); });
  });
  socket.destroy();
  return { answer, ms: performance.now() - started };
}

function attackerName(): string {
  return `r${randomBytes(6).toString('hex')}.attacker.test`;
}

async function timed<T>(work: () => Promise<T>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

describe('egress proxy: names no server answers', () => {
  let folder = '';
  let nameServer: NameServer;
  let echo: HttpServer;
  let echoPort = 0;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'egress-names-'));
    nameServer = await startNameServer({ 'svc.test': '127.0.0.3' });
    echo = createHttpServer((_request, response) => response.end('ok'));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.3', resolve));
    echoPort = (echo.address() as AddressInfo).port;
  });

  afterAll(async () => {
    nameServer.socket.close();
    await new Promise<void>((resolve) => echo.close(() => { resolve(); }));
    rmSync(folder, { recursive: true, force: true });
  });

  it('resolves through c-ares at the configured server, without waiting out a family that never answers', async () => {
    const policy = createEgressPolicy({ allow: ['svc.test', `127.0.0.3:${echoPort}`], protectedPorts: [], dnsServers: [nameServer.address] });
    const proxy = await EgressProxy.start({ socketPath: join(folder, 'named.sock'), policy, onRefused: () => undefined });
    try {
      const { answer, ms } = await connectThrough(join(folder, 'named.sock'), `svc.test:${echoPort}`);
      expect(answer).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
      // The AAAA query is never answered: the A answer is used after a short grace, not after 5 s.
      expect(ms).toBeLessThan(1500);
      expect(nameServer.queries).toContain('svc.test');
    } finally {
      await proxy.close();
    }
  });

  it('a flood of such names neither stalls the service nor outlives its budget, and past the caps is refused at once', async () => {
    const budgetMs = 1500;
    // Two terminals' proxies over the service's one policy: 8 lookups each, 12 in the service.
    const policy = createEgressPolicy({ allow: [], protectedPorts: [], dnsServers: [nameServer.address], lookupTimeoutMs: budgetMs, maxLookups: 12 });
    const refusals: Record<'a' | 'b', EgressRefusal[]> = { a: [], b: [] };
    const proxyA = await EgressProxy.start({ socketPath: join(folder, 'a.sock'), policy, maxLookups: 8, onRefused: (refusal) => refusals.a.push(refusal) });
    const proxyB = await EgressProxy.start({ socketPath: join(folder, 'b.sock'), policy, maxLookups: 8, onRefused: (refusal) => refusals.b.push(refusal) });
    try {
      const fromA = Array.from({ length: 20 }, () => connectThrough(join(folder, 'a.sock'), `${attackerName()}:443`));
      // Terminal A holds its 8; its other 12 are refused at once.
      await waitFor(() => (refusals.a.length >= 12 ? true : undefined), 1000, "terminal A's refusals past its cap");
      const fromB = Array.from({ length: 8 }, () => connectThrough(join(folder, 'b.sock'), `${attackerName()}:443`));
      await waitFor(() => (policy.lookups.inFlight === 12 && refusals.b.length >= 4 ? true : undefined), 1000, 'the service-wide cap to fill');
      await waitFor(() => (new Set(nameServer.queries.filter((name) => name.endsWith('.attacker.test'))).size >= 12 ? true : undefined), 1000, 'the queries to reach DNS');

      // Meanwhile the thread pool is free: the service's own getaddrinfo answers at once, eight at a time.
      const lookupMs = await timed(() => Promise.all(Array.from({ length: 8 }, () => dns.lookup('localhost'))));
      expect(lookupMs).toBeLessThan(1000);

      const answers = await Promise.all([...fromA, ...fromB]);
      const busy = answers.filter(({ answer }) => answer.endsWith(': too many name lookups in flight\n'));
      const late = answers.filter(({ answer }) => answer.endsWith(': name did not resolve in time\n'));
      expect([busy.length, late.length]).toEqual([16, 12]);
      for (const { answer } of answers) expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
      // Past the caps: refused at once, without a query. Within them: refused by the end of the budget.
      for (const { ms } of busy) expect(ms).toBeLessThan(500);
      for (const { ms } of late) {
        expect(ms).toBeGreaterThan(budgetMs / 4);
        expect(ms).toBeLessThan(budgetMs + 500);
      }
      // Each refusal reaches the terminal's audit hook, as any other refusal does.
      expect(refusals.a.map((refusal) => refusal.reason).sort()).toEqual([...Array<string>(8).fill('name did not resolve in time'), ...Array<string>(12).fill('too many name lookups in flight')].sort());
      expect(refusals.b.map((refusal) => refusal.reason).sort()).toEqual([...Array<string>(4).fill('name did not resolve in time'), ...Array<string>(4).fill('too many name lookups in flight')].sort());

      // Nothing is held past the budget: the slots are free and no query follows.
      expect(policy.lookups.inFlight).toBe(0);
      const asked = nameServer.queries.length;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(nameServer.queries.length).toBe(asked);
      const again = await connectThrough(join(folder, 'a.sock'), `${attackerName()}:443`);
      expect(again.answer.endsWith(': name did not resolve in time\n')).toBe(true);
    } finally {
      await Promise.all([proxyA.close(), proxyB.close()]);
    }
  });

  it('many requests for one name share one lookup and one slot', async () => {
    const policy = createEgressPolicy({ allow: [], protectedPorts: [], dnsServers: [nameServer.address], lookupTimeoutMs: 800 });
    const proxy = await EgressProxy.start({ socketPath: join(folder, 'shared.sock'), policy, maxLookups: 1, onRefused: () => undefined });
    try {
      const name = attackerName();
      const answers = await Promise.all(Array.from({ length: 10 }, () => connectThrough(join(folder, 'shared.sock'), `${name}:443`)));
      for (const { answer } of answers) expect(answer.endsWith(': name did not resolve in time\n')).toBe(true);
    } finally {
      await proxy.close();
    }
  });
});
