// The chat benchmark's upstream: the wire-faithful fake OpenAI server in a process of its own, so
// it does not compete with the load generator for the event loop. Prints `{"url": ...}` once
// listening; stops on SIGTERM. FAKE_CHUNKS=<n> answers with n chunks instead of the usual 20.
import { startFakeOpenAI } from '../tests/fakes/index.js';
import { benchChunks } from './chat-exchange.js';

const count = Number(process.env.FAKE_CHUNKS ?? 0);
const chunks = count > 0 ? Array.from({ length: count }, (_, index) => `t${index} `) : benchChunks;
const fake = await startFakeOpenAI();
fake.setDefault({ kind: 'text', chunks, chunkDelayMs: 0 });
// The fake records every request for tests to inspect; a benchmark sends tens of thousands.
const forget = setInterval(() => {
  fake.reset();
}, 1000);
process.once('SIGTERM', () => {
  clearInterval(forget);
  void fake.close().then(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`);
