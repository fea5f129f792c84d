// `npm run bench` (fifth part), issue 6: WebSocket connections held by the built service and the
// memory each idle one costs, then chat frames per second over one /ws socket (one long answer,
// and 20-chunk exchanges back to back), against the fake OpenAI upstream in its own process.
// Prints a table; results are recorded in BENCHMARKS.md.
//
// BENCH_SOCKETS sets how many sockets are opened (default 10,000: each costs a descriptor on both
// sides, and this machine allows 20,000 per process).
import { readFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { startFakeUpstream, startService } from './chat-processes.js';

const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 10_000);
/** Upgrades in flight at once while connecting. */
const OPENING_BATCH = 200;
const LONG_ANSWER_CHUNKS = 20_000;
const BACK_TO_BACK_SECONDS = 5;

function rssKb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? Number.NaN);
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function openSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    socket.once('open', () => {
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Sends one chat over the socket; resolves with the frames received until its `done`. */
function chatOver(socket: WebSocket, id: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let frames = 0;
    const onMessage = (raw: Buffer) => {
      frames++;
      const text = raw.toString('utf8');
      // Parsing only the last frame keeps the client from being what is measured.
      if (text.includes('"type":"done"') && text.includes(`"requestId":"${id}"`)) {
        socket.off('message', onMessage);
        resolve(frames);
      } else if (text.startsWith('{"type":"error"')) {
        reject(new Error(text));
      }
    };
    socket.on('message', onMessage);
    socket.send(JSON.stringify({ type: 'message', id, data: { message: 'Talk.', provider: 'openai', mode: 'chat' } }));
  });
}

async function holdSockets(): Promise<{ held: number; failed: number; baseKb: number; heldKb: number; openMs: number }> {
  const service = await startService({});
  const pid = service.child.pid ?? 0;
  const url = `${service.url.replace('http', 'ws')}/ws`;
  const sockets: WebSocket[] = [];
  let failed = 0;
  try {
    // One socket first, so what every connection shares (the WebSocket server's code paths) is
    // warm before the baseline is read.
    const first = await openSocket(url);
    first.close();
    await settle(2000);
    const baseKb = rssKb(pid);
    const started = performance.now();
    for (let opened = 0; opened < SOCKETS; opened += OPENING_BATCH) {
      const batch = await Promise.allSettled(Array.from({ length: Math.min(OPENING_BATCH, SOCKETS - opened) }, () => openSocket(url)));
      for (const result of batch) {
        if (result.status === 'fulfilled') sockets.push(result.value);
        else failed++;
      }
    }
    const openMs = performance.now() - started;
    await settle(3000);
    const held = sockets.filter((socket) => socket.readyState === WebSocket.OPEN).length;
    return { held, failed, baseKb, heldKb: rssKb(pid), openMs };
  } finally {
    for (const socket of sockets) socket.terminate();
    await service.stop();
  }
}

async function chatFrames(chunks: number | undefined, seconds: number | null): Promise<{ exchanges: number; frames: number; ms: number }> {
  const fake = await startFakeUpstream(chunks);
  const service = await startService({ OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-bench', AI_MODEL_PROVIDER: 'openai', AI_MODEL_NAME: 'gpt-4o-mini' });
  try {
    const socket = await openSocket(`${service.url.replace('http', 'ws')}/ws`);
    await chatOver(socket, 'warm-up');
    let exchanges = 0;
    let frames = 0;
    const started = performance.now();
    do {
      frames += await chatOver(socket, `chat-${exchanges}`);
      exchanges++;
    } while (seconds !== null && performance.now() - started < seconds * 1000);
    const ms = performance.now() - started;
    socket.close();
    return { exchanges, frames, ms };
  } finally {
    await service.stop();
    await fake.stop();
  }
}

const sockets = await holdSockets();
const long = await chatFrames(LONG_ANSWER_CHUNKS, null);
const backToBack = await chatFrames(undefined, BACK_TO_BACK_SECONDS);
const perSocketKb = (sockets.heldKb - sockets.baseKb) / sockets.held;
const table = [
  '| measurement | result |',
  '|---|---|',
  `| idle /ws sockets held (opened ${OPENING_BATCH} at a time) | ${sockets.held} of ${SOCKETS} (${sockets.failed} failed), opened in ${(sockets.openMs / 1000).toFixed(1)} s |`,
  `| service RSS before → with them | ${(sockets.baseKb / 1024).toFixed(1)} MB → ${(sockets.heldKb / 1024).toFixed(1)} MB |`,
  `| memory per idle socket | ${perSocketKb.toFixed(1)} KB |`,
  `| one ${LONG_ANSWER_CHUNKS}-chunk answer over one socket | ${long.frames} frames in ${long.ms.toFixed(0)} ms: ${((long.frames / long.ms) * 1000).toFixed(0)} frames/s |`,
  `| 20-chunk exchanges back to back over one socket (${BACK_TO_BACK_SECONDS} s) | ${backToBack.exchanges} exchanges, ${((backToBack.frames / backToBack.ms) * 1000).toFixed(0)} frames/s, ${(backToBack.ms / backToBack.exchanges).toFixed(1)} ms each |`,
];
console.log(table.join('\n'));
