import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama, type Script } from '../fakes/index.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { openSse, typesOf } from '../helpers/sse.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §12, regenerate and edit-and-resend: what is replaced stays stored and listed with
// `supersededBy`, and is out of `messageCount` and of the history the model is sent.

const answer = (text: string): Script => ({ kind: 'text', chunks: [text] });

interface Listed {
  id: string;
  role: string;
  content: string;
  supersededBy?: string;
}

/** The user and assistant texts the model was sent in a recorded Ollama request, after the system prompt. */
function sentTurns(body: any): string[] {
  return (body.messages as { role: string; content: string }[]).filter((message) => message.role !== 'system').map((message) => `${message.role}:${message.content}`);
}

describeOnDatabases('regenerate and edit-and-resend', (kind) => {
  let fake: FakeOllama;
  let svc: TestService;

  beforeAll(async () => {
    fake = await startFakeOllama();
    svc = await startTestService(kind, { OLLAMA_BASE_URL: fake.url, RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await fake.close();
  });
  beforeEach(async () => {
    fake.reset();
    expect((await svc.request('POST', '/api/context/clear')).status).toBe(200);
  });

  async function send(body: Record<string, unknown>) {
    const reply = await svc.request('POST', '/api/message', { json: { mode: 'chat', ...body } });
    expect(reply.status, reply.text).toBe(200);
    return reply.body as { response: string; conversationId: string; metadata: { messageId: string }; context: { messageCount: number } };
  }

  async function conversation(id: string): Promise<{ messages: Listed[]; messageCount: number }> {
    const loaded = (await svc.request('GET', `/api/conversation/${id}`)).body;
    return { messages: loaded.messages, messageCount: loaded.conversation?.messageCount ?? loaded.messageCount };
  }

  /** A conversation of two exchanges: q1 → a1, q2 → a2. */
  async function twoExchanges() {
    fake.enqueue(answer('a1'), answer('a2'));
    const first = await send({ message: 'q1' });
    await send({ message: 'q2' });
    fake.reset();
    return first.conversationId;
  }

  it('regenerate answers the last question again: the old answer is kept, superseded by the new one, and left out of the history', async () => {
    const id = await twoExchanges();
    fake.enqueue(answer('a2, second try'));
    const regenerated = await send({ regenerate: true });
    expect(regenerated.response).toBe('a2, second try');
    expect(regenerated.conversationId).toBe(id);
    // The model saw the conversation up to the question, not the answer it replaces.
    expect(sentTurns(fake.chatRequests()[0]?.body)).toEqual(['user:q1', 'assistant:a1', 'user:q2']);
    const { messages, messageCount } = await conversation(id);
    expect(messages.map((message) => [message.content, message.supersededBy ?? null])).toEqual([
      ['q1', null],
      ['a1', null],
      ['q2', null],
      ['a2', regenerated.metadata.messageId],
      ['a2, second try', null],
    ]);
    expect(messageCount).toBe(4);
    expect(regenerated.context.messageCount).toBe(4);
    // The question is stored once.
    expect(messages.filter((message) => message.content === 'q2')).toHaveLength(1);
    // The next question's history holds only what is in force.
    fake.enqueue(answer('a3'));
    await send({ message: 'q3' });
    expect(sentTurns(fake.chatRequests()[1]?.body)).toEqual(['user:q1', 'assistant:a1', 'user:q2', 'assistant:a2, second try', 'user:q3']);
  });

  it('replyTo replaces a question and everything after it with the new message, on the streaming path too', async () => {
    const id = await twoExchanges();
    const q1 = (await conversation(id)).messages[0];
    fake.enqueue(answer('b1'));
    const stream = await openSse(`${svc.url}/api/message/stream`, { json: { message: 'q1, edited', replyTo: q1?.id, mode: 'chat' } });
    expect(stream.status, JSON.stringify(stream.json)).toBe(200);
    const events = await stream.events();
    expect(typesOf(events)).toEqual(['text', 'context_update', 'done']);
    expect(sentTurns(fake.chatRequests()[0]?.body)).toEqual(['user:q1, edited']);
    const { messages, messageCount } = await conversation(id);
    const edited = messages.find((message) => message.content === 'q1, edited');
    expect(messages.map((message) => [message.content, message.supersededBy ?? null])).toEqual([
      ['q1', edited?.id],
      ['a1', edited?.id],
      ['q2', edited?.id],
      ['a2', edited?.id],
      ['q1, edited', null],
      ['b1', null],
    ]);
    expect(messageCount).toBe(2);
    expect(events.at(-2)?.data.context.messageCount).toBe(2);
  });

  it('refuses what cannot be replaced, changing nothing', async () => {
    const id = await twoExchanges();
    const before = await conversation(id);
    const [q1, a1] = before.messages;
    const refusals = [
      { body: { replyTo: a1?.id, message: 'not a question' }, status: 400 },
      { body: { replyTo: 'f0e1d2c3-b4a5-4687-9887-a6b5c4d3e2f1', message: 'unknown' }, status: 400 },
      { body: { regenerate: true, replyTo: q1?.id }, status: 400 },
      { body: { regenerate: true, message: 'both' }, status: 400 },
      { body: {}, status: 400 },
      { body: { regenerate: true, conversation_id: 'f0e1d2c3-b4a5-4687-9887-a6b5c4d3e2f1' }, status: 404 },
    ];
    for (const { body, status } of refusals) {
      const reply = await svc.request('POST', '/api/message', { json: { mode: 'chat', ...body } });
      expectEnvelope(reply, status, status === 404 ? 'NOT_FOUND' : 'INVALID_REQUEST');
    }
    // A replaced question cannot be replaced again.
    fake.enqueue(answer('c1'));
    await send({ replyTo: q1?.id, message: 'q1 again' });
    expectEnvelope(await svc.request('POST', '/api/message', { json: { replyTo: q1?.id, message: 'q1 a third time' } }), 400, 'INVALID_REQUEST');
    expect(fake.chatRequests()).toHaveLength(1);
  });

  // An unknown conversation is 404 in the refusals above; another user's is the same lookup as any
  // chat's (guards-and-ownership tests it for the chat paths).
  it('an empty current conversation has nothing to regenerate (400)', async () => {
    expect((await svc.request('POST', '/api/context/clear')).status).toBe(200);
    expectEnvelope(await svc.request('POST', '/api/message', { json: { regenerate: true } }), 400, 'INVALID_REQUEST');
  });

  it('a regenerate the provider refuses replaces nothing: the old answer is in force again, and a later one supersedes it once', async () => {
    const id = await twoExchanges();
    fake.enqueue({ kind: 'fail', status: 500 });
    const failed = await svc.request('POST', '/api/message', { json: { regenerate: true, mode: 'chat' } });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const after = await conversation(id);
    expect(after.messages.filter((message) => message.supersededBy !== undefined)).toEqual([]);
    expect(after.messageCount).toBe(4);
    fake.enqueue(answer('a2 at last'));
    await send({ regenerate: true });
    expect((await conversation(id)).messages.map((message) => [message.content, message.supersededBy === undefined])).toEqual([
      ['q1', true],
      ['a1', true],
      ['q2', true],
      ['a2', false],
      ['a2 at last', true],
    ]);
  });

  it('a regenerate retried with the same Idempotency-Key after the provider failed supersedes once', async () => {
    const id = await twoExchanges();
    fake.enqueue({ kind: 'fail', status: 503 }, answer('a2 after the retry'));
    const headers = { 'Idempotency-Key': `regen-${kind}` };
    const failed = await svc.request('POST', '/api/message', { json: { regenerate: true, mode: 'chat' }, headers });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    // Taken back: nothing is superseded after the failed attempt.
    expect((await conversation(id)).messages.filter((message) => message.supersededBy !== undefined)).toEqual([]);
    const retried = await svc.request('POST', '/api/message', { json: { regenerate: true, mode: 'chat' }, headers });
    expect(retried.status, retried.text).toBe(200);
    const { messages, messageCount } = await conversation(id);
    expect(messages.map((message) => message.content)).toEqual(['q1', 'a1', 'q2', 'a2', 'a2 after the retry']);
    expect(messages.filter((message) => message.supersededBy !== undefined).map((message) => message.content)).toEqual(['a2']);
    expect(messageCount).toBe(4);
  });
});
