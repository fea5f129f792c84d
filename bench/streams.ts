// `npm run bench` (sixth part), issue 7: 2,000 slow streams open at once. The upstream
// (bench/streams-upstream.ts, its own process) answers each stream with 80 Chat Completions chunks
// 100–250 ms apart, about 14 s; every chunk says when it left. This process opens all the streams
// in one go, first straight to the upstream (the baseline: what the upstream and this client add
// on their own), then through the built service (`POST /api/unified/stream`, SQLite, one
// conversation per stream), and reads every event as it arrives. Prints a table; results are
// recorded in BENCHMARKS.md.
//
// Measured per route: streams that failed (not 200, an `error` event, no proper end, a chunk
// missing or out of order, finishReason other than `stop`); between consecutive chunks of a
// stream, the gap the upstream emitted, the gap this client saw and their difference, the gap
// added on the way; the memory of the route's processes with every stream open against idle.
//
// The connections are made before the streams are asked for (see stream-phase.ts);
// BENCH_NEW_CONNECTIONS=1 gives every stream a new one instead. `tsx bench/streams.ts --cpu-prof`
// also writes a CPU profile of the service and prints its hot spots. BENCH_STREAMS sets how many
// streams (default 2,000). BENCH_DIST names the build to start (default dist: an A/B runs this
// against two builds in folders of their own), BENCH_NODE_FLAGS adds flags to the service's node
// (V8 heap flags, `--trace-gc`). Each costs a descriptor here and in the upstream, two in the service:
// `ulimit -n` must allow a little more than the count (checked).
import { setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startService } from './chat-processes.js';
import { printHotSpots } from './chat-profile.js';
import { heapProbeFlags, openFilesLimit } from './proc-stats.js';
import { seedConversations } from './seed-conversations.js';
import { readSlowStream, type SlowStreamTarget } from './slow-stream-reader.js';
import { runPhase, type PhaseResult, type Usage } from './stream-phase.js';
import type { Spread } from './stream-gaps.js';
import { slowStreamServiceEnv, startSlowUpstream } from './slow-upstream.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 2000);
/** BENCH_NEW_CONNECTIONS=1: every stream on a connection made with it (see stream-phase.ts). */
const newConnections = process.env.BENCH_NEW_CONNECTIONS === '1';
const extraNodeFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
const CHUNKS = 80;
/** A phase's streams take about 14 s once open; whatever still runs after this has failed. */
const PHASE_LIMIT_MS = 60_000;
/** Issue 7's targets. */
const ADDED_GAP_P99_TARGET_MS = 50;
const PER_STREAM_TARGET_KB = 64;

/**
 * One empty conversation per stream, so that no two streams share a history or a row. They are
 * written through the driver (bench/seed-conversations.ts), not imported over REST: the imports
 * would go through Prisma and leave the service's memory grown before its idle reading.
 */
async function conversationsFor(serviceUrl: string, databaseUrl: string, count: number): Promise<string[]> {
  await seedConversations(databaseUrl, { conversations: count, perConversation: 0, longConversation: 0 });
  const ids: string[] = [];
  while (ids.length < count) {
    const res = await fetch(`${serviceUrl}/api/conversations?limit=200&offset=${ids.length}`);
    const page = (await res.json()) as { conversations: { id: string }[] };
    if (page.conversations.length === 0) throw new Error(`the service lists ${ids.length} conversations, ${count} were seeded`);
    ids.push(...page.conversations.map((conversation) => conversation.id));
  }
  return ids;
}

function directTarget(upstreamUrl: string, chunks: number): SlowStreamTarget {
  const body = JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: `Answer slowly. chunks=${chunks}` }],
    stream: true,
    stream_options: { include_usage: true },
  });
  return { url: `${upstreamUrl}/chat/completions`, body, reply: 'openai', chunks };
}

function serviceTarget(serviceUrl: string, chunks: number, conversationId?: string): SlowStreamTarget {
  const body = JSON.stringify({
    provider: 'openai',
    message: `Answer slowly. chunks=${chunks}`,
    mode: 'chat',
    ...(conversationId === undefined ? {} : { conversation_id: conversationId }),
  });
  return { url: `${serviceUrl}/api/unified/stream`, body, reply: 'service', chunks };
}

/** A few short streams by each route, so that what every stream shares is loaded and compiled before the idle reading. */
async function warmUp(upstreamUrl: string, serviceUrl: string): Promise<void> {
  const agent = new Agent({ keepAlive: false });
  const hooks = { onOpen: () => undefined, onClose: () => undefined };
  const signal = AbortSignal.timeout(20_000);
  setMaxListeners(0, signal);
  const records = await Promise.all(
    Array.from({ length: 20 }, (_, index) => readSlowStream(agent, index % 2 === 0 ? directTarget(upstreamUrl, 3) : serviceTarget(serviceUrl, 3), hooks, signal)),
  );
  const failed = records.find((record) => record.failure !== null);
  if (failed) throw new Error(`a warm-up stream failed: ${failed.failure ?? ''}`);
}

const ms = (value: number) => `${value.toFixed(1)} ms`;
const spreadOf = (s: Spread) => `${ms(s.p50)} / ${ms(s.p99)} / ${ms(s.max)}`;
const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
const perStream = (fromKb: number, toKb: number) => `${((toKb - fromKb) / STREAMS).toFixed(1)} KB`;

function rssCell(usage: Usage | undefined): string {
  if (usage === undefined) return '—';
  return `${mb(usage.idleRssKb)} → ${mb(usage.peakRssKb)}: **${perStream(usage.idleRssKb, usage.peakRssKb)}** per stream`;
}

function heapCell(usage: Usage | undefined): string {
  if (usage === undefined || Number.isNaN(usage.idleHeapKb)) return '—';
  if (Number.isNaN(usage.peakHeapKb)) return `${mb(usage.idleHeapKb)} idle; not sampled with all open (they never were)`;
  const live = Number.isNaN(usage.liveHeapKb) ? 'no full collection while all were open' : `after a full collection ${mb(usage.liveHeapKb)}: ${perStream(usage.idleHeapKb, usage.liveHeapKb)} per stream`;
  return `${mb(usage.idleHeapKb)} → peak ${mb(usage.peakHeapKb)} (garbage included): ${perStream(usage.idleHeapKb, usage.peakHeapKb)} per stream; ${live}`;
}

function cpuCell(phase: PhaseResult, name: string): string {
  const usage = phase.usage.get(name);
  if (usage === undefined) return '—';
  const seconds = (value: number) => `${(value / 1000).toFixed(1)} s`;
  const perChunkOverall = ((usage.userMs + usage.systemMs) * 1000) / phase.summary.chunks;
  const whole = `${seconds(usage.userMs + usage.systemMs)} (user ${seconds(usage.userMs)}, system ${seconds(usage.systemMs)}) in ${seconds(phase.elapsedMs)}, ${perChunkOverall.toFixed(0)} µs per chunk`;
  const window = phase.allOpenWindow;
  if (window === null || Number.isNaN(usage.allOpenCpuShare)) return whole;
  const perChunk = (usage.allOpenCpuShare * window.ms * 1000) / window.chunks;
  return `${whole}; while all open ${(usage.allOpenCpuShare * 100).toFixed(0)} % of a core, ${perChunk.toFixed(0)} µs per chunk`;
}

function tableOf(direct: PhaseResult, service: PhaseResult): string {
  const rows: [string, (phase: PhaseResult) => string][] = [
    ['streams without a fault', (p) => `${p.summary.ok} of ${p.summary.streams}`],
    ['connections made before the streams were asked for', (p) => (p.preconnected === 0 ? 'none: one new connection per stream' : String(p.preconnected))],
    ['open at once (peak); all open after', (p) => `${p.peakOpen}; ${p.allOpenMs === null ? 'never all' : ms(p.allOpenMs)}`],
    ['response headers after the request (p50 / p99 / max)', (p) => spreadOf(p.headers)],
    ['connections dropped on a full accept queue (machine-wide)', (p) => String(p.listenOverflows)],
    ['all open at once for', (p) => (p.allOpenWindow === null ? '—' : `${(p.allOpenWindow.ms / 1000).toFixed(1)} s, ${(p.allOpenWindow.chunks / (p.allOpenWindow.ms / 1000)).toFixed(0)} chunks/s`)],
    ['text chunks received', (p) => String(p.summary.chunks)],
    ['gap the upstream emitted (p50 / p99 / max)', (p) => spreadOf(p.summary.emittedGap)],
    ['gap the client saw (p50 / p99 / max)', (p) => spreadOf(p.summary.clientGap)],
    ['**added gap** (p50 / p99 / max)', (p) => spreadOf(p.summary.addedGap)],
    ['added gap while all were open (p50 / p99 / max)', (p) => `${spreadOf(p.summary.addedGapAllOpen)} (${p.summary.addedGapAllOpen.pairs} pairs)`],
    ['emitted → received, per chunk (p50 / p99 / max)', (p) => spreadOf(p.summary.delay)],
    ['service RSS idle → peak with all open', (p) => rssCell(p.usage.get('service'))],
    ['service heap in use idle → with all open', (p) => heapCell(p.usage.get('service'))],
    ['upstream RSS idle → peak with all open', (p) => rssCell(p.usage.get('upstream'))],
    ['CPU of the service', (p) => cpuCell(p, 'service')],
    ['CPU of the upstream', (p) => cpuCell(p, 'upstream')],
    ['CPU of this load generator', (p) => `${(p.clientCpuMs / 1000).toFixed(1)} s`],
  ];
  return [
    `| ${STREAMS} slow streams at once | straight from the upstream | through the service (\`POST /api/unified/stream\`) |`,
    '|---|---|---|',
    ...rows.map(([label, cell]) => `| ${label} | ${cell(direct)} | ${cell(service)} |`),
  ].join('\n');
}

function printTargets(direct: PhaseResult, service: PhaseResult): void {
  const usage = service.usage.get('service');
  const rssPerStream = usage === undefined ? Number.NaN : (usage.peakRssKb - usage.idleRssKb) / STREAMS;
  const faults = service.summary.streams - service.summary.ok;
  const addedP99 = service.summary.addedGap.p99;
  const lines = [
    `- ${STREAMS} open at once, no error: ${service.peakOpen} open at once at the most, ${faults} failed: ${faults === 0 && service.peakOpen === STREAMS ? 'met' : 'missed'}`,
    `- p99 gap between events under ${ADDED_GAP_P99_TARGET_MS} ms (added to the upstream's): ${ms(addedP99)} (straight from the upstream ${ms(direct.summary.addedGap.p99)}): ${addedP99 < ADDED_GAP_P99_TARGET_MS ? 'met' : 'missed'}`,
    `- under ${PER_STREAM_TARGET_KB} KB per stream (service RSS): ${rssPerStream.toFixed(1)} KB: ${rssPerStream < PER_STREAM_TARGET_KB ? 'met' : 'missed'}`,
  ];
  for (const [route, phase] of [['straight', direct], ['service', service]] as const) {
    for (const [reason, count] of phase.summary.failures.slice(0, 5)) lines.push(`  ${route}: ${count} × ${reason}`);
  }
  console.log(`\nTargets (issue 7):\n${lines.join('\n')}`);
}

async function main(): Promise<void> {
  if (openFilesLimit() < STREAMS + 500) {
    throw new Error(`ulimit -n is ${openFilesLimit()}: ${STREAMS} streams need about ${STREAMS + 500} descriptors per process (raise it with ulimit -n)`);
  }
  // Other work on the machine shifts every row; the load average says how much there was.
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const folder = mkdtempSync(join(tmpdir(), 'assistant-bench-streams-'));
  const heapFile = join(folder, 'heap.json');
  const databaseUrl = `file:${join(folder, 'bench.db')}`;
  // Kept after the run, for a closer look than the hot spots printed.
  const profileDir = process.argv.includes('--cpu-prof') ? mkdtempSync(join(tmpdir(), 'assistant-bench-streams-prof-')) : undefined;
  try {
    const upstream = await startSlowUpstream(CHUNKS);
    const service = await startService(
      slowStreamServiceEnv(upstream.url, STREAMS, databaseUrl, heapFile),
      [...heapProbeFlags, ...extraNodeFlags, ...(profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`])],
      process.env.BENCH_DIST ?? 'dist',
    ).catch(async (error: unknown) => {
      await upstream.stop();
      throw error;
    });
    try {
      const conversations = await conversationsFor(service.url, databaseUrl, STREAMS);
      await warmUp(upstream.url, service.url);
      await sleep(2000);
      const upstreamWatch = { name: 'upstream', child: upstream.child };
      const direct = await runPhase({
        streams: STREAMS,
        targetFor: () => directTarget(upstream.url, CHUNKS),
        connectFirst: newConnections ? null : `${upstream.url}/models`,
        watched: [upstreamWatch],
        limitMs: PHASE_LIMIT_MS,
      });
      // The upstream's sockets and timers wind down before the service's idle reading.
      await sleep(3000);
      const throughService = await runPhase({
        streams: STREAMS,
        targetFor: (index) => serviceTarget(service.url, CHUNKS, conversations[index]),
        connectFirst: newConnections ? null : `${service.url}/api/status`,
        watched: [{ name: 'service', child: service.child, heapFile }, upstreamWatch],
        limitMs: PHASE_LIMIT_MS,
      });
      console.log(tableOf(direct, throughService));
      printTargets(direct, throughService);
      console.log(`\nLoad average (1 min) at start ${loadBefore.toFixed(2)}, at end ${(loadavg()[0] ?? Number.NaN).toFixed(2)}.`);
      if (throughService.summary.ok !== STREAMS) process.exitCode = 1;
    } finally {
      await Promise.all([service.stop(), upstream.stop()]);
    }
    // The profile is written as the service exits.
    if (profileDir !== undefined) printHotSpots(profileDir);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

await main();
