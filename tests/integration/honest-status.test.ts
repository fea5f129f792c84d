import { createServer, request as rawRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ProviderReachability } from '../../src/core/status/provider-reachability.js';
import { startFakeOllama, startFakeOpenAI } from '../fakes/index.js';
import { closedOrigin } from '../helpers/closed-origin.js';
import { describeOnDatabases, postgresAdminUrl, postgresAvailable } from '../helpers/databases.js';
import { expectEnvelope, startTestService } from '../helpers/test-service.js';

// Issue 22, "honest status": /api/status says which providers answer and is `degraded` while the
// default model's provider does not (CONTRACT §3); /healthz and /readyz for process managers; a
// hosted model without a server key is listed as needing one; a chat error names the address and
// the setting to change.

const SERVER_OPENAI_KEY = 'sk-server-status-abcdefghij';

/** An Ollama stand-in whose /api/version answers after `delayMs`, counting the probes. */
async function slowOllama(delayMs: number): Promise<{ url: string; probes: () => number; server: Server }> {
  let probes = 0;
  const server = createServer((req, res) => {
    if (req.url !== '/api/version') {
      res.writeHead(404).end();
      return;
    }
    probes += 1;
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"version":"0.9.0"}'), delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, probes: () => probes, server };
}

/** A GET with a Host header of our choosing (fetch does not send one it is given). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string; rateLimit: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = rawRequest(url, { headers: { host } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        const limit = res.headers['x-ratelimit-limit'];
        resolve({ status: res.statusCode ?? 0, body, rateLimit: Array.isArray(limit) ? limit[0] : limit });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('provider reachability in GET /api/status', () => {
  it("lists each provider's reachability, and is degraded once the default model's provider stops answering", async () => {
    await using ollama = await startFakeOllama();
    await using openai = await startFakeOpenAI({ apiKey: SERVER_OPENAI_KEY });
    await using svc = await startTestService('sqlite', { OLLAMA_BASE_URL: ollama.url, OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: SERVER_OPENAI_KEY });

    const up = await svc.request('GET', '/api/status');
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ status: 'ok', problems: [], serviceDefaultModel: { name: 'llama3.2', provider: 'ollama' } });
    expect(up.body.providers).toEqual({
      ollama: { configured: true, defaultModel: 'llama3.2', reachable: true },
      // Its 401 to a request without a key still means it is there; the key is never sent.
      openai: { configured: true, defaultModel: 'gpt-4o-mini', reachable: true },
      // No server key and not the default's provider: the server does not use it, so it is not called.
      anthropic: { configured: false, defaultModel: 'claude-sonnet-4-5', reachable: null },
    });
    const probes = openai.requests.filter((request) => request.path === '/v1/models');
    expect(probes).toHaveLength(1);
    expect(probes[0]?.headers.authorization).toBeUndefined();
    expect(ollama.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /api/version']);

    await ollama.close();
    // The background probe runs every ~30 s while status is asked; a test does not wait that long.
    await svc.service.deps.providerReachability.refresh();
    const down = await svc.request('GET', '/api/status');
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({
      status: 'degraded',
      providers: { ollama: { reachable: false }, openai: { reachable: true } },
      problems: ['ollama, the provider of the service default model llama3.2, is unreachable (OLLAMA_BASE_URL)'],
    });
    // The status is public: it never shows a provider's address.
    expect(down.text).not.toContain(new URL(ollama.url).port);
  });

  it('another provider being unreachable is listed but does not degrade the status', async () => {
    await using ollama = await startFakeOllama();
    await using svc = await startTestService('sqlite', {
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: `${await closedOrigin()}/v1`,
      OPENAI_API_KEY: SERVER_OPENAI_KEY,
    });
    const status = await svc.request('GET', '/api/status');
    expect(status.body).toMatchObject({ status: 'ok', providers: { ollama: { reachable: true }, openai: { reachable: false } } });
  });

  it('answers from the last probe without waiting, refreshes a stale one behind the request, and shares a probe among a burst', async () => {
    const slow = await slowOllama(300);
    try {
      await using svc = await startTestService('sqlite');
      const { config, store } = svc.service.deps;
      const reachability = new ProviderReachability(
        { ...config, providers: { ...config.providers, ollama: { ...config.providers.ollama, baseUrl: slow.url } } },
        store,
        { ttlMs: 100 },
      );
      const first = await Promise.all(Array.from({ length: 50 }, () => reachability.current()));
      expect(first.every((snapshot) => snapshot.reachable.ollama === true)).toBe(true);
      expect(slow.probes()).toBe(1);

      await new Promise((resolve) => setTimeout(resolve, 150));
      const started = performance.now();
      const stale = await reachability.current();
      // Answered from the snapshot while the probe it started is still waiting on the slow Ollama.
      expect(performance.now() - started).toBeLessThan(100);
      expect(stale).toBe(first[0]);
      // refresh() joins the probe that request started rather than starting another.
      const fresh = await reachability.refresh();
      expect(fresh.checkedAt).toBeGreaterThan(stale.checkedAt);
      expect(slow.probes()).toBe(2);
      expect(await reachability.current()).toBe(fresh);
    } finally {
      slow.server.close();
    }
  });
});

describeOnDatabases('GET /healthz and GET /readyz', (kind) => {
  it('answer 200 without authentication, rate limit or Host check; /readyz is 503 while a shipped migration is missing', async () => {
    await using svc = await startTestService(kind, { RATE_LIMIT_ENABLED: 'true', API_RATE_LIMIT: '2', OLLAMA_BASE_URL: await closedOrigin() });
    // An orchestrator's probe names the instance by its own address (a pod IP).
    const podHost = '10.1.2.3:3000';
    for (let i = 0; i < 4; i += 1) {
      const health = await getWithHost(`${svc.url}/healthz`, podHost);
      expect(health.status).toBe(200);
      expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
      expect(health.rateLimit).toBeUndefined();
      const ready = await getWithHost(`${svc.url}/readyz`, podHost);
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.body)).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok' } });
    }
    // The same Host is refused on the API.
    expect((await getWithHost(`${svc.url}/api/status`, podHost)).status).toBe(403);
    // With API_RATE_LIMIT=2 spent, the API answers 429 and the probes still 200.
    for (let i = 0; i < 2; i += 1) expect((await svc.request('GET', '/api/conversations')).status).toBe(200);
    expectEnvelope(await svc.request('GET', '/api/conversations'), 429, 'RATE_LIMIT_EXCEEDED');
    expect((await svc.request('GET', '/healthz')).status).toBe(200);
    expect((await svc.request('GET', '/readyz')).status).toBe(200);
    // A provider being down is no reason to take the instance out of a load balancer.
    expect((await svc.request('GET', '/api/status')).body.status).toBe('degraded');

    // An older copy of the database restored under a newer version: its latest migration is missing.
    const [latest] = await svc.service.deps.store.db.$queryRaw<{ migration_name: string }[]>`
      SELECT "migration_name" FROM "_prisma_migrations" ORDER BY "migration_name" DESC LIMIT 1`;
    const name = latest?.migration_name ?? '';
    await svc.service.deps.store.db.$executeRaw`UPDATE "_prisma_migrations" SET "rolled_back_at" = "finished_at" WHERE "migration_name" = ${name}`;
    const notReady = await svc.request('GET', '/readyz');
    const error = expectEnvelope(notReady, 503, 'SERVICE_UNAVAILABLE');
    expect(error.details).toEqual({ checks: { database: 'ok', migrations: 'pending' }, pending: [name] });
    expect(error.message).toMatch(/lacks migrations/);
    expect((await svc.request('GET', '/healthz')).status).toBe(200);
    expect((await svc.request('POST', '/readyz')).status).toBe(404);
  });
});

describe.skipIf(!postgresAvailable)('/readyz with the database down', () => {
  it('is 503 while PostgreSQL refuses connections, /healthz stays 200, and both recover', async () => {
    await using svc = await startTestService('postgresql');
    const name = new URL(svc.database.url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
      const ready = await svc.request('GET', '/readyz');
      const error = expectEnvelope(ready, 503, 'SERVICE_UNAVAILABLE');
      expect(error.details).toEqual({ checks: { database: 'unreachable', migrations: 'unknown' } });
      expect(error.message).toContain('DATABASE_URL');
      // Liveness touches no database: restarting the process would not bring the database back.
      const health = await svc.request('GET', '/healthz');
      expect(health.status).toBe(200);
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    expect((await svc.request('GET', '/readyz')).status).toBe(200);
  });
});

describe('hosted models without a server key', () => {
  it("are listed as usable with the caller's apiKey, not as available; /v1/models keeps them", async () => {
    await using ollama = await startFakeOllama();
    await using svc = await startTestService('sqlite', { OLLAMA_BASE_URL: ollama.url });
    const models = (await svc.request('GET', '/api/models')).body.models as { name: string; provider: string; status: string; reason?: string }[];
    for (const [provider, name] of [
      ['openai', 'gpt-4o-mini'],
      ['anthropic', 'claude-sonnet-4-5'],
    ]) {
      expect(models.find((entry) => entry.provider === provider)).toMatchObject({ name, status: 'unavailable', reason: 'needs apiKey' });
    }
    expect(models.find((entry) => entry.provider === 'ollama')).toMatchObject({ status: 'available' });
    expect(models.find((entry) => entry.provider === 'ollama')?.reason).toBeUndefined();
    // A completion that sends X-Provider-Api-Key can use them.
    const ids = ((await svc.request('GET', '/v1/models')).body.data as { id: string }[]).map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5']));
  });
});

describe('chat errors name the address and the setting', () => {
  it('an unreachable provider: its address (no credentials) and the variable that sets it', async () => {
    const ollamaOrigin = await closedOrigin();
    const openaiOrigin = new URL(await closedOrigin());
    openaiOrigin.username = 'proxyuser';
    openaiOrigin.password = 'proxy-secret-123';
    await using svc = await startTestService('sqlite', {
      OLLAMA_BASE_URL: ollamaOrigin,
      OPENAI_BASE_URL: `${openaiOrigin.origin.replace('//', '//proxyuser:proxy-secret-123@')}/v1?key=query-secret-456`,
    });
    const ollama = expectEnvelope(await svc.request('POST', '/api/message', { json: { message: 'hello', mode: 'chat' } }), 503, 'MODEL_UNAVAILABLE');
    expect(ollama.message).toBe(`ollama is unreachable at ${ollamaOrigin} (set OLLAMA_BASE_URL)`);
    expect(ollama.details).toMatchObject({ provider: 'ollama', reason: 'unreachable', setting: 'OLLAMA_BASE_URL' });

    const reply = await svc.request('POST', '/api/unified/message', {
      json: { message: 'hello', mode: 'chat', provider: 'openai', apiKey: 'sk-caller-key-zyxwvu' },
    });
    const openai = expectEnvelope(reply, 503, 'MODEL_UNAVAILABLE');
    expect(openai.message).toBe(`openai is unreachable at ${openaiOrigin.origin}/v1 (set OPENAI_BASE_URL)`);
    for (const secret of ['proxy-secret-123', 'proxyuser', 'query-secret-456', 'sk-caller-key']) expect(reply.text).not.toContain(secret);
  });

  it('a refused key: the setting, never the key', async () => {
    await using openai = await startFakeOpenAI({ apiKey: 'sk-the-right-one' });
    await using svc = await startTestService('sqlite', { OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: SERVER_OPENAI_KEY });
    const reply = await svc.request('POST', '/api/unified/message', { json: { message: 'hello', mode: 'chat', provider: 'openai' } });
    const error = expectEnvelope(reply, 400, 'INVALID_REQUEST');
    expect(error.message).toBe('openai rejected the API key while generating the answer (send another apiKey, or set OPENAI_API_KEY)');
    expect(reply.text).not.toContain(SERVER_OPENAI_KEY);
    expect(reply.text).not.toContain('abcdefghij');
  });
});
