import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { request, type IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/databases.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';
import { sandboxAvailable } from '../helpers/sandbox.js';
import type { SseEvent } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait-for.js';

// Issue 24, item 5: WORKERS=2 is several processes of the service behind one port, each an
// instance of the several-instances mode on one PostgreSQL database and one Redis. Seen from
// outside only: which worker answered is the `worker` field of the request's log line (found by the
// X-Request-Id the test sends), each request on a connection of its own so that the primary hands
// them out in turn; each worker's instance id is its channel on Redis.

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
  requestId: string;
}

interface Stream {
  status: number;
  headers: IncomingHttpHeaders;
  requestId: string;
  /** Events until `stop` matches or the stream ends. */
  events(stop?: (event: SseEvent) => boolean): Promise<SseEvent[]>;
}

interface LogRecord {
  msg?: string;
  requestId?: string;
  worker?: number;
  pid?: number;
  url?: string;
}

describe.runIf(redisAvailable && postgresAvailable)('WORKERS=2: two processes behind one port', () => {
  let ollama: FakeOllama;
  let database: TestDatabase;
  let service: ChildService;
  let prefix: string;
  let redis: ReturnType<typeof createClient>;
  let workspace: Folder;

  const records = () => service.lines.map((line) => JSON.parse(line) as LogRecord);

  /** One request on a connection of its own (no keep-alive pool choosing the worker). */
  const call = (method: string, path: string, json?: unknown) => {
    const requestId = `wp-${randomUUID()}`;
    const body = json === undefined ? undefined : JSON.stringify(json);
    return new Promise<Reply>((resolve, reject) => {
      const req = request(
        new URL(path, service.url),
        { method, agent: false, headers: { 'x-request-id': requestId, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text === '' ? undefined : JSON.parse(text), requestId });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };

  /** An event stream on a connection of its own, parsed as EventSource does. */
  const openStream = (method: string, path: string, options: { json?: unknown; headers?: Record<string, string> } = {}) => {
    const requestId = `wp-${randomUUID()}`;
    const body = options.json === undefined ? undefined : JSON.stringify(options.json);
    return new Promise<Stream>((resolve, reject) => {
      const req = request(
        new URL(path, service.url),
        { method, agent: false, headers: { 'x-request-id': requestId, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers } },
        (res) => {
          res.setEncoding('utf8');
          const chunks = res[Symbol.asyncIterator]() as AsyncIterator<string>;
          let buffer = '';
          const events = async (stop?: (event: SseEvent) => boolean) => {
            const seen: SseEvent[] = [];
            for (;;) {
              for (let boundary = buffer.indexOf('\n\n'); boundary >= 0; boundary = buffer.indexOf('\n\n')) {
                const block = buffer.slice(0, boundary);
                buffer = buffer.slice(boundary + 2);
                const id = block.split('\n').find((line) => line.startsWith('id:'))?.slice(3).trim();
                const data = block.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).replace(/^ /, ''));
                if (data.length === 0) continue;
                const event = { id, data: JSON.parse(data.join('\n')) };
                seen.push(event);
                if (stop?.(event)) return seen;
              }
              const next = await chunks.next();
              if (next.done === true) return seen;
              buffer += next.value;
            }
          };
          resolve({ status: res.statusCode ?? 0, headers: res.headers, requestId, events });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };

  /** The worker whose log line says it answered the request (written once the reply is finished). */
  const workerOf = (requestId: string) =>
    waitFor(() => records().find((record) => record.msg === 'request' && record.requestId === requestId)?.worker, 5000, `the log line of ${requestId}`);

  /** The primary's `worker listening` lines: worker number → pid. */
  const listeningWorkers = () => new Map(records().filter((record) => record.msg === 'worker listening').map((record) => [record.worker ?? 0, record.pid ?? 0]));

  /** The instance channels on Redis: one per live worker, each named by its instance id. */
  const instanceChannels = async () => (await redis.pubSubChannels(`${prefix}instance:*`)).sort();

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  beforeAll(async () => {
    ollama = await startFakeOllama();
    workspace = makeFolder();
    database = await createTestDatabase('postgresql');
    prefix = freshRedisPrefix();
    redis = createClient({ url: redisUrl });
    await redis.connect();
    service = await spawnService({
      WORKERS: '2',
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: prefix,
      CLUSTER_SECRET: 'worker-processes-test-cluster-secret',
      OLLAMA_BASE_URL: ollama.url,
      LOG_FORMAT: 'json',
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_MODELS: '4',
      RATE_LIMIT_CHAT: '10000',
      API_RATE_LIMIT: '10000',
      // Terminals where bubblewrap works; their commands may reach the fake through the egress proxy.
      ENABLE_SYSTEM_COMMANDS: String(sandboxAvailable),
      SANDBOX_NETWORK_ALLOW: `127.0.0.1:${new URL(ollama.origin).port}`,
    });
    // The first worker's own line let spawnService go on; the primary's says both listen.
    await waitFor(() => records().find((record) => record.msg === `2 workers listening on ${service.url}`), 30_000, 'both workers listening');
  });

  afterAll(async () => {
    // Only if a test failed before the stop: the primary first, then whatever worker is left.
    if (service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      for (const pid of listeningWorkers().values()) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    await redis.close();
    await database.drop();
    await ollama.close();
    workspace[Symbol.dispose]();
  });

  it('answers on one port from both workers, each an instance of its own on Redis', async () => {
    const replies = [];
    for (let i = 0; i < 6; i++) replies.push(await call('GET', '/api/status'));
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const workers = await Promise.all(replies.map((reply) => workerOf(reply.requestId)));
    expect(new Set(workers)).toEqual(new Set(listeningWorkers().keys()));
    expect(new Set(workers).size).toBe(2);
    // Two instance ids, so each worker answers for itself what other instances carry to it.
    expect(await instanceChannels()).toHaveLength(2);
  });

  it('a stream started on one worker is resumed live on either, the same events in order', async () => {
    const chunks = Array.from({ length: 30 }, (_, i) => `w${i} `);
    ollama.enqueue({ kind: 'text', chunks, chunkDelayMs: 60 });
    const started = await openStream('POST', '/api/message/stream', { json: { message: 'a long answer', mode: 'chat' } });
    expect(started.status).toBe(200);
    const streamId = String(started.headers['x-stream-id']);
    await started.events((event) => event.id === `${streamId}:3`);

    // One resume after another, each on a new connection: the primary hands them to the workers in
    // turn, so the worker running the generation and the other one both answer some.
    const resumes: Stream[] = [];
    for (let i = 0; i < 4; i++) {
      const resumed = await openStream('GET', `/api/streams/${streamId}`, { headers: { 'Last-Event-ID': `${streamId}:3` } });
      expect(resumed.status).toBe(200);
      const [first] = await resumed.events(() => true);
      expect(first?.id).toBe(`${streamId}:4`);
      expect(first?.data.content).toBe('w3 ');
      resumes.push(resumed);
    }
    const rest = await started.events();
    const expectedIds = rest.map((event) => event.id);
    expect(rest.at(-1)?.data.type).toBe('done');
    for (const resumed of resumes) {
      const events = await resumed.events();
      // The first (event 4) was read above; the rest is what the starting request saw after it.
      expect([`${streamId}:4`, ...events.map((event) => event.id)]).toEqual([`${streamId}:4`, ...expectedIds.slice(expectedIds.indexOf(`${streamId}:4`) + 1)]);
      expect(events.at(-1)?.data).toMatchObject({ type: 'done', metadata: { finishReason: 'stop' } });
    }

    const owner = await workerOf(started.requestId);
    const resumers = await Promise.all(resumes.map((resumed) => workerOf(resumed.requestId)));
    expect(resumers).toContain(owner);
    expect(resumers.some((worker) => worker !== owner)).toBe(true);

    // Stored once, whole, whichever worker was asked.
    const conversationId = String(rest.at(-1)?.data.metadata.conversationId);
    const stored = await call('GET', `/api/conversation/${conversationId}`);
    expect(stored.body.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`)).toEqual(['user: a long answer', `assistant: ${chunks.join('')}`]);
  });

  it('a rate limit is one count across the workers', async () => {
    const replies = [];
    for (let i = 0; i < 6; i++) replies.push(await call('POST', '/api/model/switch', {}));
    // Counted per worker, four a minute would let eight through.
    expect(replies.map((reply) => reply.status)).toEqual([400, 400, 400, 400, 429, 429]);
    expect(replies.map((reply) => reply.headers['x-ratelimit-remaining'])).toEqual(['3', '2', '1', '0', '0', '0']);
    const workers = await Promise.all(replies.map((reply) => workerOf(reply.requestId)));
    expect(new Set(workers.slice(0, 4)).size).toBe(2);
  });

  it.runIf(sandboxAvailable)('a terminal lives in one worker: its requests reaching the other are carried to it', async () => {
    // Said once, by the primary: a terminal's socket reaches its worker only part of the time.
    const warnings = records().filter((record) => record.msg?.startsWith('WORKERS=2 with ENABLE_SYSTEM_COMMANDS'));
    expect(warnings.map((record) => record.worker)).toEqual([undefined]);
    expect((await call('POST', '/api/workspaces/add', { name: 'workers', path: workspace.path })).status).toBe(200);
    const created = await call('POST', '/api/terminals', {});
    expect(created.status).toBe(200);
    const terminalId = created.body.terminalId as string;
    const owner = await workerOf(created.requestId);
    const runs = [];
    // Through the owner's egress proxy to the fake, whichever worker the request reached.
    // (A script: curl named on the command line to a loopback address is held for confirmation.)
    workspace.file('fetch.sh', `#!/bin/bash\ncurl -s ${ollama.origin}/\n`, 0o755);
    for (let i = 0; i < 4; i++) runs.push(await call('POST', `/api/terminals/${terminalId}/execute`, { command: './fetch.sh' }));
    expect(runs.map((run) => [run.status, run.body.output, run.body.exitCode])).toEqual(Array.from({ length: 4 }, () => [200, 'Ollama is running', 0]));
    const workers = await Promise.all(runs.map((run) => workerOf(run.requestId)));
    expect(workers).toContain(owner);
    expect(workers.some((worker) => worker !== owner)).toBe(true);
    expect((await call('DELETE', `/api/terminals/${terminalId}`)).status).toBe(200);
  });

  it('a worker killed with SIGKILL is replaced, and the other answers everything meanwhile', async () => {
    const before = listeningWorkers();
    const channelsBefore = await instanceChannels();
    const [victim, victimPid] = [...before.entries()].sort(([a], [b]) => a - b)[0] ?? [0, 0];
    process.kill(victimPid, 'SIGKILL');
    await waitFor(() => records().find((record) => record.msg === 'a worker stopped; starting another' && record.worker === victim), 5000, 'the primary to see the death');

    // While the replacement starts, the other worker answers everything.
    const during = [];
    for (let i = 0; i < 4; i++) during.push(await call('GET', '/api/status'));
    expect(during.map((reply) => reply.status)).toEqual([200, 200, 200, 200]);
    const survivor = [...before.keys()].find((worker) => worker !== victim);
    expect(await Promise.all(during.map((reply) => workerOf(reply.requestId)))).toEqual([survivor, survivor, survivor, survivor]);

    const replacement = await waitFor(() => [...listeningWorkers().keys()].find((worker) => !before.has(worker)), 20_000, 'a new worker listening');
    const after = [];
    for (let i = 0; i < 6; i++) after.push(await call('GET', '/api/status'));
    expect(after.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const workers = new Set(await Promise.all(after.map((reply) => workerOf(reply.requestId))));
    expect(workers.has(replacement)).toBe(true);
    expect(workers.has(victim)).toBe(false);
    expect(workers.size).toBe(2);
    // The dead worker's instance left the bus; the new one has an id of its own.
    const channelsAfter = await waitFor(async () => {
      const channels = await instanceChannels();
      return channels.length === 2 && channels.some((channel) => !channelsBefore.includes(channel)) ? channels : undefined;
    });
    expect(channelsAfter.filter((channel) => channelsBefore.includes(channel))).toHaveLength(1);
  });

  it('SIGTERM to the primary stops every worker gracefully and frees the port', async () => {
    const pids = [...listeningWorkers().values()].filter(alive);
    expect(pids).toHaveLength(2);
    service.child.kill('SIGTERM');
    expect(await service.exit).toEqual({ code: 0, signal: null });
    expect(pids.filter(alive)).toEqual([]);
    const stopped = records().filter((record) => record.msg === 'stopped');
    // Each live worker's own graceful stop, then the primary's.
    expect(stopped.filter((record) => record.worker !== undefined)).toHaveLength(2);
    expect(stopped.at(-1)?.worker).toBeUndefined();
    await expect(call('GET', '/api/status')).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('WORKERS start-up mistakes: one line on stderr, exit status 1, no worker left', () => {
  /** Runs the service until it exits by itself. */
  async function runService(env: Record<string, string>) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', LOG_FORMAT: 'json', WORKERS: '2', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(timer);
    // Nothing fatal with a stack: the one line says it all.
    expect(stdout.split('\n').filter((line) => line.includes('"level":60'))).toEqual([]);
    return { code, stderr, stdout };
  }

  it('more than one process on SQLite is refused before anything starts', async () => {
    const outcome = await runService({ DATABASE_URL: 'file:/nonexistent-folder/assistant.db' });
    expect(outcome).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'Invalid configuration: WORKERS is 2, and more than one process needs a postgresql:// DATABASE_URL and REDIS_URL (with CLUSTER_SECRET): the processes share streams, rate limits and terminals through them only; DATABASE_URL is SQLite (got "2")\n',
    });
  });

  const cluster = { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: freshRedisPrefix(), CLUSTER_SECRET: 'worker-processes-test-cluster-secret' };

  it('an unreachable PostgreSQL is told by the primary, which forks no worker', async () => {
    const outcome = await runService({ ...cluster, PORT: '0', DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/assistant' });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe('Cannot start: PostgreSQL at 127.0.0.1:1 cannot be reached (ECONNREFUSED); start PostgreSQL there or correct DATABASE_URL\n');
    expect(outcome.stdout).not.toContain('"worker"');
  });

  it.runIf(redisAvailable && postgresAvailable)('a port in use stops the start with the first worker\'s line; no second worker is forked', async () => {
    const occupied = createServer();
    occupied.listen(0, '127.0.0.1');
    await once(occupied, 'listening');
    const port = (occupied.address() as { port: number }).port;
    const database = await createTestDatabase('postgresql');
    try {
      const outcome = await runService({ ...cluster, PORT: String(port), DATABASE_URL: database.url });
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).toBe(`Cannot start: PORT ${port} is already in use on 127.0.0.1 (another program, or this service running already); stop it or set PORT to a free port\n`);
      expect(outcome.stdout).not.toContain('"worker":2');
    } finally {
      occupied.close();
      await database.drop();
    }
  });
});
