import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

// What another process on this machine holds and has spent, and what the kernel counted, read
// from /proc; and a process's V8 heap, through the preload bench/heap-probe.mjs.

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

/** The processes named `command` now (a PostgreSQL connection is a process of its own). */
export function pidsNamed(command: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/comm`, 'utf8').trim() === command;
      } catch {
        return false; // gone since the listing
      }
    })
    .map(Number);
}

/** CPU (user + system, ms) so far of those processes that still run (one that ended meanwhile is left out). */
export function cpuOfLiving(pids: number[]): Map<number, number> {
  const times = new Map<number, number>();
  for (const pid of pids) {
    try {
      const { user, system } = cpuTimes(pid);
      times.set(pid, user + system);
    } catch {
      // ended
    }
  }
  return times;
}

/** CPU spent since `earlier` (a cpuOfLiving reading) by the processes named `command` now. */
export function cpuSpentSince(command: string, earlier: Map<number, number>): number {
  return [...cpuOfLiving(pidsNamed(command))].reduce((sum, [pid, ms]) => sum + ms - (earlier.get(pid) ?? ms), 0);
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
 * Node flags that install the heap probe (bench/heap-probe.mjs); the process must also get
 * `HEAP_PROBE_FILE=<file>` in its environment, and `HEAP_PROBE_RESOURCES=1` to have its timers,
 * sockets and pipes counted. `--expose-gc` lets a reading ask for a full collection first.
 */
export const heapProbeFlags = ['--expose-gc', '--import', fileURLToPath(new URL('./heap-probe.mjs', import.meta.url))];

export interface HeapReading {
  heapUsedKb: number;
  rssKb: number;
  externalKb: number;
  /** The heap in use after the process's latest full collection of its own, and when (epoch ms). */
  afterFullGc: { at: number; heapUsedKb: number } | null;
  /** Timers, sockets and pipes alive by async resource type; empty unless HEAP_PROBE_RESOURCES=1. */
  alive: Record<string, number>;
}

/**
 * The probed process's heap in use; null when it did not answer within `waitMs` (its event loop
 * answers the signal). `collect` runs a full garbage collection first: for an idle reading,
 * so garbage left by earlier work is not counted as the baseline; never under the load measured,
 * as it stops the process for as long as it takes.
 */
export async function readHeap(pid: number, file: string, collect = false, waitMs = 1000): Promise<HeapReading | null> {
  writeFileSync(file, collect ? 'collect' : 'read');
  const asked = Date.now();
  process.kill(pid, 'SIGUSR2');
  while (Date.now() - asked < waitMs) {
    await sleep(10);
    try {
      const usage = JSON.parse(readFileSync(file, 'utf8')) as {
        heapUsed: number;
        rss: number;
        external: number;
        at: number;
        afterFullGc: { at: number; heapUsed: number } | null;
        alive: Record<string, number>;
      };
      // A file from an earlier request is stale.
      if (usage.at < asked) continue;
      const { afterFullGc } = usage;
      return {
        heapUsedKb: usage.heapUsed / 1024,
        rssKb: usage.rss / 1024,
        externalKb: usage.external / 1024,
        afterFullGc: afterFullGc === null ? null : { at: afterFullGc.at, heapUsedKb: afterFullGc.heapUsed / 1024 },
        alive: usage.alive,
      };
    } catch {
      // Not written yet, or caught mid-write: asked again on the next turn.
    }
  }
  return null;
}
