// `npm run bench` (fifth part), issues 4 and 24: a 20-chunk chat exchange from the fake OpenAI
// upstream by several routes, measured side by side in one run:
//   - direct: the fake itself (the reference for "added" first-event times);
//   - bare: one `node:http` hop piping to the fake, nothing else (bench/chat-bare-hop.ts): the
//     physical limit of any proxy;
//   - portkey: the Portkey AI gateway;
//   - service: the built service, `POST /api/unified/stream` (streamed) and `/message` (whole);
//   - service-b (with `--service-b=<folder>`): a second build of the service, for an A/B.
// Same bytes: the service's own upstream request is captured once (at the fake), and exactly those
// bytes are what direct, bare and Portkey send; for whole replies the same bytes with
// `"stream":true,"stream_options":{…}` turned into `"stream":false` (the service always streams
// from its provider). Interleaved rounds: every round measures each route in turn (the order
// rotated each round) for each cell (streamed c=1, streamed c=50, whole c=50), so the machine's
// drift hits all alike. The fake, the bare hop, the gateway, each service and the load generator
// are processes of their own; CPU per exchange comes from /proc/<pid>/stat of each route's own
// processes. Prints the issue 24 table, the detailed table and the targets.
//
// Options: `--cpu-prof` writes a CPU profile of the service and prints its hot spots;
// `--service-b=<folder>`: see above (a folder holding dist/, with node_modules, prisma and
// package.json beside it), and `--service-a=<folder>` the same for the first service; BENCH_ROUNDS (3), BENCH_WARM_UP_SECONDS (0.5), BENCH_SECONDS (2);
// BENCH_DATABASE_URL=postgresql://… stores on that (empty) PostgreSQL database instead of SQLite.
import { mkdtempSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { exchange, serviceBody, type ChatTarget } from './chat-exchange.js';
import type { CapturedRequest } from './chat-fake-upstream.js';
import type { LoadReply, LoadRequest } from './chat-load.js';
import { ask, startBareHop, startFakeUpstream, startLoadWorker, startPortkey, startService, type Started } from './chat-processes.js';
import { printHotSpots } from './chat-profile.js';
import { abLines, cellName, databaseLines, detailTable, issueTable, targetLines, type Cell, type Kind, type RouteInfo, type Sample, type Samples } from './chat-report.js';
import { storedExchanges } from './chat-stored.js';
import { percentile } from './http-load.js';
import { cpuOfLiving, cpuSpentSince, cpuTimes, pidsNamed } from './proc-stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 0.5);
const MEASURE_SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const CELLS: Cell[] = [
  { kind: 'sse', concurrency: 1 },
  { kind: 'sse', concurrency: 50 },
  { kind: 'json', concurrency: 50 },
];

interface Route extends RouteInfo {
  /** The route's own processes (none for direct), whose CPU is its cost. */
  pids: number[];
  target(kind: Kind): ChatTarget;
  /** A service: its origin, to count what it stored, and the exchanges sent to it. */
  service?: { url: string; sent: number; failed: number };
}

/** On PostgreSQL, its processes' CPU is part of what a service exchange costs: it is read beside the service's. */
const ON_POSTGRES = process.env.BENCH_DATABASE_URL !== undefined;

const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuTimes(pid).user + cpuTimes(pid).system, 0);

/** The service's upstream request, as the fake received it; checked against its Content-Length. */
async function captureServiceRequest(fake: Started, serviceUrl: string): Promise<CapturedRequest> {
  const agent = new Agent({ keepAlive: false });
  // A few first: the history window (one message) is full from the second exchange on.
  for (let i = 0; i < 3; i++) await exchange(agent, { url: `${serviceUrl}/api/unified/stream`, headers: {}, body: serviceBody(), reply: 'service-sse' });
  const captured = await ask<CapturedRequest | null>(fake.child, 'last-chat-request');
  if (captured === null) throw new Error('the fake upstream received no chat request from the service');
  if (Buffer.byteLength(captured.body) !== captured.contentLength) {
    throw new Error(`the captured body (${Buffer.byteLength(captured.body)} bytes) is not what was sent (${captured.contentLength}): the same-bytes rule needs another capture`);
  }
  return captured;
}

function wholeReplyBody(streamed: string): string {
  const whole = streamed.replace('"stream":true,"stream_options":{"include_usage":true}', '"stream":false');
  if (whole === streamed) throw new Error(`the service's upstream request does not ask for a stream as expected: ${streamed}`);
  return whole;
}

function routesFor(fake: Started, bare: Started, portkey: Started & { version: string }, services: { name: string; label: string; started: Started }[], captured: CapturedRequest): Route[] {
  const bodies = { sse: captured.body, json: wholeReplyBody(captured.body) };
  const authorization = String(captured.headers.authorization ?? 'Bearer sk-bench');
  const openAI = (url: string, headers: Record<string, string>) => (kind: Kind) => ({
    url,
    headers: { accept: kind === 'sse' ? 'text/event-stream' : 'application/json', authorization, ...headers },
    body: bodies[kind],
    reply: kind === 'sse' ? ('openai-sse' as const) : ('openai-json' as const),
  });
  const pid = (started: Started) => started.child.pid ?? 0;
  return [
    { name: 'direct', label: 'the upstream directly', pids: [], target: openAI(`${fake.url}/chat/completions`, {}) },
    { name: 'bare', label: 'a bare Node proxy (one `node:http` hop, piping)', pids: [pid(bare)], target: openAI(`${bare.url}/v1/chat/completions`, {}) },
    {
      name: 'portkey',
      label: `Portkey gateway ${portkey.version}`,
      pids: [pid(portkey)],
      target: openAI(`${portkey.url}/v1/chat/completions`, { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': fake.url }),
    },
    ...services.map(({ name, label, started }) => ({
      name,
      label,
      pids: [pid(started)],
      target: (kind: Kind) => ({
        url: `${started.url}/api/unified/${kind === 'sse' ? 'stream' : 'message'}`,
        headers: {},
        body: serviceBody(),
        reply: kind === 'sse' ? ('service-sse' as const) : ('service-json' as const),
      }),
      service: { url: started.url, sent: 0, failed: 0 },
    })),
  ];
}

async function measure(worker: Started, fakePid: number, route: Route, cell: Cell, round: number, samples: Samples): Promise<void> {
  const request = (seconds: number): LoadRequest => ({ target: route.target(cell.kind), concurrency: cell.concurrency, seconds });
  const warmUp = await ask<LoadReply>(worker.child, request(WARM_UP_SECONDS));
  const database = ON_POSTGRES && route.service !== undefined ? cpuOfLiving(pidsNamed('postgres')) : null;
  const before = { route: cpuOf(route.pids), fake: cpuOf([fakePid]) };
  const reply = await ask<LoadReply>(worker.child, request(MEASURE_SECONDS));
  const cpuMs = cpuOf(route.pids) - before.route;
  const upstreamCpuMs = cpuOf([fakePid]) - before.fake;
  const databaseCpuMs = database === null ? undefined : cpuSpentSince('postgres', database);
  if (route.service !== undefined) {
    route.service.sent += warmUp.firstEvents.length + reply.firstEvents.length;
    route.service.failed += warmUp.errors + reply.errors;
  }
  const byCell = samples.get(route.name) ?? new Map<string, Sample[]>();
  samples.set(route.name, byCell);
  const list = byCell.get(cellName(cell)) ?? [];
  byCell.set(cellName(cell), list);
  const exchanges = reply.firstEvents.length;
  list.push({
    round,
    exchanges,
    errors: reply.errors,
    perSecond: exchanges / reply.elapsed,
    p50: percentile(reply.firstEvents, 0.5),
    p99: percentile(reply.firstEvents, 0.99),
    cpuMs,
    upstreamCpuMs,
    ...(databaseCpuMs === undefined ? {} : { databaseCpuMs }),
  });
}

/** Every service exchange sent (checks and warm-ups included) left its question and, if it succeeded, its whole answer. */
async function checkStored(route: Route): Promise<boolean> {
  if (route.service === undefined) return true;
  const { url, sent, failed } = route.service;
  const stored = await storedExchanges(url);
  console.log(
    `Stored by ${route.label}: ${stored.answers} whole exchanges of ${sent} sent, ${failed} of which failed; ${stored.questions} questions; ` +
      `${stored.messageCount} messages counted by GET /api/conversations in ${stored.conversations} conversation(s).`,
  );
  const ok = stored.questions === sent && stored.answers === sent - failed && stored.messageCount >= stored.questions + stored.answers;
  if (!ok) console.log(`MISMATCH: expected ${sent} questions and ${sent - failed} whole answers.`);
  return ok;
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const profileDir = process.argv.includes('--cpu-prof') ? mkdtempSync(join(tmpdir(), 'assistant-bench-chat-prof-')) : undefined;
  const serviceA = process.argv.find((arg) => arg.startsWith('--service-a='))?.slice('--service-a='.length);
  const serviceB = process.argv.find((arg) => arg.startsWith('--service-b='))?.slice('--service-b='.length);
  const onPostgres = ON_POSTGRES;
  if (onPostgres && serviceB !== undefined) throw new Error('--service-b needs a database of its own: SQLite only');
  const fake = await startFakeUpstream();
  const serviceEnv = {
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: 'sk-bench',
    AI_MODEL_PROVIDER: 'openai',
    AI_MODEL_NAME: 'gpt-4o-mini',
    RATE_LIMIT_ENABLED: 'false',
    MAX_STREAMS_PER_USER: '1000',
    // Every exchange goes to the caller's current conversation: a one-message window keeps the
    // upstream request the same size however many exchanges came before.
    MAX_CONVERSATION_HISTORY: '1',
    ...(onPostgres ? { DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '' } : {}),
  };
  const started: Started[] = [fake];
  try {
    const service = await startService(serviceEnv, profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`], join(serviceA ?? '.', 'dist'));
    started.push(service);
    const services = [{ name: 'service', label: serviceB === undefined ? 'the service' : `the service (A: ${serviceA ?? 'dist/'})`, started: service }];
    if (serviceB !== undefined) {
      const second = await startService(serviceEnv, [], join(serviceB, 'dist'));
      started.push(second);
      services.push({ name: 'service-b', label: `the service (B: ${serviceB})`, started: second });
    }
    const bare = await startBareHop(new URL(fake.url).origin);
    started.push(bare);
    const portkey = await startPortkey();
    started.push(portkey);
    const worker = await startLoadWorker();
    started.push(worker);

    const captured = await captureServiceRequest(fake, service.url);
    console.log(`Same bytes: the service's upstream request, ${captured.contentLength} bytes: ${captured.body}`);
    const routes = routesFor(fake, bare, portkey, services, captured);
    if (services[1] !== undefined) await captureServiceRequest(fake, services[1].started.url);
    for (const route of routes) if (route.service !== undefined) route.service.sent += 3;

    // One checked exchange per route and kind first: a wrong answer must fail loudly, not be timed.
    const checkAgent = new Agent({ keepAlive: false });
    for (const route of routes) {
      for (const kind of ['sse', 'json'] as const) {
        if (!(await exchange(checkAgent, route.target(kind))).ok) throw new Error(`${route.label} (${kind}): the answer did not arrive whole`);
        if (route.service !== undefined) route.service.sent++;
      }
    }

    const samples: Samples = new Map();
    for (let round = 0; round < ROUNDS; round++) {
      for (const cell of CELLS) {
        // The order rotates each round, so no route always runs right after the same other.
        const order = routes.map((_, index) => routes[(index + round) % routes.length] as Route);
        for (const route of order) await measure(worker, fake.child.pid ?? 0, route, cell, round, samples);
      }
      console.error(`round ${round + 1} of ${ROUNDS} done`);
    }

    // Answers are stored as they finish; give the last ones a moment before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    console.log(`\n${ROUNDS} interleaved rounds of ${WARM_UP_SECONDS} s warm-up + ${MEASURE_SECONDS} s measured per route and cell; ${onPostgres ? 'PostgreSQL' : 'SQLite'}.\n`);
    console.log(issueTable(samples, routes));
    console.log(`\n${detailTable(samples, routes, CELLS)}\n`);
    const database = databaseLines(samples, routes, CELLS);
    if (database.length > 0) console.log(`PostgreSQL's own CPU (every postgres process on the machine, so other work on it too):\n${database.join('\n')}\n`);
    for (const route of routes) if (!(await checkStored(route))) process.exitCode = 1;
    console.log('\nTargets (issue 24):');
    for (const { name, label } of services) console.log(targetLines(samples, { name, label }, onPostgres).join('\n'));
    if (services[1] !== undefined && services[0] !== undefined) {
      console.log(`\nA/B, ${services[1].label} against ${services[0].label}:\n${abLines(samples, services[0], services[1], CELLS).join('\n')}`);
    }
    console.log(`\nLoad average (1 min) at start ${loadBefore.toFixed(2)}, at end ${(loadavg()[0] ?? Number.NaN).toFixed(2)}.`);
  } finally {
    await Promise.all(started.reverse().map((child) => child.stop()));
  }
  if (profileDir !== undefined) printHotSpots(profileDir);
}

await main();
