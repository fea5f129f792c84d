import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeProvider, type Script } from '../fakes/index.js';
import { trackLiveResources, type LiveResources } from '../helpers/live-resources.js';
import { openSse, typesOf } from '../helpers/sse.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';
import { reliabilityCount } from './reliability-level.js';

// Issue 7's upstream faults, over and over: each provider refuses, hangs past
// PROVIDER_TIMEOUT_MS, answers 5xx, cuts its stream, sends malformed SSE / NDJSON, reports its own
// error mid-stream, or falls silent mid-stream, on the streaming and the plain paths, the three
// providers at once. The client always gets the contract's answer (CONTRACT §6: a JSON envelope
// before the stream's headers; after them error, context_update and a final done), every exchange
// is stored, and once it is over the service holds no more timers or sockets than before: a leak
// of one per fault would show as dozens. chat-upstream-errors.test.ts checks each outcome's
// details once; this checks that repeating them costs nothing.

const TIMEOUT_MS = 300;

interface Fault {
  label: string;
  script: Script;
  /** Before the stream's headers: the envelope's status and code. Otherwise the text streamed before the failure. */
  outcome: { status: number; code: string } | { texts: string[] };
}

const faults: Fault[] = [
  { label: 'refused', script: { kind: 'refuse' }, outcome: { status: 503, code: 'MODEL_UNAVAILABLE' } },
  { label: 'hangs past the timeout', script: { kind: 'stall' }, outcome: { status: 503, code: 'MODEL_UNAVAILABLE' } },
  { label: '500', script: { kind: 'fail', status: 500 }, outcome: { status: 503, code: 'MODEL_UNAVAILABLE' } },
  { label: '503', script: { kind: 'fail', status: 503 }, outcome: { status: 503, code: 'MODEL_UNAVAILABLE' } },
  { label: 'cut mid-stream', script: { kind: 'cut', chunks: ['one ', 'two ', 'three'], after: 2 }, outcome: { texts: ['one ', 'two '] } },
  { label: 'malformed stream', script: { kind: 'malformed' }, outcome: { texts: [] } },
  { label: "the provider's error mid-stream", script: { kind: 'streamError', chunks: ['one ', 'two '], after: 1 }, outcome: { texts: ['one '] } },
  { label: 'silent mid-stream', script: { kind: 'stallMidStream', chunks: ['one ', 'two '], after: 1 }, outcome: { texts: ['one '] } },
];

interface Lane {
  name: string;
  fake: FakeProvider;
  messagePath: string;
  streamPath: string;
  body: Record<string, unknown>;
  conversationId: string;
}

interface StoredMessage {
  role: string;
  content: string;
  finishReason?: string;
}

describe('upstream faults, repeated on the three providers at once', () => {
  let svc: TestService;
  let fakes: FakeProvider[];
  let lanes: Lane[];
  let resources: LiveResources;

  beforeAll(async () => {
    // Tracking starts before anything else, so every timer and socket of the service is seen.
    resources = trackLiveResources();
    const [ollama, openai, anthropic] = await Promise.all([startFakeOllama(), startFakeOpenAI(), startFakeAnthropic()]);
    fakes = [ollama, openai, anthropic];
    svc = await startTestService('sqlite', {
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_BASE_URL: anthropic.url,
      PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    const lane = async (name: string, fake: FakeProvider, messagePath: string, streamPath: string, body: Record<string, unknown>): Promise<Lane> => {
      const saved = await svc.request('POST', '/api/conversation/save', { json: { title: `${name} faults`, conversationData: { messages: [] } } });
      expect(saved.status).toBe(200);
      return { name, fake, messagePath, streamPath, body: { mode: 'chat', ...body }, conversationId: saved.body.conversationId as string };
    };
    lanes = await Promise.all([
      lane('ollama', ollama, '/api/message', '/api/message/stream', {}),
      lane('openai', openai, '/api/unified/message', '/api/unified/stream', { provider: 'openai', apiKey: 'sk-test' }),
      lane('anthropic', anthropic, '/api/anthropic/message', '/api/anthropic/stream', { apiKey: 'sk-ant-test' }),
    ]);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await Promise.all(fakes.map((fake) => fake.close()));
    resources[Symbol.dispose]();
  });

  async function storedTail(lane: Lane): Promise<StoredMessage[]> {
    const reply = await svc.request('GET', `/api/conversation/${lane.conversationId}`);
    expect(reply.status).toBe(200);
    return (reply.body.messages as StoredMessage[]).slice(-2).map(({ role, content, finishReason }) => ({ role, content, finishReason }));
  }

  /** One fault on one path, checked from the client and in storage. */
  async function sufferFault(lane: Lane, fault: Fault, streaming: boolean, round: number) {
    const message = `${lane.name} round ${round}: ${fault.label}${streaming ? ' (stream)' : ''}`;
    const json = { ...lane.body, message, conversation_id: lane.conversationId };
    lane.fake.enqueue(fault.script);
    const beforeHeaders = 'status' in fault.outcome;
    if (streaming) {
      const stream = await openSse(`${svc.url}${lane.streamPath}`, { json });
      if ('status' in fault.outcome) {
        expect(stream.status, message).toBe(fault.outcome.status);
        expect(stream.json?.error?.code, message).toBe(fault.outcome.code);
      } else {
        expect(stream.status, message).toBe(200);
        const events = await stream.events();
        expect(typesOf(events), message).toEqual([...fault.outcome.texts.map(() => 'text'), 'error', 'context_update', 'done']);
        expect(events.at(-3)?.data.code, message).toBe('MODEL_UNAVAILABLE');
        expect(events.at(-1)?.data.metadata.finishReason, message).toBe('error');
      }
    } else {
      const reply = await svc.request('POST', lane.messagePath, { json });
      if ('status' in fault.outcome) expectEnvelope(reply, fault.outcome.status, fault.outcome.code);
      else expectEnvelope(reply, 503, 'MODEL_UNAVAILABLE');
    }
    const tail = await storedTail(lane);
    if (beforeHeaders) {
      expect(tail.at(-1), message).toEqual({ role: 'user', content: message, finishReason: undefined });
    } else {
      const texts = 'texts' in fault.outcome ? fault.outcome.texts : [];
      expect(tail, message).toEqual([
        { role: 'user', content: message, finishReason: undefined },
        { role: 'assistant', content: texts.join(''), finishReason: 'error' },
      ]);
    }
  }

  /** Every fault on both paths, the three providers side by side. */
  async function round(index: number) {
    await Promise.all(
      lanes.map(async (lane) => {
        for (const fault of faults) {
          await sufferFault(lane, fault, true, index);
          await sufferFault(lane, fault, false, index);
        }
        // And the provider still answers normally afterwards.
        lane.fake.enqueue({ kind: 'text', chunks: ['still', ' fine'] });
        const healthy = await svc.request('POST', lane.messagePath, { json: { ...lane.body, message: 'still there?', conversation_id: lane.conversationId } });
        expect(healthy.body).toMatchObject({ success: true, response: 'still fine' });
      }),
    );
  }

  /** Waits for idle keep-alive sockets and finished timers to go, then reads the counts. */
  async function settledCounts(atMost?: { timers: number; sockets: number }) {
    return waitFor(
      () => {
        const counts = resources.counts();
        return !atMost || (counts.timers <= atMost.timers && counts.sockets <= atMost.sockets) ? counts : undefined;
      },
      15_000,
      `timers and sockets back to ${JSON.stringify(atMost)} (now ${JSON.stringify(resources.counts())})`,
    );
  }

  it('answers every fault as the contract says, stores every exchange, and leaks no timer or socket', async () => {
    // One round first, so what is made once (pools, caches, sweepers) is in the baseline.
    await round(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const baseline = await settledCounts();
    const rounds = reliabilityCount(3, 10);
    for (let index = 1; index <= rounds; index++) await round(index);

    // Each upstream request ended: answered, cut by the fake, or given up by the service (the stalls).
    for (const fake of fakes) {
      for (const request of fake.chatRequests()) {
        expect(request.finishedAt ?? request.closedAt ?? request.destroyedAt, `${fake.url} ${JSON.stringify(request.body).slice(0, 200)}`).toBeDefined();
      }
    }
    // A round opens 3 × 8 × 2 exchanges; a handful of idle keep-alive sockets may still be
    // closing, a leak per fault would be dozens per round.
    const slack = 6;
    await settledCounts({ timers: baseline.timers + slack, sockets: baseline.sockets + slack });
    expect((await svc.request('GET', '/api/status')).body.status).toBe('ok');
  }, 180_000);
});
