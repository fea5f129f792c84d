// The chat benchmark's upstream: the wire-faithful fake OpenAI server in a process of its own, so
// it does not compete with the load generator for the event loop. Prints `{"url": ...}` once
// listening; stops on SIGTERM. FAKE_CHUNKS=<n> answers with n chunks instead of the usual 20.
// Started with an IPC channel, it answers the message 'last-chat-request' with the latest chat
// request it received (`CapturedRequest`), for the benchmark's same-bytes rule.
import { startFakeOpenAI, type RecordedRequest } from '../tests/fakes/index.js';
import { benchChunks } from './chat-exchange.js';

export interface CapturedRequest {
  /** The body, as the bytes the sender wrote when it serialised with JSON.stringify. */
  body: string;
  /** The request's Content-Length, to check the line above against. */
  contentLength: number;
  headers: Record<string, string | string[] | undefined>;
}

const count = Number(process.env.FAKE_CHUNKS ?? 0);
const chunks = count > 0 ? Array.from({ length: count }, (_, index) => `t${index} `) : benchChunks;
const fake = await startFakeOpenAI();
fake.setDefault({ kind: 'text', chunks, chunkDelayMs: 0 });
let lastChat: RecordedRequest | undefined;
// The fake records every request for tests to inspect; a benchmark sends tens of thousands.
const forget = setInterval(() => {
  lastChat = fake.chatRequests().at(-1) ?? lastChat;
  fake.reset();
}, 1000);
process.on('message', (message) => {
  if (message !== 'last-chat-request') return;
  const last = fake.chatRequests().at(-1) ?? lastChat;
  const captured: CapturedRequest | null =
    last === undefined ? null : { body: JSON.stringify(last.body), contentLength: Number(last.headers['content-length']), headers: last.headers };
  process.send?.(captured);
});
process.once('SIGTERM', () => {
  clearInterval(forget);
  void fake.close().then(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`);
