// Keep-alive HTTP load for the benchmarks: back-to-back clients, latency percentiles.
import { Agent, request } from 'node:http';

export interface LoadResult {
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/** The value at `fraction` of a sorted list (0.5 = median). */
export function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

export function get(agent: Agent, url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => {
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * `concurrency` keep-alive clients request `url` back to back for `seconds`; `headers` is asked
 * for each request's headers (a bearer token, say).
 */
export async function load(url: string, concurrency: number, seconds: number, headers: () => Record<string, string> = () => ({})): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const client = async () => {
    while (performance.now() < deadline) {
      const started = performance.now();
      const status = await get(agent, url, headers()).catch(() => 0);
      latencies.push(performance.now() - started);
      if (status !== 200) errors++;
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: concurrency }, client));
  const elapsed = (performance.now() - began) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}
