// What one open slow stream keeps alive in the service, by constructor: `tsx bench/stream-heap.ts`
// starts the slow upstream and the built service (BENCH_DIST, default dist), takes a heap
// snapshot idle, opens BENCH_STREAMS (default 500) streams of bench/streams.ts, takes another
// while all are open, and prints the objects that grew, per stream: count and self size by
// constructor (or by kind for strings, arrays, closures and native objects). Snapshots collect the
// garbage first, so this is the live heap; bench/streams.ts measures the RSS.
// BENCH_NODE_FLAGS adds flags to the service's node (e.g. V8 heap flags to try).
// BENCH_SAMPLING=1 instead runs V8's sampling heap profiler from idle until late in the streams
// and prints where what the heap holds then was allocated: garbage that only an old-space
// collection would free included, which is what the RSS pays for and a snapshot cannot show.
import { setMaxListeners } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startService } from './chat-processes.js';
import { heapProbeFlags, readHeap, rssKb } from './proc-stats.js';
import { seedConversations } from './seed-conversations.js';
import { readSlowStream } from './slow-stream-reader.js';
import { slowStreamServiceEnv, startSlowUpstream } from './slow-upstream.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 500);
const CHUNKS = 80;

interface Tally {
  count: number;
  bytes: number;
}

/** Count and self size of a snapshot's nodes, keyed by `<kind> <name>` (names of strings left out). */
function tallySnapshot(path: string): Map<string, Tally> {
  const snapshot = JSON.parse(readFileSync(path, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const kinds = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const tally = new Map<string, Tally>();
  const { nodes, strings } = snapshot;
  for (let index = 0; index < nodes.length; index += width) {
    const kind = kinds[nodes[index + typeAt] ?? 0] ?? '?';
    const name = kind === 'string' || kind === 'concatenated string' || kind === 'sliced string' || kind === 'number' ? '' : (strings[nodes[index + nameAt] ?? 0] ?? '?').slice(0, 60);
    const key = `${kind} ${name}`;
    const entry = tally.get(key) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += nodes[index + sizeAt] ?? 0;
    tally.set(key, entry);
  }
  return tally;
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** Bytes held per allocating frame, and per nearest frame of the service's own code. */
function printSampling(path: string): void {
  const root = JSON.parse(readFileSync(path, 'utf8')) as { head: SamplingNode };
  const bySite = new Map<string, number>();
  const byServiceSite = new Map<string, number>();
  const frameName = (node: SamplingNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^.*\/(dist|node_modules)\//, '$1/');
    return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
  };
  const walk = (node: SamplingNode, service: string) => {
    const own = frameName(node);
    const nearest = node.callFrame.url.includes('/dist/') ? own : service;
    if (node.selfSize > 0) {
      bySite.set(own, (bySite.get(own) ?? 0) + node.selfSize);
      byServiceSite.set(nearest, (byServiceSite.get(nearest) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, nearest);
  };
  walk(root.head, '(outside the service)');
  const total = [...bySite.values()].reduce((sum, bytes) => sum + bytes, 0);
  console.log(`held by the heap, sampled: ${(total / STREAMS / 1024).toFixed(1)} KB per stream (idle's included)`);
  for (const [title, table] of [['allocating frame', bySite], ['nearest frame of the service', byServiceSite]] as const) {
    console.log(`\n| ${title} | bytes per stream |\n|---|---|`);
    for (const [site, bytes] of [...table.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_ROWS ?? 40))) {
      console.log(`| ${site} | ${(bytes / STREAMS).toFixed(0)} |`);
    }
  }
}

async function snapshot(pid: number, heapFile: string, path: string): Promise<void> {
  await ask(pid, heapFile, `snapshot:${path}`);
}

/** Sends the heap probe a request and waits for its answer (the file no longer holds the request). */
async function ask(pid: number, heapFile: string, request: string): Promise<void> {
  writeFileSync(heapFile, request);
  process.kill(pid, 'SIGUSR2');
  for (;;) {
    await sleep(100);
    if (readFileSync(heapFile, 'utf8') !== request) return;
  }
}

async function main(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'assistant-bench-stream-heap-'));
  const heapFile = join(folder, 'heap.json');
  const databaseUrl = `file:${join(folder, 'bench.db')}`;
  const upstream = await startSlowUpstream(CHUNKS);
  const extraFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
  const service = await startService(
    slowStreamServiceEnv(upstream.url, STREAMS, databaseUrl, heapFile),
    [...heapProbeFlags, ...extraFlags],
    process.env.BENCH_DIST ?? 'dist',
  );
  const pid = service.child.pid ?? 0;
  try {
    await seedConversations(databaseUrl, { conversations: STREAMS, perConversation: 0, longConversation: 0 });
    const ids: string[] = [];
    while (ids.length < STREAMS) {
      const res = await fetch(`${service.url}/api/conversations?limit=200&offset=${ids.length}`);
      ids.push(...((await res.json()) as { conversations: { id: string }[] }).conversations.map((c) => c.id));
    }
    const target = (chunks: number, conversationId: string) => ({
      url: `${service.url}/api/unified/stream`,
      body: JSON.stringify({ provider: 'openai', message: `Answer slowly. chunks=${chunks}`, mode: 'chat', conversation_id: conversationId }),
      reply: 'service' as const,
      chunks,
    });
    const agent = new Agent({ keepAlive: true, maxSockets: STREAMS, maxFreeSockets: STREAMS });
    const signal = AbortSignal.timeout(120_000);
    setMaxListeners(0, signal);
    const noHooks = { onOpen: () => undefined, onClose: () => undefined };
    // Warm-up: what every stream shares is loaded and compiled before the idle snapshot.
    await Promise.all(ids.slice(0, 20).map((id) => readSlowStream(agent, target(3, id), noHooks, signal)));
    await sleep(2000);
    await readHeap(pid, heapFile, true);
    const idleRss = rssKb(pid);
    const sampling = process.env.BENCH_SAMPLING === '1';
    const idlePath = join(folder, 'idle.heapsnapshot');
    if (sampling) await ask(pid, heapFile, 'sampling-start');
    else await snapshot(pid, heapFile, idlePath);
    let open = 0;
    let allOpen: () => void = () => undefined;
    const allOpened = new Promise<void>((resolve) => {
      allOpen = resolve;
    });
    const hooks = {
      onOpen: () => {
        if (++open === STREAMS) allOpen();
      },
      onClose: () => undefined,
    };
    const streams = Promise.all(ids.map((id) => readSlowStream(agent, target(CHUNKS, id), hooks, signal)));
    await allOpened;
    // Half-way through the answers (late, for the sampling: the garbage has grown).
    await sleep(Number(process.env.BENCH_AFTER_MS ?? (sampling ? 9000 : 5000)));
    const openRss = rssKb(pid);
    const openPath = join(folder, 'open.heapsnapshot');
    const samplingPath = join(folder, 'sampling.json');
    if (sampling) await ask(pid, heapFile, `sampling:${samplingPath}`);
    else await snapshot(pid, heapFile, openPath);
    const records = await streams;
    agent.destroy();
    const failed = records.filter((record) => record.failure !== null).length;
    if (sampling) {
      console.log(`${STREAMS} streams (${failed} failed), RSS while open ${((openRss - idleRss) / STREAMS).toFixed(1)} KB per stream over idle`);
      printSampling(samplingPath);
      return;
    }

    const idle = tallySnapshot(idlePath);
    const opened = tallySnapshot(openPath);
    const rows = [...opened.entries()]
      .map(([key, after]) => {
        const before = idle.get(key) ?? { count: 0, bytes: 0 };
        return { key, count: (after.count - before.count) / STREAMS, bytes: (after.bytes - before.bytes) / STREAMS };
      })
      .filter((row) => Math.abs(row.bytes) >= 16)
      .sort((a, b) => b.bytes - a.bytes);
    const total = rows.reduce((sum, row) => sum + row.bytes, 0);
    const objects = rows.reduce((sum, row) => sum + row.count, 0);
    console.log(`${STREAMS} streams (${failed} failed), RSS while open at the snapshot ${((openRss - idleRss) / STREAMS).toFixed(1)} KB per stream over idle`);
    console.log(`live heap per stream: ${(total / 1024).toFixed(1)} KB in ${objects.toFixed(0)} objects (rows of at least 16 B)\n`);
    console.log('| per stream | objects | bytes |\n|---|---|---|');
    for (const row of rows.slice(0, Number(process.env.BENCH_ROWS ?? 60))) console.log(`| ${row.key} | ${row.count.toFixed(2)} | ${row.bytes.toFixed(0)} |`);
    if (process.env.BENCH_KEEP_SNAPSHOTS === '1') console.log(`\nsnapshots kept in ${folder}`);
  } finally {
    await service.stop();
    await upstream.stop();
    if (process.env.BENCH_KEEP_SNAPSHOTS !== '1') rmSync(folder, { recursive: true, force: true });
  }
}

await main();
