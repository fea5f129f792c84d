import { readdirSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { heapProbeFlags, readHeap, type HeapReading } from '../../bench/proc-stats.js';
import { startFakeOllama } from '../fakes/index.js';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase } from '../helpers/databases.js';
import { makeFolder } from '../helpers/fixture-folders.js';
import { open, wsUrl } from '../helpers/ws-client.js';
import { fullReliability } from './reliability-level.js';

// Issue 7's soak, run by `npm run reliability` only (it takes minutes): 100,000 mixed requests
// (reads, writes, errors, WebSocket connections) and 1,000 streamed answers against the service
// as its own process. After warm-up and after the load, the service collects its garbage and
// reports what is alive (bench/heap-probe.mjs): its heap must come back within 10% of the warm-up
// level, and neither its timers, sockets nor file descriptors may have grown. The figures are
// printed, for BENCHMARKS.md.

const REQUESTS = 100_000;
const STREAMS = 1_000;
const WARM_UP_REQUESTS = 5_000;
const WARM_UP_STREAMS = 50;
const CONCURRENCY = 32;
const STREAM_CONCURRENCY = 10;
/** Short, so the finished streams the service keeps for replay are gone before it is measured. */
const RETENTION_MS = 1000;

interface Probe extends HeapReading {
  fds: number;
}

interface Reply {
  status: number;
  body: string;
}

function call(agent: Agent, url: string, method: string, path: string, json?: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = json === undefined ? undefined : JSON.stringify(json);
    const req = httpRequest(`${url}${path}`, { agent, method, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: text });
      });
    });
    req.on('error', (error) => {
      reject(new Error(`${method} ${path}: ${error.message}`));
    });
    req.end(body);
  });
}

/** The service's garbage collected, then what it holds, as the preloaded probe reports it. */
async function probe(service: ChildService, file: string): Promise<Probe> {
  const pid = service.child.pid ?? 0;
  const reading = await readHeap(pid, file, true, 10_000);
  if (reading === null) throw new Error('the heap probe did not answer within 10 s');
  return { ...reading, fds: readdirSync(`/proc/${String(pid)}/fd`).length };
}

describe.skipIf(!fullReliability)('soak (npm run reliability only)', () => {
  it('after 100,000 mixed requests and 1,000 streams: heap within 10% of warm-up, no timer, socket or fd growth', async () => {
    await using fake = await startFakeOllama();
    fake.setDefault({ kind: 'text', chunks: Array.from({ length: 20 }, (_, index) => `t${index} `) });
    const database = await createTestDatabase('sqlite');
    using folder = makeFolder('assistant-soak-');
    const probeFile = join(folder.path, 'probe.json');
    let service: ChildService | undefined;
    try {
      service = await spawnService(
        {
          DATABASE_URL: database.url,
          OLLAMA_BASE_URL: fake.url,
          STREAM_RETENTION_MS: String(RETENTION_MS),
          MAX_STREAMS_PER_USER: String(STREAM_CONCURRENCY * 2),
          HEAP_PROBE_FILE: probeFile,
          HEAP_PROBE_RESOURCES: '1',
        },
        heapProbeFlags,
      );
      const { url } = service;
      // Idle sockets are dropped before the server's 5 s keep-alive timeout would close them: a
      // request sent on a socket the server is closing at that moment is reset (the known
      // keep-alive race; the first run of this soak met it once in 100,000).
      const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY + STREAM_CONCURRENCY, timeout: 4000 });
      const seeded = JSON.parse(
        (await call(agent, url, 'POST', '/api/conversation/save', { title: 'seed', conversationData: { messages: [{ role: 'user', content: 'seed' }] } })).body,
      ) as { conversationId: string };
      const failures: string[] = [];
      const counts = new Map<number, number>();

      /** One request of the mix, chosen by its index; what it answered is checked loosely (no 5xx, no bare error). */
      const mixed = async (index: number) => {
        const pick = index % 20;
        let reply: Reply;
        if (pick < 4) reply = await call(agent, url, 'GET', '/api/status');
        else if (pick < 7) reply = await call(agent, url, 'GET', '/api/conversations?limit=20');
        else if (pick < 10) reply = await call(agent, url, 'GET', `/api/conversation/${seeded.conversationId}`);
        else if (pick < 12) {
          reply = await call(agent, url, 'POST', '/api/conversation/save', { title: `soak ${index}`, conversationData: { messages: [{ role: 'user', content: `m${index}` }] } });
          const id = (JSON.parse(reply.body) as { conversationId?: string }).conversationId;
          if (id && index % 4 === 0) reply = await call(agent, url, 'DELETE', `/api/conversation/${id}`);
        } else if (pick === 12) reply = await call(agent, url, 'GET', '/api/prompt-orders');
        else if (pick === 13) reply = await call(agent, url, 'GET', '/api/context');
        else if (pick === 14) reply = await call(agent, url, 'GET', '/api/models');
        else if (pick === 15) reply = await call(agent, url, 'GET', '/api/audit/log?limit=10');
        else if (pick === 16) reply = await call(agent, url, 'GET', '/api/conversation/00000000-0000-4000-8000-000000000000');
        else if (pick === 17) reply = await call(agent, url, 'POST', '/api/conversation/save', { conversationData: { messages: 'not a list' } });
        else if (pick === 18) reply = await call(agent, url, 'GET', `/api/conversations?q=soak%20${index % 100}&limit=5`);
        else {
          // A WebSocket that subscribes and goes, every twentieth request.
          const socket = await open(wsUrl(url, '/ws'));
          socket.close();
          await socket.closed;
          reply = { status: 101, body: '' };
        }
        counts.set(reply.status, (counts.get(reply.status) ?? 0) + 1);
        const bare = reply.status >= 400 && !reply.body.includes('"success":false');
        if ((reply.status >= 500 || bare) && failures.length < 20) failures.push(`#${index} ${String(reply.status)} ${reply.body.slice(0, 200)}`);
      };
      const stream = async (index: number) => {
        // A conversation of its own, so no history grows from one answer to the next.
        const made = await call(agent, url, 'POST', '/api/conversation/save', { title: `stream ${index}`, conversationData: { messages: [] } });
        const conversationId = (JSON.parse(made.body) as { conversationId: string }).conversationId;
        const reply = await call(agent, url, 'POST', '/api/message/stream', { message: `stream ${index}`, mode: 'chat', conversation_id: conversationId });
        if (reply.status !== 200 || !reply.body.includes('"finishReason":"stop"')) {
          if (failures.length < 20) failures.push(`stream ${index}: ${String(reply.status)} ${reply.body.slice(-200)}`);
        }
      };
      /** `total` jobs run by `workers` back-to-back workers. */
      const run = async (total: number, workers: number, job: (index: number) => Promise<void>) => {
        let next = 0;
        await Promise.all(
          Array.from({ length: workers }, async () => {
            while (next < total) await job(next++);
          }),
        );
      };
      const settle = () => new Promise((resolve) => setTimeout(resolve, RETENTION_MS + 1500));

      await Promise.all([run(WARM_UP_REQUESTS, CONCURRENCY, mixed), run(WARM_UP_STREAMS, STREAM_CONCURRENCY, stream)]);
      await settle();
      const warm = await probe(service, probeFile);

      const started = performance.now();
      await Promise.all([run(REQUESTS, CONCURRENCY, mixed), run(STREAMS, STREAM_CONCURRENCY, stream)]);
      const seconds = (performance.now() - started) / 1000;
      await settle();
      const after = await probe(service, probeFile);
      agent.destroy();

      const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
      console.table({
        'after warm-up': { rss: mb(warm.rssKb), heap: mb(warm.heapUsedKb), external: mb(warm.externalKb), fds: warm.fds, ...warm.alive },
        'after the load': { rss: mb(after.rssKb), heap: mb(after.heapUsedKb), external: mb(after.externalKb), fds: after.fds, ...after.alive },
      });
      console.log(`${String(REQUESTS)} requests and ${String(STREAMS)} streams in ${seconds.toFixed(0)} s; statuses ${JSON.stringify(Object.fromEntries(counts))}`);

      expect(failures).toEqual([]);
      expect(after.heapUsedKb).toBeLessThanOrEqual(warm.heapUsedKb * 1.1);
      // Keep-alive sockets of the load generator are gone (the agent was destroyed); allow the
      // odd one still closing.
      expect(after.fds).toBeLessThanOrEqual(warm.fds + 2);
      expect(after.alive.Timeout ?? 0).toBeLessThanOrEqual((warm.alive.Timeout ?? 0) + 2);
      expect(after.alive.TCPWRAP ?? 0).toBeLessThanOrEqual((warm.alive.TCPWRAP ?? 0) + 2);
      expect((await call(new Agent(), url, 'GET', '/api/status')).status).toBe(200);
    } finally {
      service?.child.kill('SIGKILL');
      await service?.exit;
      await database.drop();
    }
  }, 900_000);
});
