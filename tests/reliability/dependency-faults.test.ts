import { describe, expect, it } from 'vitest';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// Issue 7's dependency faults: a TCP proxy the test controls stands between the service and a
// dependency and is cut while requests keep coming (the machine's own services are never
// stopped). Redis cut: the service keeps serving (the rate limit fails open, status `degraded`)
// and reconnects by itself. (The PostgreSQL cut is not here yet: in about 1 run in 10 a reset
// mid-transaction left a pooled client checked out and the stop hung; see BENCHMARKS.md's notes.)

/** Requests sent back to back until stopped; what each answered. */
function keepRequesting(svc: TestService, requests: readonly [string, string, unknown?][]) {
  const statuses: number[] = [];
  const state = { running: true };
  const done = (async () => {
    for (let index = 0; state.running; index++) {
      const [method, path, json] = requests[index % requests.length] ?? ['GET', '/api/status'];
      const res = await svc.request(method, path, json === undefined ? {} : { json });
      statuses.push(res.status);
      if (res.status >= 400 && res.body?.error?.code === undefined) statuses.push(-1);
    }
  })();
  return {
    statuses,
    stop: async () => {
      state.running = false;
      await done;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!redisAvailable)('Redis cut under load', () => {
  it('keeps serving (limits fail open, status degraded) and reconnects by itself', async () => {
    const target = new URL(redisUrl);
    await using proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    await using svc = await startTestService('sqlite', {
      REDIS_URL: `redis://${proxy.address}`,
      REDIS_KEY_PREFIX: freshRedisPrefix(),
      RATE_LIMIT_ENABLED: 'true',
      API_RATE_LIMIT: '100000',
    });
    await waitFor(async () => ((await svc.request('GET', '/api/status')).body.redis === 'ok' ? true : undefined), 10_000, 'redis ok');
    const limited = await svc.request('GET', '/api/conversations');
    expect(limited.headers.get('x-ratelimit-limit')).toBe('100000');
    const load = keepRequesting(svc, [['GET', '/api/conversations'], ['GET', '/api/prompt-orders']]);
    await sleep(300);
    proxy.cut();
    await sleep(1000);
    const status = await svc.request('GET', '/api/status');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ status: 'degraded', redis: 'unreachable' });
    expect((await svc.request('GET', '/api/conversations')).status).toBe(200);
    proxy.restore();
    await waitFor(async () => ((await svc.request('GET', '/api/status')).body.redis === 'ok' ? true : undefined), 10_000, 'redis back');
    await load.stop();
    expect(load.statuses.filter((code) => code !== 200)).toEqual([]);
    expect(load.statuses.length).toBeGreaterThan(20);
    // Counting in Redis again: the remaining count moves.
    const first = Number((await svc.request('GET', '/api/conversations')).headers.get('x-ratelimit-remaining'));
    const second = Number((await svc.request('GET', '/api/conversations')).headers.get('x-ratelimit-remaining'));
    expect(second).toBeLessThan(first);
  });
});
