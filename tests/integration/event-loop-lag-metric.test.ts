import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheusText, samplesOf, valueOf, type Exposition } from '../helpers/prometheus-text.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// assistant_event_loop_lag_seconds (issue 20): a histogram of how late the event loop runs a
// timer. The service runs in this process, so holding this thread holds the service's loop: the
// test blocks it on purpose and reads the stall back from /metrics.

const lag = 'assistant_event_loop_lag_seconds';

async function scrape(service: TestService): Promise<Exposition> {
  const reply = await service.request('GET', '/metrics');
  expect(reply.status, reply.text).toBe(200);
  return parsePrometheusText(reply.text);
}

/** Observations longer than `seconds`: the count less the bucket that holds everything up to it. */
function longerThan(metrics: Exposition, seconds: string): number {
  return valueOf(metrics, `${lag}_count`) - valueOf(metrics, `${lag}_bucket`, { le: seconds });
}

function holdTheLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // Busy on purpose: nothing else may run on this thread meanwhile.
  }
}

describe('event-loop lag in /metrics', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('sqlite');
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
  });

  it('is a histogram with buckets from 1 ms to 10 s, observed many times a second', async () => {
    const first = await scrape(service);
    expect(first.types.get(lag)).toBe('histogram');
    const bounds = samplesOf(first, `${lag}_bucket`).map((sample) => sample.labels.le);
    expect(bounds).toEqual(['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf']);
    const before = valueOf(first, `${lag}_count`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(valueOf(await scrape(service), `${lag}_count`) - before).toBeGreaterThanOrEqual(5);
  });

  it('records a stall of the loop as one observation of its length', async () => {
    const before = await scrape(service);
    const stalls = longerThan(before, '0.25');
    const sum = valueOf(before, `${lag}_sum`);
    holdTheLoop(400);
    // The late timer runs as soon as the loop is free; the next scrape shows it.
    const after = await waitFor(async () => {
      const metrics = await scrape(service);
      return longerThan(metrics, '0.25') > stalls ? metrics : undefined;
    }, 5000, 'the stall to be observed');
    expect(longerThan(after, '0.25') - stalls).toBe(1);
    expect(longerThan(after, '1')).toBe(longerThan(before, '1'));
    expect(valueOf(after, `${lag}_sum`) - sum).toBeGreaterThanOrEqual(0.35);
  });

  it('stops sampling when the service stops', async () => {
    const stopped = await startTestService('sqlite');
    const { registry } = stopped.service.deps.metrics;
    await stopped[Symbol.asyncDispose]();
    const count = async () => parsePrometheusText(await registry.metrics()).samples.find((sample) => sample.name === `${lag}_count`)?.value;
    const atStop = await count();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await count()).toBe(atStop);
  });
});
