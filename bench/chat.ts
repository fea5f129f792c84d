// `npm run bench` (third part), issue 4: a 20-chunk chat exchange straight from the fake OpenAI
// upstream, through the built service (`POST /api/unified/stream` SSE and `/api/unified/message`
// JSON) and through the Portkey AI gateway, streaming and not, at concurrency 1 and 50. Every
// process (fake, service, gateway, this load generator) is its own, all on 127.0.0.1. Prints a
// table; results are recorded in BENCHMARKS.md.
//
// `tsx bench/chat.ts --cpu-prof` also writes a CPU profile of the service and prints its hot spots.
// With BENCH_DATABASE_URL=postgresql://… the service stores on that (empty) PostgreSQL database.
import { mkdtempSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchQuestion, completionsBody, exchange, expectedAnswer, serviceBody, type ChatTarget } from './chat-exchange.js';
import { startFakeUpstream, startPortkey, startService, type Started } from './chat-processes.js';
import { printHotSpots } from './chat-profile.js';
import { percentile } from './http-load.js';

const WARM_UP_SECONDS = 2;
const MEASURE_SECONDS = 6;
const CONCURRENCIES = [1, 50] as const;

type Route = 'direct' | 'service' | 'portkey';

interface Scenario {
  route: Route;
  streaming: boolean;
  label: string;
  target: ChatTarget;
  /** The process the exchange passes through (the fake itself for direct), for its CPU time. */
  pid: number;
}

interface Measured {
  /** Warm-up included: every one of them reached the route. */
  sent: number;
  sentFailed: number;
  exchanges: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  cpuMsPerExchange: number;
}

/** User plus system CPU time of a process so far, in ms (/proc/<pid>/stat counts clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** `concurrency` keep-alive clients send exchanges back to back for `seconds`. */
async function load(target: ChatTarget, concurrency: number, seconds: number): Promise<{ firstEvents: number[]; errors: number; elapsed: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const firstEvents: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const client = async () => {
    while (performance.now() < deadline) {
      const result = await exchange(agent, target);
      firstEvents.push(result.firstEventMs);
      if (!result.ok) errors++;
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: concurrency }, client));
  const elapsed = (performance.now() - began) / 1000;
  agent.destroy();
  return { firstEvents: firstEvents.sort((a, b) => a - b), errors, elapsed };
}

async function measure(scenario: Scenario, concurrency: number): Promise<Measured> {
  const warmUp = await load(scenario.target, concurrency, WARM_UP_SECONDS);
  const cpuBefore = cpuMs(scenario.pid);
  const { firstEvents, errors, elapsed } = await load(scenario.target, concurrency, MEASURE_SECONDS);
  const cpu = cpuMs(scenario.pid) - cpuBefore;
  return {
    sent: warmUp.firstEvents.length + firstEvents.length,
    sentFailed: warmUp.errors + errors,
    exchanges: firstEvents.length,
    errors,
    perSecond: firstEvents.length / elapsed,
    p50: percentile(firstEvents, 0.5),
    p99: percentile(firstEvents, 0.99),
    cpuMsPerExchange: cpu / firstEvents.length,
  };
}

interface Stored {
  conversations: number;
  /** The sum of the conversations' messageCount, as `GET /api/conversations` reports it. */
  messageCount: number;
  questions: number;
  /** Assistant messages holding the whole answer. */
  answers: number;
}

/** What the service stored, over all of the caller's conversations. */
async function storedExchanges(serviceUrl: string): Promise<Stored> {
  const stored: Stored = { conversations: 0, messageCount: 0, questions: 0, answers: 0 };
  for (let offset = 0; ; ) {
    const page = (await (await fetch(`${serviceUrl}/api/conversations?limit=200&offset=${offset}`)).json()) as {
      conversations: { id: string; messageCount: number }[];
      total: number;
    };
    for (const { id, messageCount } of page.conversations) {
      stored.messageCount += messageCount;
      const { messages } = (await (await fetch(`${serviceUrl}/api/conversation/${id}`)).json()) as { messages: { role: string; content: string }[] };
      for (const message of messages) {
        if (message.role === 'user' && message.content === benchQuestion) stored.questions++;
        if (message.role === 'assistant' && message.content === expectedAnswer) stored.answers++;
      }
    }
    stored.conversations = page.total;
    offset += page.conversations.length;
    if (page.conversations.length === 0 || offset >= page.total) return stored;
  }
}

interface Row {
  scenario: Scenario;
  concurrency: number;
  measured: Measured;
  direct: Measured;
}

/** Issue 4's targets: under 2 ms added to the first event at c=1; at c=50 at least Portkey's exchanges/s (aim 2×). */
function printTargets(rows: Row[]): void {
  const find = (route: Route, streaming: boolean, concurrency: number) => {
    const row = rows.find((r) => r.scenario.route === route && r.scenario.streaming === streaming && r.concurrency === concurrency);
    if (row === undefined) throw new Error(`no ${route} row at c=${concurrency}`);
    return row;
  };
  const lines = [true, false].flatMap((streaming) => {
    const kind = streaming ? 'SSE' : 'JSON';
    const single = find('service', streaming, 1);
    const added = single.measured.p50 - single.direct.p50;
    const ours = find('service', streaming, 50).measured.perSecond;
    const theirs = find('portkey', streaming, 50).measured.perSecond;
    return [
      `- ${kind}, c=1: ${signed(added)} added to the first event's p50 (target < 2 ms): ${added < 2 ? 'met' : 'missed'}`,
      `- ${kind}, c=50: ${ours.toFixed(0)} exchanges/s, ${(ours / theirs).toFixed(2)}× Portkey's ${theirs.toFixed(0)} (target ≥ 1×, aim 2×): ${ours >= theirs ? 'met' : 'missed'}`,
    ];
  });
  console.log(`\nTargets (issue 4):\n${lines.join('\n')}`);
}

/** Per kind (SSE, then JSON): direct first, as the rows after it are compared with it. */
function scenariosFor(fake: Started, service: Started, portkey: Started & { version: string }): Scenario[] {
  const portkeyHeaders = { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': fake.url, authorization: 'Bearer sk-bench' };
  return [true, false].flatMap((streaming) => [
    {
      route: 'direct',
      streaming,
      label: `direct from the fake upstream (${streaming ? 'SSE' : 'JSON'})`,
      target: { url: `${fake.url}/chat/completions`, headers: {}, body: completionsBody(streaming), reply: streaming ? 'openai-sse' : 'openai-json' },
      pid: fake.child.pid ?? 0,
    },
    {
      route: 'service',
      streaming,
      label: streaming ? 'service `POST /api/unified/stream` (SSE)' : 'service `POST /api/unified/message` (JSON)',
      target: {
        url: `${service.url}/api/unified/${streaming ? 'stream' : 'message'}`,
        headers: {},
        body: serviceBody(),
        reply: streaming ? 'service-sse' : 'service-json',
      },
      pid: service.child.pid ?? 0,
    },
    {
      route: 'portkey',
      streaming,
      label: `Portkey gateway ${portkey.version} (${streaming ? 'SSE' : 'JSON'})`,
      target: { url: `${portkey.url}/v1/chat/completions`, headers: portkeyHeaders, body: completionsBody(streaming), reply: streaming ? 'openai-sse' : 'openai-json' },
      pid: portkey.child.pid ?? 0,
    },
  ]);
}

function tableOf(results: Row[]): string {
  return [
    '| route | c | first event p50 | first event p99 | exchanges/s | added first event vs direct (p50 / p99) | CPU of the route\'s process per exchange | errors |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map(({ scenario, concurrency, measured: m, direct: d }) =>
      [
        scenario.label,
        concurrency,
        `${m.p50.toFixed(2)} ms`,
        `${m.p99.toFixed(2)} ms`,
        m.perSecond.toFixed(0),
        scenario.route === 'direct' ? '—' : `${signed(m.p50 - d.p50)} / ${signed(m.p99 - d.p99)}`,
        `${m.cpuMsPerExchange.toFixed(2)} ms`,
        `${m.errors} of ${m.exchanges}`,
      ].join(' | '),
    ).map((row) => `| ${row} |`),
  ].join('\n');
}

const signed = (ms: number) => `${ms >= 0 ? '+' : '−'}${Math.abs(ms).toFixed(2)} ms`;

async function main(): Promise<void> {
  // Other work on the machine shifts every row; the load average says how much there was.
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const profileDir = process.argv.includes('--cpu-prof') ? mkdtempSync(join(tmpdir(), 'assistant-bench-chat-prof-')) : undefined;
  const fake = await startFakeUpstream();
  const service = await startService(
    {
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: 'sk-bench',
      AI_MODEL_PROVIDER: 'openai',
      AI_MODEL_NAME: 'gpt-4o-mini',
      RATE_LIMIT_ENABLED: 'false',
      MAX_STREAMS_PER_USER: '1000',
      // Every exchange goes to the caller's current conversation: a one-message window keeps the
      // upstream request the same size however many exchanges came before.
      MAX_CONVERSATION_HISTORY: '1',
      // BENCH_DATABASE_URL=postgresql://… stores on PostgreSQL instead of a fresh SQLite file
      // (an empty database of its own: the service migrates it).
      ...(process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : {}),
    },
    profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
  );
  const portkey = await startPortkey();
  try {
    const scenarios = scenariosFor(fake, service, portkey);

    // One checked exchange per route first: a wrong answer must fail loudly, not be timed.
    const checkAgent = new Agent({ keepAlive: false });
    for (const scenario of scenarios) {
      if (!(await exchange(checkAgent, scenario.target)).ok) throw new Error(`${scenario.label}: the answer did not arrive whole`);
    }
    let serviceExchanges = scenarios.filter((scenario) => scenario.route === 'service').length;
    let serviceFailures = 0;

    const results: Row[] = [];
    for (const concurrency of CONCURRENCIES) {
      const directs = new Map<boolean, Measured>();
      for (const scenario of scenarios) {
        const measured = await measure(scenario, concurrency);
        if (scenario.route === 'direct') directs.set(scenario.streaming, measured);
        if (scenario.route === 'service') {
          serviceExchanges += measured.sent;
          serviceFailures += measured.sentFailed;
        }
        const direct = directs.get(scenario.streaming);
        if (direct === undefined) throw new Error('the direct row of each kind is measured first');
        results.push({ scenario, concurrency, measured, direct });
      }
    }

    // Answers are stored as they finish; give the last ones a moment before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stored = await storedExchanges(service.url);

    console.log(tableOf(results));
    console.log(
      `\nStored by the service: ${stored.answers} whole exchanges (question and whole answer) of ${serviceExchanges} sent, ${serviceFailures} of which failed; ` +
        `${stored.questions} questions; ${stored.messageCount} messages counted by GET /api/conversations in ${stored.conversations} conversation(s).`,
    );
    const answered = serviceExchanges - serviceFailures;
    if (stored.questions !== serviceExchanges || stored.answers !== answered || stored.messageCount < stored.questions + stored.answers) {
      console.log(`MISMATCH: expected ${serviceExchanges} questions and ${answered} whole answers.`);
      process.exitCode = 1;
    }
    printTargets(results);
    console.log(`\nLoad average (1 min) at start ${loadBefore.toFixed(2)}, at end ${(loadavg()[0] ?? Number.NaN).toFixed(2)}.`);
  } finally {
    await Promise.all([portkey.stop(), service.stop(), fake.stop()]);
  }
  if (profileDir !== undefined) printHotSpots(profileDir);
}

await main();
