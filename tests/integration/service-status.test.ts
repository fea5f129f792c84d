import { expect, it, vi } from 'vitest';
import { getServiceStatus } from '../../src/core/status/service-status.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { startTestService } from '../helpers/test-service.js';

// The status probe: status requests that arrive while a database probe is under way share it, so
// a burst of health checks costs one query, and the next request after it probes again.

describeOnDatabases('the status probe', (kind) => {
  it('shares one database query among the requests that arrive while it runs, and probes afresh after', async () => {
    await using svc = await startTestService(kind);
    const { store, config, startedAt, sandbox, redis, providerReachability } = svc.service.deps;
    const realPing = store.reads.ping.bind(store.reads);
    const ping = vi.spyOn(store.reads, 'ping');
    const status = () => getServiceStatus(store, config, startedAt, sandbox, redis, providerReachability);

    const together = await Promise.all(Array.from({ length: 20 }, status));
    // No Ollama runs here, and it is the default model's provider (CONTRACT §3).
    expect(together.every((answer) => answer.status === 'degraded')).toBe(true);
    expect(ping).toHaveBeenCalledTimes(1);

    await status();
    expect(ping).toHaveBeenCalledTimes(2);
    // Over HTTP, fifty at once, with a probe slow enough (250 ms) that they arrive while it runs
    // however busy the machine is: how many a real probe gathers depends on timing (SQLite answers
    // before the next request is even read), and a test must not.
    ping.mockImplementation(async () => {
      await new Promise((resolve) => setTimeout(resolve, 250));
      await realPing();
    });
    const replies = await Promise.all(Array.from({ length: 50 }, () => svc.request('GET', '/api/status')));
    expect(replies.every((reply) => reply.status === 200)).toBe(true);
    expect(ping.mock.calls.length - 2).toBeLessThan(10);
  });
});
