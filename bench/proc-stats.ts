import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

// What another process on this machine holds and has spent, and what the kernel counted, read
// from /proc; and a process's V8 heap, through a preload that writes `process.memoryUsage()` to a
// file when sent SIGUSR2 (apart from noting the heap after each full collection, it does nothing
// until asked).

/** Resident set size in KB (VmRSS of /proc/<pid>/status). */
export function rssKb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? Number.NaN);
}

/** User and system CPU time so far, in ms (/proc/<pid>/stat counts clock ticks of 10 ms). */
export function cpuTimes(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

/**
 * Connections the kernel dropped because a listening socket's accept queue was full, machine-wide
 * since boot (TcpExt ListenOverflows); each such client retries its SYN after 1, 3, 7, 15 s.
 */
export function listenOverflows(): number {
  const [names, values] = readFileSync('/proc/net/netstat', 'utf8').split('\n');
  const index = names?.split(' ').indexOf('ListenOverflows') ?? -1;
  return index === -1 ? Number.NaN : Number(values?.split(' ')[index]);
}

/** This process's soft limit on open files (`ulimit -n`). */
export function openFilesLimit(): number {
  const match = /Max open files\s+(\d+|unlimited)/.exec(readFileSync('/proc/self/limits', 'utf8'));
  return match?.[1] === undefined || match[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(match[1]);
}

/**
 * Node flags that install the heap probe; the process must also get `BENCH_HEAP_FILE=<file>`.
 * `--expose-gc` lets a reading ask for a full collection first (see heapUsedKb). The probe also
 * notes the heap in use just after each full collection the process runs by itself: what the
 * heap holds alive under load, without stopping the process to find out.
 */
export const heapProbeFlags = [
  '--expose-gc',
  '--import',
  `data:text/javascript,${encodeURIComponent(`
import { readFileSync, writeFileSync } from 'node:fs';
import { constants, PerformanceObserver } from 'node:perf_hooks';
let afterFullGc = null;
new PerformanceObserver((list) => {
  if (list.getEntries().some((entry) => entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) {
    afterFullGc = { at: Date.now(), heapUsed: process.memoryUsage().heapUsed };
  }
}).observe({ entryTypes: ['gc'] });
process.on('SIGUSR2', () => {
  const file = process.env.BENCH_HEAP_FILE;
  if (readFileSync(file, 'utf8') === 'collect') globalThis.gc?.();
  writeFileSync(file, JSON.stringify({ ...process.memoryUsage(), at: Date.now(), afterFullGc }));
});
`)}`,
];

export interface HeapReading {
  heapUsedKb: number;
  /** The heap in use after the process's latest full collection of its own, and when (epoch ms). */
  afterFullGc: { at: number; heapUsedKb: number } | null;
}

/**
 * The probed process's heap in use; null when it did not answer within a second (its event loop
 * answers the signal). `collect` runs a full garbage collection first: for an idle reading,
 * so garbage left by earlier work is not counted as the baseline; never under the load measured,
 * as it stops the process for as long as it takes.
 */
export async function readHeap(pid: number, file: string, collect = false): Promise<HeapReading | null> {
  writeFileSync(file, collect ? 'collect' : 'read');
  const asked = Date.now();
  process.kill(pid, 'SIGUSR2');
  while (Date.now() - asked < 1000) {
    await sleep(10);
    try {
      const usage = JSON.parse(readFileSync(file, 'utf8')) as { heapUsed: number; at: number; afterFullGc: { at: number; heapUsed: number } | null };
      // A file from an earlier request is stale.
      if (usage.at < asked) continue;
      const { afterFullGc } = usage;
      return { heapUsedKb: usage.heapUsed / 1024, afterFullGc: afterFullGc === null ? null : { at: afterFullGc.at, heapUsedKb: afterFullGc.heapUsed / 1024 } };
    } catch {
      // Not written yet, or caught mid-write: asked again on the next turn.
    }
  }
  return null;
}
