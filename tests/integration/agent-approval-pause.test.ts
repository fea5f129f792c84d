import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama, type Script } from '../fakes/index.js';
import { initRepository, makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { describeWithSandbox } from '../helpers/sandbox.js';
import { openSse, typesOf, type SseEvent, type SseStream } from '../helpers/sse.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';
import { isDoneOf, open, wsUrl } from '../helpers/ws-client.js';

// CONTRACT §12, "agent approval is a pause, not an end": on a streaming path a held run_command
// pauses the generation with its stream open (pings), and the decision — confirmed and run,
// rejected, expired — is the tool result the model continues from, in the same stream.

const call = (id: string, command: string) => ({ id, name: 'run_command', arguments: { command } });
const tools = (...calls: ReturnType<typeof call>[]): Script => ({ kind: 'tools', calls });
const answer = (text: string): Script => ({ kind: 'text', chunks: [text] });
const isType = (type: string) => (event: SseEvent) => event.data.type === type;

/** The tool messages the model was sent in a recorded Ollama request, parsed. */
function toolResultsSent(body: any): unknown[] {
  return (body.messages as { role: string; content: string }[]).filter((message) => message.role === 'tool').map((message) => JSON.parse(message.content) as unknown);
}

describeWithSandbox('a held command pauses the agent until it is decided', () => {
  let fake: FakeOllama;
  let workspace: Folder;
  let svc: TestService;
  // Short-lived holds and one stream per user: expiry and the stream cap, in their own service.
  let brief: TestService;

  beforeAll(async () => {
    fake = await startFakeOllama();
    workspace = makeFolder();
    initRepository(workspace.path);
    const env = { OLLAMA_BASE_URL: fake.url, RATE_LIMIT_ENABLED: 'false', SSE_PING_INTERVAL_MS: '100', ENABLE_SYSTEM_COMMANDS: 'true' };
    svc = await startTestService('sqlite', env);
    brief = await startTestService('sqlite', { ...env, PENDING_COMMAND_LIFETIME_MS: '2000', MAX_STREAMS_PER_USER: '1' });
    for (const service of [svc, brief]) {
      expect((await service.request('POST', '/api/workspaces/add', { json: { name: 'agent', path: workspace.path } })).status).toBe(200);
    }
  }, 60_000);
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await brief[Symbol.asyncDispose]();
    await fake.close();
    workspace[Symbol.dispose]();
  });
  beforeEach(async () => {
    fake.reset();
    for (const service of [svc, brief]) expect((await service.request('POST', '/api/context/clear')).status).toBe(200);
  });

  async function startAgent(service: TestService, message: string): Promise<{ stream: SseStream; streamId: string; heldCall: SseEvent }> {
    const stream = await openSse(`${service.url}/api/message/stream`, { json: { message, mode: 'agent' } });
    expect(stream.status, JSON.stringify(stream.json)).toBe(200);
    const streamId = stream.headers.get('x-stream-id') ?? '';
    const [heldCall] = (await stream.events(isType('tool_call'))).slice(-1);
    if (!heldCall) throw new Error('the stream ended before its tool call');
    return { stream, streamId, heldCall };
  }

  async function pendingOf(service: TestService): Promise<{ id: string; command: string }[]> {
    return (await service.request('GET', '/api/security/pending')).body.pending;
  }

  /** The held command, once listed (the tool_call is announced before the terminal starts and the command is judged). */
  async function heldCommand(service: TestService, command: string): Promise<string> {
    let id: string | undefined;
    await expect
      .poll(async () => {
        id = (await pendingOf(service)).find((entry) => entry.command === command)?.id;
        return id;
      }, { timeout: 15_000 })
      .toBeDefined();
    return id ?? '';
  }

  it('confirmed: the command runs and its output is the tool result the model continues from, in the same stream', async () => {
    mkdirSync(join(workspace.path, 'build'), { recursive: true });
    const command = 'rm -rf ./build; echo removed';
    fake.enqueue(tools(call('c1', command)), answer('The build folder is gone.'));
    const { stream, heldCall } = await startAgent(svc, 'clean the build');
    expect(heldCall.data).toMatchObject({ name: 'run_command', params: { command } });
    const commandId = await heldCommand(svc, command);
    // Paused: nothing more is said and the model was asked once; the stream stays open, pinged
    // every 100 ms (the pings are read with the rest below).
    await new Promise((resolve) => setTimeout(resolve, 600));
    const pingsBefore = stream.comments.length;
    expect(fake.chatRequests()).toHaveLength(1);
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);

    const confirmed = await svc.request('POST', '/api/security/confirm', { json: { commandId, confirmed: true } });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ success: true, executed: true, exitCode: 0, output: 'removed' });
    const rest = await stream.events();
    expect(typesOf(rest)).toEqual(['tool_result', 'text', 'context_update', 'done']);
    expect(rest[0]?.data).toMatchObject({ id: heldCall.data.id, name: 'run_command', result: { status: 'completed', exitCode: 0, output: 'removed' } });
    expect(rest[1]?.data.content).toBe('The build folder is gone.');
    expect(rest.at(-1)?.data.metadata.finishReason).toBe('stop');
    expect(stream.comments.length - pingsBefore).toBeGreaterThanOrEqual(3);
    expect(existsSync(join(workspace.path, 'build'))).toBe(false);
    // The model's second request carried the command's real outcome.
    expect(toolResultsSent(fake.chatRequests()[1]?.body)).toEqual([expect.objectContaining({ status: 'completed', exitCode: 0, output: 'removed' })]);
    expect(await pendingOf(svc)).toEqual([]);
  });

  it('rejected: the tool result says so, the model continues, nothing ran', async () => {
    mkdirSync(join(workspace.path, 'keep'), { recursive: true });
    const command = 'rm -rf ./keep';
    fake.enqueue(tools(call('c1', command)), answer('Understood, I left it.'));
    const { stream } = await startAgent(svc, 'remove keep');
    const commandId = await heldCommand(svc, command);
    expect((await svc.request('POST', '/api/security/confirm', { json: { commandId, confirmed: false } })).body).toEqual({ success: true, executed: false });
    const rest = await stream.events();
    expect(typesOf(rest)).toEqual(['tool_result', 'text', 'context_update', 'done']);
    expect(rest[0]?.data.result).toEqual({ rejected: true, commandId });
    expect(toolResultsSent(fake.chatRequests()[1]?.body)).toEqual([{ rejected: true, commandId }]);
    expect(existsSync(join(workspace.path, 'keep'))).toBe(true);
    // A decided command cannot be decided again.
    expectEnvelope(await svc.request('POST', '/api/security/confirm', { json: { commandId, confirmed: true } }), 404, 'NOT_FOUND');
  });

  it('several held commands in one turn are asked and decided in order', async () => {
    mkdirSync(join(workspace.path, 'one'), { recursive: true });
    mkdirSync(join(workspace.path, 'two'), { recursive: true });
    fake.enqueue(tools(call('c1', 'rm -rf ./one'), call('c2', 'rm -rf ./two')), answer('One removed, two kept.'));
    const { stream, heldCall } = await startAgent(svc, 'remove both');
    // (Ollama gives tool calls no ids: the service names them.)
    expect(heldCall.data.params).toEqual({ command: 'rm -rf ./one' });
    const first = await heldCommand(svc, 'rm -rf ./one');
    // The second is not asked (nor held) before the first is decided.
    expect((await pendingOf(svc)).map((entry) => entry.command).filter((command) => command.endsWith('./two'))).toEqual([]);
    expect((await svc.request('POST', '/api/security/confirm', { json: { commandId: first, confirmed: true } })).status).toBe(200);
    const untilSecond = await stream.events(isType('tool_call'));
    expect(typesOf(untilSecond)).toEqual(['tool_result', 'tool_call']);
    expect(untilSecond[0]?.data).toMatchObject({ id: heldCall.data.id, result: { status: 'completed', exitCode: 0 } });
    expect(untilSecond[1]?.data).toMatchObject({ params: { command: 'rm -rf ./two' } });
    const second = await heldCommand(svc, 'rm -rf ./two');
    expect((await svc.request('POST', '/api/security/confirm', { json: { commandId: second, confirmed: false } })).status).toBe(200);
    const rest = await stream.events();
    expect(typesOf(rest)).toEqual(['tool_result', 'text', 'context_update', 'done']);
    expect(rest[0]?.data).toMatchObject({ id: untilSecond[1]?.data.id, result: { rejected: true, commandId: second } });
    expect(existsSync(join(workspace.path, 'one'))).toBe(false);
    expect(existsSync(join(workspace.path, 'two'))).toBe(true);
    expect(toolResultsSent(fake.chatRequests()[1]?.body)).toEqual([
      expect.objectContaining({ status: 'completed', exitCode: 0 }),
      { rejected: true, commandId: second },
    ]);
  });

  it('a confirmation and a rejection racing: exactly one decides, and the agent is told that one', async () => {
    mkdirSync(join(workspace.path, 'raced'), { recursive: true });
    const command = 'rm -rf ./raced; echo ran';
    fake.enqueue(tools(call('c1', command)), answer('Settled.'));
    const { stream } = await startAgent(svc, 'race it');
    const commandId = await heldCommand(svc, command);
    const [run, reject] = await Promise.all([
      svc.request('POST', '/api/security/confirm', { json: { commandId, confirmed: true } }),
      svc.request('POST', '/api/security/confirm', { json: { commandId, confirmed: false } }),
    ]);
    expect([run.status, reject.status].sort()).toEqual([200, 404]);
    const rest = await stream.events();
    expect(typesOf(rest)).toEqual(['tool_result', 'text', 'context_update', 'done']);
    if (run.status === 200) {
      expect(rest[0]?.data.result).toMatchObject({ status: 'completed', output: 'ran' });
      expect(existsSync(join(workspace.path, 'raced'))).toBe(false);
    } else {
      expect(rest[0]?.data.result).toEqual({ rejected: true, commandId });
      expect(existsSync(join(workspace.path, 'raced'))).toBe(true);
    }
  });

  it('the paused stream survives its client leaving: a reconnect replays it and follows it to the end', async () => {
    const command = 'rm -rf ./gone-later; echo after-reconnect';
    fake.enqueue(tools(call('c1', command)), answer('Done after you came back.'));
    const { stream, streamId } = await startAgent(svc, 'reconnect please');
    const commandId = await heldCommand(svc, command);
    await stream.cancel();
    const again = await openSse(`${svc.url}/api/streams/${streamId}`);
    expect(again.status).toBe(200);
    expect(typesOf(await again.events(isType('tool_call')))).toEqual(['tool_call']);
    expect((await svc.request('POST', '/api/security/confirm', { json: { commandId, confirmed: true } })).body.output).toBe('after-reconnect');
    const rest = await again.events();
    expect(typesOf(rest)).toEqual(['tool_result', 'text', 'context_update', 'done']);
    expect(rest[0]?.data.result).toMatchObject({ status: 'completed', output: 'after-reconnect' });
    // One answer stored, with the tool call and its result.
    const conversation = (await svc.request('GET', `/api/conversation/${rest.at(-1)?.data.metadata.conversationId as string}`)).body;
    const answers = conversation.messages.filter((message: { role: string }) => message.role === 'assistant');
    expect(answers).toHaveLength(1);
    expect(answers[0].content).toBe('Done after you came back.');
  });

  it('stopping the paused answer ends it as aborted and leaves the command pending', async () => {
    const command = 'rm -rf ./stopped';
    fake.enqueue(tools(call('c1', command)));
    const { stream, streamId } = await startAgent(svc, 'stop while waiting');
    const commandId = await heldCommand(svc, command);
    expect((await svc.request('POST', `/api/streams/${streamId}/abort`)).status).toBe(200);
    const rest = await stream.events();
    expect(typesOf(rest)).toEqual(['tool_result', 'context_update', 'done']);
    expect(rest[0]?.data.result).toMatchObject({ code: 'ABORTED' });
    expect(rest.at(-1)?.data.metadata.finishReason).toBe('aborted');
    expect(fake.chatRequests()).toHaveLength(1);
    expect((await pendingOf(svc)).map((entry) => entry.id)).toContain(commandId);
    expect((await svc.request('POST', '/api/security/confirm', { json: { commandId, confirmed: false } })).status).toBe(200);
  });

  it('expired: the tool result says so; meanwhile the paused stream counts toward MAX_STREAMS_PER_USER', async () => {
    const command = 'rm -rf ./expiring';
    fake.enqueue(tools(call('c1', command)), answer('It expired, so I did nothing.'));
    const { stream } = await startAgent(brief, 'let it expire');
    const commandId = await heldCommand(brief, command);
    // The one stream allowed is the paused one.
    const second = await brief.request('POST', '/api/message/stream', { json: { message: 'another', mode: 'chat' } });
    expect(expectEnvelope(second, 429, 'RATE_LIMIT_EXCEEDED').details).toMatchObject({ cap: 1 });
    const rest = await stream.events();
    expect(typesOf(rest)).toEqual(['tool_result', 'text', 'context_update', 'done']);
    expect(rest[0]?.data.result).toEqual({ expired: true, commandId });
    expect(toolResultsSent(fake.chatRequests()[1]?.body)).toEqual([{ expired: true, commandId }]);
    expect(await pendingOf(brief)).toEqual([]);
    expectEnvelope(await brief.request('POST', '/api/security/confirm', { json: { commandId, confirmed: true } }), 404, 'NOT_FOUND');
    const audit = (await brief.request('GET', '/api/audit/log?type=command&limit=20')).body;
    expect(JSON.stringify(audit)).toContain('"expired"');
  });

  it('on /ws too: the hold is pushed naming the tool call, and the confirmed output continues the same request', async () => {
    const command = 'rm -rf ./ws-build; echo via-socket';
    fake.enqueue(tools(call('c1', command)), answer('Done over the socket.'));
    const client = await open(wsUrl(svc.url, '/ws'));
    try {
      client.send({ type: 'message', id: 'agent-1', data: { message: 'socket agent', mode: 'agent' } });
      const untilHold = await client.until((frame) => frame.data?.kind === 'pending_command');
      const toolCall = untilHold.find((frame) => frame.data?.event?.type === 'tool_call')?.data.event;
      const hold = untilHold.at(-1)?.data;
      expect(hold).toMatchObject({ kind: 'pending_command', command, risk: 'high', toolCallId: toolCall.id });
      expect((await svc.request('POST', '/api/security/confirm', { json: { commandId: hold.commandId, confirmed: true } })).status).toBe(200);
      const rest = (await client.until(isDoneOf('agent-1'))).filter((frame) => frame.data?.requestId === 'agent-1').map((frame) => frame.data.event);
      expect(rest.map((event) => event.type)).toEqual(['tool_result', 'text', 'context_update', 'done']);
      expect(rest[0]).toMatchObject({ id: toolCall.id, result: { status: 'completed', exitCode: 0, output: 'via-socket' } });
    } finally {
      client.close();
    }
  });

  it('the JSON path does not pause: the hold itself is the tool result', async () => {
    const command = 'rm -rf ./json-path';
    fake.enqueue(tools(call('c1', command)), answer('Waiting for you.'));
    const reply = await svc.request('POST', '/api/message', { json: { message: 'json agent', mode: 'agent' } });
    expect(reply.status).toBe(200);
    expect(reply.body.toolCalls[0].result).toMatchObject({ status: 'pending_confirmation', risk: 'high' });
    expect(reply.body.response).toBe('Waiting for you.');
  });
});
