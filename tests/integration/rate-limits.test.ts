import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthService } from '../helpers/auth-service.js';
import { closedOrigin } from '../helpers/closed-origin.js';
import { postgresAvailable } from '../helpers/databases.js';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §9: per-IP counters per group, the three headers on every /api response but health and
// documentation, 429 in the envelope with Retry-After, checked before authentication (§2); and
// with REDIS_URL, counters shared by the instances (§9b).

const limits = { RATE_LIMIT_ENABLED: 'true', API_RATE_LIMIT: '5', RATE_LIMIT_MODELS: '2', RATE_LIMIT_CHAT: '3', RATE_LIMIT_WORKSPACE: '4', RATE_LIMIT_TERMINAL: '4' };

describe('rate limits in one instance', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('sqlite', { ...limits, OLLAMA_BASE_URL: await closedOrigin() });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
  });

  it('every /api reply carries its group headers; the limit is 429 in the envelope with Retry-After; other groups go on', async () => {
    const before = Math.floor(Date.now() / 1000);
    const replies = [];
    for (let i = 0; i < 3; i++) replies.push(await service.request('POST', '/api/model/switch', { json: {} }));
    // The window opened at the first count, somewhere between these two instants.
    const after = Math.ceil(Date.now() / 1000);
    expect(replies.map((reply) => reply.status)).toEqual([400, 400, 429]);
    expect(replies.map((reply) => reply.headers.get('x-ratelimit-limit'))).toEqual(['2', '2', '2']);
    expect(replies.map((reply) => reply.headers.get('x-ratelimit-remaining'))).toEqual(['1', '0', '0']);
    const reset = Number(replies[0]?.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(before + 60);
    expect(reset).toBeLessThanOrEqual(after + 60);
    const refused = replies[2];
    expect(refused?.body).toMatchObject({ success: false, error: { code: 'RATE_LIMIT_EXCEEDED', details: { group: 'models', limit: 2 } } });
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused?.headers.get('retry-after'))).toBeLessThanOrEqual(60);

    const general = await service.request('GET', '/api/conversations');
    expect(general.status).toBe(200);
    expect(general.headers.get('x-ratelimit-limit')).toBe('5');
    const workspace = await service.request('GET', '/api/workspaces');
    expect(workspace.headers.get('x-ratelimit-limit')).toBe('4');
  });

  it('health and documentation are neither limited nor given the headers', async () => {
    for (const path of ['/api/status', '/api/openapi.json', '/api/docs']) {
      for (let i = 0; i < 7; i++) {
        const reply = await service.request('GET', path);
        expect(reply.status, path).toBe(200);
        expect(reply.headers.get('x-ratelimit-limit'), path).toBeNull();
      }
    }
  });

  it('unknown /api paths count in the general group; /trpc counts each procedure in its own group', async () => {
    const unknown = await service.request('GET', '/api/no-such-path');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-ratelimit-limit')).toBe('5');
    const input = encodeURIComponent(JSON.stringify({ json: {} }));
    const chat = [];
    for (let i = 0; i < 4; i++) chat.push(await service.request('POST', '/trpc/chat.send', { json: { json: {} } }));
    expect(chat.map((reply) => reply.status)).toEqual([400, 400, 400, 429]);
    expect(chat[0]?.headers.get('x-ratelimit-limit')).toBe('3');
    expect((await service.request('GET', `/trpc/system.status?input=${input}`)).headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('spellings the routers accept count the same: other letter case, encoded or prefixed /trpc names, batches', async () => {
    await using fresh = await startTestService('sqlite', limits);
    expect((await fresh.request('POST', '/API/models/download', { json: {} })).headers.get('x-ratelimit-limit')).toBe('2');
    expect((await fresh.request('POST', '/api/model/switch', { json: {} })).status).toBe(400);
    expect((await fresh.request('POST', '/api/model/switch', { json: {} })).status).toBe(429);

    // Each call of a batch counts (issue 20: one count per procedure call); the reply shows what is left after both.
    const batch = await fresh.request('POST', '/trpc/chat.send,chat.send?batch=1', { json: { 0: { json: {} }, 1: { json: {} } } });
    expect(batch.headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await fresh.request('POST', '/trpc/anything/chat%2Esend', { json: { json: {} } })).headers.get('x-ratelimit-limit')).toBe('3');
    expect((await fresh.request('POST', '/trpc/chat.send', { json: { json: {} } })).status).toBe(429);
  });

  it('counts per client address: with TRUST_PROXY it is X-Forwarded-For, without it the header is ignored', async () => {
    await using trusting = await startTestService('sqlite', { ...limits, TRUST_PROXY: 'loopback' });
    await using untrusting = await startTestService('sqlite', { ...limits });
    const from = (svc: TestService, ip: string) => svc.request('POST', '/api/models/download', { json: {}, headers: { 'x-forwarded-for': ip } });
    const statuses = async (svc: TestService) => [
      (await from(svc, '198.51.100.1')).status,
      (await from(svc, '198.51.100.1')).status,
      (await from(svc, '198.51.100.2')).status,
      (await from(svc, '198.51.100.1')).status,
    ];
    expect(await statuses(trusting)).toEqual([400, 400, 400, 429]);
    expect(await statuses(untrusting)).toEqual([400, 400, 429, 429]);
  });

  it('with RATE_LIMIT_ENABLED=false there are no headers and no 429', async () => {
    await using unlimited = await startTestService('sqlite', { ...limits, RATE_LIMIT_ENABLED: 'false' });
    for (let i = 0; i < 4; i++) {
      const reply = await unlimited.request('POST', '/api/model/switch', { json: {} });
      expect(reply.status).toBe(400);
      expect(reply.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });

  it('comes before authentication: without a token the limit still answers 429, not 401', async () => {
    const nowhere = await closedOrigin();
    await using guarded = await startAuthService('sqlite', { issuer: nowhere, clientId: 'assistant', audience: 'assistant' }, limits);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await guarded.request('POST', '/api/model/switch', { json: {} })).status);
    expect(statuses).toEqual([401, 401, 429]);
  });
});

describe.runIf(redisAvailable)('rate limits shared through Redis', () => {
  it.runIf(postgresAvailable)('two instances on one PostgreSQL database and one Redis split one limit', async () => {
    const prefix = freshRedisPrefix();
    const env = { ...limits, REDIS_URL: redisUrl, CLUSTER_SECRET: 'rate-limits-test-cluster-secret', REDIS_KEY_PREFIX: prefix };
    await using first = await startTestService('postgresql', env);
    await using second = await startTestService('postgresql', env, first.database);
    const chat = (svc: TestService) => svc.request('POST', '/api/message', { json: {} });
    const statuses = [(await chat(first)).status, (await chat(second)).status, (await chat(first)).status, (await chat(second)).status];
    expect(statuses).toEqual([400, 400, 400, 429]);
    expect((await chat(first)).status).toBe(429);
    expect((await first.request('GET', '/api/status')).body.redis).toBe('ok');
  });

  it('Redis unreachable: the service starts, requests pass unlimited, and the status says degraded', async () => {
    const down = (await closedOrigin()).replace('http:', 'redis:');
    await using service = await startTestService('sqlite', { ...limits, REDIS_URL: down, CLUSTER_SECRET: 'rate-limits-test-cluster-secret' });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await service.request('POST', '/api/model/switch', { json: {} })).status);
    expect(statuses).toEqual([400, 400, 400, 400]);
    const status = await service.request('GET', '/api/status');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ status: 'degraded', redis: 'unreachable' });
  });
});
