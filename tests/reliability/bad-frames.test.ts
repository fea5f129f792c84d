import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { sandboxAvailable } from '../helpers/sandbox.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { isDoneOf, open, wsUrl, type Frame, type TestSocket } from '../helpers/ws-client.js';
import { reliabilityCount } from './reliability-level.js';

// Bad input on the WebSocket channels (CONTRACT §8), which the OpenAPI-driven fuzz cannot reach:
// frames that are not JSON, not objects, binary, deeply nested, or JSON of the right shape with
// wrong members. Every one must get exactly one `error` frame with a contract code, the socket
// must stay open, and a good frame afterwards must work as usual. Frames are sent one at a time,
// each answered before the next, so every answer is known to be its frame's.

const codes = new Set(['INVALID_REQUEST', 'NOT_FOUND', 'FORBIDDEN', 'UNAUTHORIZED', 'RATE_LIMIT_EXCEEDED', 'SECURITY_VIOLATION']);

/** Raw texts that are no usable frame on any channel. */
const rawTexts = [
  '',
  ' ',
  'not json',
  '{',
  '{"type":"message",',
  '[]',
  'null',
  '42',
  '"message"',
  'true',
  '\u0000',
  '\ud800',
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
  `{"a":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`,
  'x'.repeat(200_000),
];

const oddValues: unknown[] = [undefined, null, 0, -1, 1.5, true, '', ' ', [], {}, 'x'.repeat(5000), '\u0000', { $gt: '' }];

/** `/ws` frames with the right envelope and wrong contents, or the wrong envelope. */
function mainChannelFrames(): unknown[] {
  const frames: unknown[] = [];
  for (const type of [undefined, 'MESSAGE', 'ping', 'abort', 1, null, {}]) frames.push({ type, id: 'bad-type', data: { message: 'hi' } });
  // A numeric id is taken (as its text), as JSON-RPC clients send them; these are not ids at all.
  for (const id of [undefined, null, {}, [], true]) frames.push({ type: 'message', id, data: { message: 'hi' } });
  for (const data of oddValues) frames.push({ type: 'message', id: 'bad-data', data });
  // Of the odd values, only these are no message (whitespace and long text are messages).
  for (const message of [undefined, null, 0, -1, 1.5, true, '', [], {}, { $gt: '' }, 'x'.repeat(100_001)]) {
    frames.push({ type: 'message', id: 'bad-message', data: { message } });
  }
  // The /ws body is /api/message's: unknown members (a `provider`) are ignored, as over REST.
  for (const [field, values] of Object.entries({
    mode: ['nope', 1, null, {}],
    apiKey: ['😀', 'a\r\nb', 1, 'x'.repeat(1001)],
    model: [1, {}, [], '', 'x'.repeat(301)],
    conversation_id: [1, {}, 'x'.repeat(201)],
    options: ['fast', 1, { temperature: 'hot' }, { temperature: 3 }, { maxTokens: -5 }, { maxTokens: 1e12 }, { maxTokens: 1.5 }],
    promptOrders: [1, 'x', {}, { orderId: '' }, { orderId: 1 }, { order: 'all' }],
  })) {
    for (const value of values) frames.push({ type: 'message', id: `bad-${field}`, data: { message: 'hi', [field]: value } });
  }
  for (const action of ['dance', 1, null, '', 'ABORT']) frames.push({ type: 'message', id: 'bad-action', data: { action } });
  for (const requestId of [undefined, 1, {}, '']) frames.push({ type: 'message', id: 'bad-abort', data: { action: 'abort', requestId } });
  return frames;
}

/** Terminal socket frames that must be refused: wrong members, or input with no program running. */
function terminalFrames(): unknown[] {
  const frames: unknown[] = [];
  for (const type of [undefined, 'EXECUTE', 'run', 1, null]) frames.push({ type, command: 'echo hi' });
  for (const command of [undefined, null, 1, [], {}, true]) frames.push({ type: 'execute', command });
  for (const data of [undefined, null, 1, [], {}]) frames.push({ type: 'input', data });
  frames.push({ type: 'input', data: 'typed at the prompt' });
  for (const [cols, rows] of [[0, 24], [-1, 24], [80, 0], [1e9, 24], ['80', 24], [80.5, 24], [null, null], [undefined, undefined]]) frames.push({ type: 'resize', cols, rows });
  return frames;
}

/** Sends one frame (text, binary or object) and returns the frames it was answered with. */
async function answerTo(client: TestSocket, frame: unknown, isAnswer: (frame: Frame) => boolean): Promise<Frame[]> {
  if (Buffer.isBuffer(frame)) client.socket.send(frame);
  else client.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  try {
    return await client.until(isAnswer, 5000);
  } catch (error) {
    // Reported with the frame that got no answer, beside the other failures.
    return [{ type: 'no answer', data: String(error).slice(0, 300) } as unknown as Frame];
  }
}

describe('bad frames on the WebSocket channels', () => {
  let fake: FakeOllama;
  let svc: TestService;
  let workspace: Folder;

  beforeAll(async () => {
    fake = await startFakeOllama();
    workspace = makeFolder();
    svc = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url, ENABLE_SYSTEM_COMMANDS: 'true' });
    expect((await svc.request('POST', '/api/workspaces/add', { json: { name: 'frames', path: workspace.path } })).status).toBe(200);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await fake.close();
    workspace[Symbol.dispose]();
  });

  it('/ws: each bad frame gets one error frame with a contract code, and the socket keeps working', async () => {
    const client = await open(wsUrl(svc.url, '/ws'));
    const frames: unknown[] = [...rawTexts, Buffer.from([0xff, 0xfe, 0x00]), Buffer.from('{"type":"message","id":"bin","data":{}}'), ...mainChannelFrames()];
    // Repeated in full mode, so a leak or a slow decay per bad frame would show.
    const rounds = reliabilityCount(1, 5);
    expect(frames.length).toBeGreaterThan(80);
    const failures: string[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const frame of frames) {
        const label = (Buffer.isBuffer(frame) ? `binary ${frame.toString('hex').slice(0, 20)}` : `${JSON.stringify(frame) as string | undefined}`).slice(0, 120);
        const answer = await answerTo(client, frame, (received) => received.type === 'error');
        const error = answer.at(-1)?.data as { code?: string; message?: string } | undefined;
        if (answer.length !== 1 || !codes.has(error?.code ?? '') || typeof error?.message !== 'string') failures.push(`${label} -> ${JSON.stringify(answer).slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
    fake.enqueue({ kind: 'text', chunks: ['still', ' here'] });
    client.send({ type: 'message', id: 'after', data: { message: 'Are you there?' } });
    const done = (await client.until(isDoneOf('after'), 10_000)).at(-1);
    expect(done?.data.event.metadata.finishReason).toBe('stop');
    client.close();
    expect((await client.closed).code).toBe(1005);
  }, 120_000);

  it('/ws: a frame over the size limit closes that socket with 1009 and nothing else', async () => {
    const client = await open(wsUrl(svc.url, '/ws'));
    client.send('x'.repeat(svc.service.deps.config.BODY_LIMIT + 1));
    expect((await client.closed).code).toBe(1009);
    const other = await open(wsUrl(svc.url, '/ws'));
    const [error] = await answerTo(other, 'not json', (received) => received.type === 'error');
    expect(error?.data).toMatchObject({ code: 'INVALID_REQUEST' });
    other.close();
  });

  it.runIf(sandboxAvailable)('terminal socket: each bad frame gets one error frame, and the terminal still runs commands', async () => {
    const terminalId = (await svc.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
    const client = await open(wsUrl(svc.url, `/api/terminals/${terminalId}/ws`));
    const asTerminal = (frame: Frame) => frame as unknown as { type: string; status?: string; code?: string; message?: string };
    await client.until((frame) => asTerminal(frame).status === 'running', 10_000);
    const failures: string[] = [];
    for (const frame of [...rawTexts, Buffer.from([0xff, 0x00]), ...terminalFrames()]) {
      const label = (Buffer.isBuffer(frame) ? 'binary' : `${JSON.stringify(frame) as string | undefined}`).slice(0, 120);
      const answer = (await answerTo(client, frame, (received) => asTerminal(received).type === 'error')).map(asTerminal);
      const error = answer.at(-1);
      // The shell's own output may come before the error (a resize redraws); nothing else may.
      if (!codes.has(error?.code ?? '') || typeof error?.message !== 'string' || answer.slice(0, -1).some((received) => received.type !== 'output')) {
        failures.push(`${label} -> ${JSON.stringify(answer).slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
    client.send({ type: 'execute', command: 'echo frames-ok' });
    const ran = (await client.until((frame) => asTerminal(frame).type === 'exit', 10_000)).map(asTerminal);
    expect(ran.at(-1)).toEqual({ type: 'exit', exitCode: 0 });
    client.close();
  }, 60_000);
});
