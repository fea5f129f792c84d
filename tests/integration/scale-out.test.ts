import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { postgresAvailable } from '../helpers/databases.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';
import { sandboxAvailable } from '../helpers/sandbox.js';
import { openSse, typesOf } from '../helpers/sse.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';
import { connect, open, wsUrl } from '../helpers/ws-client.js';

// CONTRACT §9b: two instances on one PostgreSQL database and one Redis act as one service. What
// one stores the other reads; a user's push reaches their socket on either; a stream runs where it
// started and is replayed, followed and aborted from the other; a terminal's requests and a held
// command's confirmation (and keystrokes for its programs) reaching the other instance are carried to the owner, and answered 503
// (the command kept) when the owner cannot be reached. The shared rate limit is in rate-limits.test.ts.

describe.runIf(redisAvailable && postgresAvailable && sandboxAvailable)('two instances behind one load balancer', () => {
  let ollama: FakeOllama;
  let workspace: Folder;
  let first: TestService;
  let second: TestService;
  let env: Record<string, string>;

  beforeAll(async () => {
    ollama = await startFakeOllama();
    workspace = makeFolder();
    env = {
      REDIS_URL: redisUrl,
      CLUSTER_SECRET: 'scale-out-test-cluster-secret',
      REDIS_KEY_PREFIX: freshRedisPrefix(),
      OLLAMA_BASE_URL: ollama.url,
      ENABLE_SYSTEM_COMMANDS: 'true',
    };
    first = await startTestService('postgresql', env);
    second = await startTestService('postgresql', env, first.database);
    expect((await first.request('POST', '/api/workspaces/add', { json: { name: 'shared', path: workspace.path } })).status).toBe(200);
  });
  afterAll(async () => {
    await second.stop();
    await first[Symbol.asyncDispose]();
    await ollama.close();
    workspace[Symbol.dispose]();
  });
  beforeEach(() => {
    ollama.reset();
  });

  it('a conversation written on one instance is read, listed and renamed on the other', async () => {
    ollama.enqueue({ kind: 'text', chunks: ['Stored ', 'once'] });
    const reply = await first.request('POST', '/api/message', { json: { message: 'remember this', mode: 'chat' } });
    expect(reply.status).toBe(200);
    const conversationId = reply.body.conversationId as string;
    const read = await second.request('GET', `/api/conversation/${conversationId}`);
    expect(read.status).toBe(200);
    expect(read.body.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`)).toEqual([
      'user: remember this',
      'assistant: Stored once',
    ]);
    expect((await second.request('POST', `/api/conversation/${conversationId}/rename`, { json: { title: 'Shared' } })).status).toBe(200);
    const listed = (await first.request('GET', '/api/conversations?q=remember')).body.conversations;
    expect(listed).toEqual([expect.objectContaining({ id: conversationId, title: 'Shared' })]);
  });

  it("an event raised on one instance reaches the user's socket on the other", async () => {
    const socket = await open(wsUrl(second.url, '/ws'));
    try {
      const saved = await first.request('POST', '/api/conversation/save', { json: { conversationData: { messages: [{ role: 'user', content: 'x' }] } } });
      expect(saved.status).toBe(200);
      const conversationId = saved.body.conversationId as string;
      expect((await first.request('POST', `/api/conversation/${conversationId}/rename`, { json: { title: 'Pushed across' } })).status).toBe(200);
      const frames = await socket.until((frame) => frame.data?.kind === 'conversation' && frame.data.action === 'renamed');
      expect(frames.at(-1)).toMatchObject({ type: 'context_update', data: { kind: 'conversation', action: 'renamed', conversationId } });
    } finally {
      socket.close();
    }
  });

  it('a stream started on one instance is replayed and followed from the other, and aborted from it', async () => {
    ollama.enqueue({ kind: 'text', chunks: Array.from({ length: 40 }, (_, i) => `w${i} `), chunkDelayMs: 100 });
    const started = await openSse(`${first.url}/api/message/stream`, { json: { message: 'a long answer', mode: 'chat' } });
    expect(started.status).toBe(200);
    const streamId = started.headers.get('x-stream-id') ?? '';
    await started.events((event) => event.id === `${streamId}:3`);

    // Resumed from the other instance after the third event: the fourth comes next, live.
    const resumed = await openSse(`${second.url}/api/streams/${streamId}`, { headers: { 'Last-Event-ID': `${streamId}:3` } });
    expect(resumed.status).toBe(200);
    const early = await resumed.events((event) => event.id === `${streamId}:5`);
    expect(early.map((event) => event.id)).toEqual([`${streamId}:4`, `${streamId}:5`]);
    expect(early.map((event) => event.data.content)).toEqual(['w3 ', 'w4 ']);

    // Aborted through the instance that does not run it: the owner closes its provider request.
    const abort = await second.request('POST', `/api/streams/${streamId}/abort`);
    expect(abort.status).toBe(200);
    expect(abort.body).toEqual({ success: true });
    const [rest, original] = await Promise.all([resumed.events(), started.events()]);
    expect(typesOf(rest).slice(-2)).toEqual(['context_update', 'done']);
    expect(rest.at(-1)?.data.metadata.finishReason).toBe('aborted');
    expect(original.at(-1)?.data.metadata.finishReason).toBe('aborted');
    // The follower on the other instance saw exactly what the owner's reader saw.
    expect(rest.map((event) => event.id)).toEqual(original.slice(original.findIndex((event) => event.id === `${streamId}:6`)).map((event) => event.id));
    expect(ollama.chatRequests().at(-1)?.closedAt).toBeDefined();

    // After done, a replay from the start on the other instance is the whole stream.
    const replay = await openSse(`${second.url}/api/streams/${streamId}`);
    const all = await replay.events();
    expect(all.map((event) => Number(event.id?.split(':')[1]))).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
    // Asked for what follows its `done`, the other instance answers 204, as the owner would (CONTRACT §12).
    const beyond = await openSse(`${second.url}/api/streams/${streamId}?after=${all.length}`);
    expect(beyond.status).toBe(204);
    expect(await beyond.events()).toEqual([]);
  });

  it('an id unknown to both instances, or malformed, is 404 on either', async () => {
    const unknown = crypto.randomUUID();
    expectEnvelope(await second.request('GET', `/api/streams/${unknown}`), 404, 'NOT_FOUND');
    expectEnvelope(await second.request('POST', `/api/streams/${unknown}/abort`), 404, 'NOT_FOUND');
    expectEnvelope(await second.request('GET', `/api/terminals/${unknown}`), 404, 'NOT_FOUND');
    expectEnvelope(await second.request('POST', '/api/streams/not-an-id/abort'), 404, 'NOT_FOUND');
  });

  it('an instance starting beside a running generation leaves its answer streaming', async () => {
    ollama.enqueue({ kind: 'stallMidStream', chunks: ['Half ', 'way', ' never'], after: 2 });
    const stream = await openSse(`${first.url}/api/message/stream`, { json: { message: 'stall please', mode: 'chat' } });
    const streamId = stream.headers.get('x-stream-id') ?? '';
    await stream.events((event) => event.data.type === 'text' && event.data.content === 'way');
    await waitFor(async () => (await first.service.deps.store.db.message.count({ where: { streaming: true } })) === 1 || undefined, 2000, 'the answer row');
    await using third = await startTestService('postgresql', env, first.database);
    expect(await third.service.deps.store.db.message.count({ where: { streaming: true } })).toBe(1);
    expect((await second.request('POST', `/api/streams/${streamId}/abort`)).status).toBe(200);
    expect((await stream.events()).at(-1)?.data.metadata.finishReason).toBe('aborted');
  });

  it('terminal requests and a held command reaching the other instance are carried to the owner', async () => {
    const created = await first.request('POST', '/api/terminals', { json: {} });
    expect(created.status).toBe(200);
    const terminalId = created.body.terminalId as string;
    const viewed = await second.request('GET', `/api/terminals/${terminalId}`);
    expect(viewed.status).toBe(200);
    expect(viewed.body).toMatchObject({ terminalId, status: 'running', workingDirectory: workspace.path });

    const ran = await second.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'echo carried' } });
    expect(ran.body).toMatchObject({ success: true, output: 'carried', exitCode: 0 });

    // Keystrokes sent at /trpc through the other instance reach the program on the owner.
    const reading = first.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'head -n 1' } });
    const typed = { json: { terminalId, data: 'typed-elsewhere\n' } };
    await waitFor(async () => ((await second.request('POST', '/trpc/terminals.input', { json: typed })).status === 200 ? true : undefined));
    expect((await reading).body).toMatchObject({ success: true, output: expect.stringContaining('typed-elsewhere'), exitCode: 0 });

    mkdirSync(join(workspace.path, 'build'), { recursive: true });
    const held = await first.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'rm -r build' } });
    expect(held.status).toBe(202);
    // The pending list is the database's: either instance shows it.
    expect((await second.request('GET', '/api/security/pending')).body.pending.map((p: { id: string }) => p.id)).toEqual([held.body.commandId]);
    const confirmed = await second.request('POST', '/api/security/confirm', { json: { commandId: held.body.commandId, confirmed: true } });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ success: true, executed: true, exitCode: 0 });
    expect(existsSync(join(workspace.path, 'build'))).toBe(false);
    expect((await second.request('GET', `/api/terminals/${terminalId}/output`)).body.output).toContain('$ rm -r build');

    // A 202 carried back keeps its status; the terminal ends through the other instance too.
    const heldAgain = await second.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'kill 999999' } });
    expect(heldAgain.status).toBe(202);
    expect((await second.request('POST', '/api/security/confirm', { json: { commandId: heldAgain.body.commandId, confirmed: false } })).body).toEqual({
      success: true,
      executed: false,
    });
    // Live terminal I/O is not carried: the socket is refused with a reason, not a misleading 404.
    const socket = await connect(wsUrl(second.url, `/api/terminals/${terminalId}/ws`));
    expect(socket.ok ? 'opened' : [socket.status, socket.body.error.details.reason]).toEqual([503, 'terminal_elsewhere']);
    expect((await second.request('DELETE', `/api/terminals/${terminalId}`)).status).toBe(200);
    expect(first.service.deps.terminals.find(terminalId)).toBeUndefined();
    expectEnvelope(await second.request('GET', `/api/terminals/${terminalId}`), 404, 'NOT_FOUND');
  });

  it('with the owner unreachable the answer is 503 and the held command stays pending', async () => {
    await using owner = await startTestService('postgresql', env, first.database);
    const terminalId = (await owner.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
    const held = await owner.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'kill 999998' } });
    expect(held.status).toBe(202);
    // The owner stops listening on the bus, as a crashed instance would.
    await owner.service.deps.cluster?.calls.close();

    const error = expectEnvelope(await second.request('POST', '/api/security/confirm', { json: { commandId: held.body.commandId, confirmed: true } }), 503, 'SERVICE_UNAVAILABLE');
    expect(error.details).toEqual({ reason: 'owner_unreachable' });
    expectEnvelope(await second.request('GET', `/api/terminals/${terminalId}`), 503, 'SERVICE_UNAVAILABLE');
    const row = await first.service.deps.store.db.pendingCommand.findUniqueOrThrow({ where: { id: held.body.commandId } });
    expect(row.status).toBe('pending');
  });
});
