import type { ChildProcess } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { get, percentile } from './http-load.js';
import { cpuTimes, listenOverflows, readHeap, rssKb } from './proc-stats.js';
import { readSlowStream, type SlowStreamTarget, type StreamRecord } from './slow-stream-reader.js';
import { summarize, type GapSummary, type Spread } from './stream-gaps.js';

// One phase of the concurrent-streams benchmark: every stream opened at once, each read to its
// end, while the processes on the route (the service, the upstream) are sampled from /proc.
//
// The connections are made first, one per stream (a GET each on the keep-alive agent), and the
// streams are then all asked for at once over them: what is measured is the service holding the
// streams, not how fast it accepts new connections. That differs under load: Node 20's libuv
// accepts one connection per event-loop turn, so a burst of new connections arriving while
// streams already flow waits seconds in the accept queue (BENCHMARKS.md). `connectFirst: null`
// opens every stream on a new connection instead.

export interface Watched {
  name: string;
  child: ChildProcess;
  /** Set for a process started with the heap probe (proc-stats.ts). */
  heapFile?: string;
}

export interface Usage {
  idleRssKb: number;
  /** The largest RSS sampled while every stream was open (during the phase, if they never were). */
  peakRssKb: number;
  /** After a full collection, before the phase. */
  idleHeapKb: number;
  /** The largest heap in use sampled while every stream was open, garbage included. */
  peakHeapKb: number;
  /** The heap in use after the process's last full collection of its own while every stream was open. */
  liveHeapKb: number;
  /** CPU time over the whole phase, in ms. */
  userMs: number;
  systemMs: number;
  /** Share of one core while every stream was open, from the samples inside that window. */
  allOpenCpuShare: number;
}

export interface PhaseResult {
  summary: GapSummary;
  streams: number;
  peakOpen: number;
  /** From the first request sent until every stream had its headers, if they all were open at once. */
  allOpenMs: number | null;
  /** How long every stream was open at once, and the text chunks that arrived meanwhile. */
  allOpenWindow: { ms: number; chunks: number } | null;
  headers: Spread;
  elapsedMs: number;
  usage: Map<string, Usage>;
  /** This process's own CPU time (the load generator), in ms. */
  clientCpuMs: number;
  /** Connections dropped on a full accept queue during the phase, machine-wide (see listenOverflows). */
  listenOverflows: number;
  /** Connections made before the streams were asked for (0 when each stream made its own). */
  preconnected: number;
}

const SAMPLE_EVERY_MS = 250;

const pidOf = (watched: Watched) => watched.child.pid ?? 0;
// Epoch milliseconds, as the upstream stamps its chunks and the reader times their arrival.
const epoch = () => performance.timeOrigin + performance.now();

interface Window {
  from: number;
  to: number;
}

/** CPU used between the first and the last sample inside the window, as a share of one core. */
function cpuShare(samples: { at: number; cpuMs: number }[], window: Window | null): number {
  if (window === null) return Number.NaN;
  const inside = samples.filter((sample) => sample.at >= window.from && sample.at <= window.to);
  const first = inside[0];
  const last = inside.at(-1);
  if (first === undefined || last === undefined || last.at === first.at) return Number.NaN;
  return (last.cpuMs - first.cpuMs) / (last.at - first.at);
}

/** Makes `count` connections on the agent, each by a GET of `url`; returns how many it holds idle after. */
async function preconnect(agent: Agent, url: string, count: number): Promise<number> {
  const statuses = await Promise.all(Array.from({ length: count }, () => get(agent, url).catch(() => 0)));
  const failed = statuses.filter((status) => status !== 200).length;
  if (failed > 0) throw new Error(`${failed} of ${count} connections to ${url} failed`);
  // A socket goes back to the agent's free list just after its response ends.
  await new Promise((resolve) => setImmediate(resolve));
  return Object.values(agent.freeSockets).reduce((sum, sockets) => sum + (sockets?.length ?? 0), 0);
}

export interface PhaseOptions {
  streams: number;
  targetFor: (index: number) => SlowStreamTarget;
  /** A cheap GET on the route's origin, to make the connections with first; null for new connections per stream. */
  connectFirst: string | null;
  watched: Watched[];
  /** Streams still running after this have failed. */
  limitMs: number;
}

/** Opens every stream at once and reads them to their ends, sampling the watched processes. */
export async function runPhase({ streams, targetFor, connectFirst, watched, limitMs }: PhaseOptions): Promise<PhaseResult> {
  const usage = new Map<string, Usage>();
  const cpuSamples = new Map<string, { at: number; cpuMs: number }[]>();
  const cpuBefore = new Map<string, { user: number; system: number }>();
  for (const one of watched) {
    // The collection first, then a moment for the allocator to hand back what it freed: garbage
    // left by earlier work is not part of the idle baseline.
    const idleHeap = one.heapFile === undefined ? null : await readHeap(pidOf(one), one.heapFile, true);
    await sleep(500);
    usage.set(one.name, {
      idleRssKb: rssKb(pidOf(one)),
      peakRssKb: 0,
      idleHeapKb: idleHeap?.heapUsedKb ?? Number.NaN,
      peakHeapKb: Number.NaN,
      liveHeapKb: Number.NaN,
      userMs: 0,
      systemMs: 0,
      allOpenCpuShare: Number.NaN,
    });
    cpuSamples.set(one.name, []);
    cpuBefore.set(one.name, cpuTimes(pidOf(one)));
  }

  // Every stream on a socket of its own, all at once: no queueing in the agent, and every
  // connection made beforehand kept (the agent keeps 256 idle ones by default).
  const agent = new Agent({ keepAlive: true, maxSockets: streams, maxFreeSockets: streams });
  // The servers close idle keep-alive connections after 5 s; the streams follow at once.
  const preconnected = connectFirst === null ? 0 : await preconnect(agent, connectFirst, streams);
  const deadline = AbortSignal.timeout(limitMs);
  // Every stream listens to it.
  setMaxListeners(0, deadline);
  let open = 0;
  let peakOpen = 0;
  // A holder, not `let`s: the hooks set them, which control-flow narrowing cannot see.
  const moments: { allOpenAt: number | null; firstCloseAt: number | null } = { allOpenAt: null, firstCloseAt: null };
  const hooks = {
    onOpen: () => {
      open++;
      peakOpen = Math.max(peakOpen, open);
      if (open === streams) moments.allOpenAt = epoch();
    },
    onClose: () => {
      if (moments.allOpenAt !== null) moments.firstCloseAt ??= epoch();
      open = Math.max(0, open - 1);
    },
  };

  // RSS and CPU every SAMPLE_EVERY_MS, the heap as often as the probe answers; the peaks are taken
  // while every stream is open, the load this benchmark is about.
  let sampling = true;
  const sample = async (one: Watched) => {
    const entry = usage.get(one.name);
    const samples = cpuSamples.get(one.name);
    while (sampling && entry !== undefined && samples !== undefined) {
      const allOpen = moments.allOpenAt !== null && open === streams;
      const { user, system } = cpuTimes(pidOf(one));
      samples.push({ at: epoch(), cpuMs: user + system });
      const rss = rssKb(pidOf(one));
      if (allOpen || moments.allOpenAt === null) entry.peakRssKb = Math.max(entry.peakRssKb, rss);
      if (one.heapFile !== undefined && allOpen) {
        const heap = await readHeap(pidOf(one), one.heapFile);
        if (heap !== null && !(heap.heapUsedKb <= entry.peakHeapKb)) entry.peakHeapKb = heap.heapUsedKb;
        const { allOpenAt } = moments;
        if (heap?.afterFullGc && allOpenAt !== null && heap.afterFullGc.at >= allOpenAt) entry.liveHeapKb = heap.afterFullGc.heapUsedKb;
      }
      await sleep(SAMPLE_EVERY_MS);
    }
  };
  const samplers = watched.map(sample);

  const clientCpuBefore = process.cpuUsage();
  const overflowsBefore = listenOverflows();
  const began = epoch();
  const records: StreamRecord[] = await Promise.all(Array.from({ length: streams }, (_, index) => readSlowStream(agent, targetFor(index), hooks, deadline)));
  const elapsedMs = epoch() - began;
  const clientCpu = process.cpuUsage(clientCpuBefore);
  const overflows = listenOverflows() - overflowsBefore;
  sampling = false;
  await Promise.all(samplers);
  agent.destroy();

  const { allOpenAt, firstCloseAt } = moments;
  const allOpen = allOpenAt === null || firstCloseAt === null ? null : { from: allOpenAt, to: firstCloseAt };
  for (const one of watched) {
    const entry = usage.get(one.name);
    const before = cpuBefore.get(one.name);
    if (entry === undefined || before === undefined) continue;
    const after = cpuTimes(pidOf(one));
    entry.userMs = after.user - before.user;
    entry.systemMs = after.system - before.system;
    entry.allOpenCpuShare = cpuShare(cpuSamples.get(one.name) ?? [], allOpen);
  }
  const headersMs = records.flatMap((record) => (record.headersMs === null ? [] : [record.headersMs])).sort((a, b) => a - b);
  const chunksIn = (window: Window) => records.reduce((sum, record) => sum + record.received.filter((at) => at >= window.from && at <= window.to).length, 0);
  return {
    summary: summarize(records, allOpen),
    streams,
    peakOpen,
    allOpenMs: allOpenAt === null ? null : allOpenAt - began,
    allOpenWindow: allOpen === null ? null : { ms: allOpen.to - allOpen.from, chunks: chunksIn(allOpen) },
    headers: { p50: percentile(headersMs, 0.5), p99: percentile(headersMs, 0.99), max: headersMs.at(-1) ?? Number.NaN },
    elapsedMs,
    usage,
    clientCpuMs: (clientCpu.user + clientCpu.system) / 1000,
    listenOverflows: overflows,
    preconnected,
  };
}
