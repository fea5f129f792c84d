import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama, type Script } from '../fakes/index.js';
import { initRepository, makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { describeWithSandbox } from '../helpers/sandbox.js';
import { openSse, typesOf, type SseEvent } from '../helpers/sse.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §7's modes and tools, seen from both ends: what the provider is offered (the tools of
// its request), what the tools do in the active workspace (tool_call / tool_result events, the
// result sent back to the model), and run_command through the sandboxed terminal pipeline (§4).

const readOnlyTools = ['git_status', 'list_files', 'read_file'];

/** The names of the tools offered in a recorded Ollama request, sorted; [] when none. */
function offeredTools(body: any): string[] {
  const tools = (body.tools ?? []) as { type: string; function: { name: string } }[];
  return tools.map((tool) => tool.function.name).sort();
}

const toolCall = (name: string, args: unknown): Script => ({ kind: 'tools', calls: [{ id: `call_${name}`, name, arguments: args }] });
const answer = (text: string): Script => ({ kind: 'text', chunks: [text] });

interface Exchange {
  events: SseEvent[];
  types: string[];
  calls: any[];
  results: any[];
  done: any;
}

async function chat(svc: TestService, message: string, mode: 'chat' | 'assistant' | 'agent'): Promise<Exchange> {
  const stream = await openSse(`${svc.url}/api/message/stream`, { json: { message, mode } });
  expect(stream.status, JSON.stringify(stream.json)).toBe(200);
  const events = await stream.events();
  const types = typesOf(events);
  expect(types.filter((type) => type === 'done')).toHaveLength(1);
  expect(types.slice(-2)).toEqual(['context_update', 'done']);
  return {
    events,
    types,
    calls: events.filter((event) => event.data.type === 'tool_call').map((event) => event.data),
    results: events.filter((event) => event.data.type === 'tool_result').map((event) => event.data),
    done: events.at(-1)?.data,
  };
}

/** One tool call answered, then the model's text: the whole event sequence, ids paired. */
function expectOneToolRoundTrip(exchange: Exchange, name: string, text: string) {
  expect(exchange.types).toEqual(['tool_call', 'tool_result', 'text', 'context_update', 'done']);
  const [call] = exchange.calls;
  const [result] = exchange.results;
  expect(call).toMatchObject({ type: 'tool_call', name, id: expect.any(String) });
  expect(result).toMatchObject({ type: 'tool_result', name, id: call.id });
  expect(exchange.events[2]?.data.content).toBe(text);
  expect(exchange.done.metadata.finishReason).toBe('stop');
  return result.result;
}

/** The tool messages of a request, their content parsed when it is JSON (a tool's result) and as sent otherwise. */
function toolMessagesOf(body: any): unknown[] {
  return (body.messages as { role: string; content: string }[])
    .filter((message) => message.role === 'tool')
    .map((message) => {
      try {
        return JSON.parse(message.content) as unknown;
      } catch {
        return message.content;
      }
    });
}

describe('chat modes and tools', () => {
  let fake: FakeOllama;
  let workspace: Folder;
  let svc: TestService;

  beforeAll(async () => {
    fake = await startFakeOllama();
    workspace = makeFolder();
    initRepository(workspace.path);
    workspace.file('notes.txt', 'hello notes\n');
    svc = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url, MAX_TOOL_STEPS: '2', RATE_LIMIT_ENABLED: 'false' });
    expect((await svc.request('POST', '/api/workspaces/add', { json: { name: 'agent', path: workspace.path } })).status).toBe(200);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await fake.close();
    workspace[Symbol.dispose]();
  });
  beforeEach(async () => {
    fake.reset();
    // A conversation per test: the follow-up request then holds only this test's tool messages.
    expect((await svc.request('POST', '/api/context/clear')).status).toBe(200);
  });

  it('chat mode offers no tools', async () => {
    fake.enqueue(answer('plain'));
    const exchange = await chat(svc, 'just talk', 'chat');
    expect(exchange.types).toEqual(['text', 'context_update', 'done']);
    const [request] = fake.chatRequests();
    expect(request?.body.tools).toBeUndefined();
    expect(request?.body.messages[0].content).toContain('No tools are available');
  });

  it('assistant mode (the default) offers exactly list_files, read_file and git_status', async () => {
    fake.enqueue(answer('ok'));
    const reply = await svc.request('POST', '/api/message', { json: { message: 'which tools?' } });
    expect(reply.status).toBe(200);
    expect(offeredTools(fake.chatRequests()[0]?.body)).toEqual(readOnlyTools);
  });

  it('read_file runs in the active workspace; its result is the tool_result and goes back to the model', async () => {
    fake.enqueue(toolCall('read_file', { path: 'notes.txt' }), answer('It says hello.'));
    const exchange = await chat(svc, 'read my notes', 'assistant');
    const result = expectOneToolRoundTrip(exchange, 'read_file', 'It says hello.');
    expect(result).toEqual({ path: 'notes.txt', size: 12, content: 'hello notes\n', truncated: false });
    expect(exchange.calls[0].params).toEqual({ path: 'notes.txt' });
    const requests = fake.chatRequests();
    expect(requests).toHaveLength(2);
    expect(toolMessagesOf(requests[0]?.body)).toEqual([]);
    expect(toolMessagesOf(requests[1]?.body)).toEqual([result]);
  });

  it('list_files and git_status act on the workspace too', async () => {
    fake.enqueue(toolCall('list_files', { path: '.' }), answer('listed'));
    const listing = expectOneToolRoundTrip(await chat(svc, 'list', 'assistant'), 'list_files', 'listed');
    expect(listing.entries.map((entry: { name: string }) => entry.name)).toEqual(['.git', 'README.md', 'notes.txt']);

    fake.enqueue(toolCall('git_status', {}), answer('status told'));
    const status = expectOneToolRoundTrip(await chat(svc, 'status', 'assistant'), 'git_status', 'status told');
    expect(status).toMatchObject({ branch: 'main', status: 'dirty' });
    expect(status.error).toBeUndefined();
  });

  describe('a failing tool is a tool_result with error, and the generation goes on to done', () => {
    // `code` for the tools' own failures; calls refused before anything runs (arguments that do
    // not fit, a tool not on offer) carry only the error. Either way the model gets the result as JSON.
    const failing: { label: string; name: string; args: unknown; code?: string; error: RegExp }[] = [
      { label: 'a missing file', name: 'read_file', args: { path: 'missing.txt' }, code: 'WORKSPACE_ERROR', error: /^No such file or directory: missing\.txt$/ },
      { label: 'a path escaping the workspace', name: 'read_file', args: { path: '../../etc/passwd' }, code: 'SECURITY_VIOLATION', error: /outside the workspace/ },
      { label: 'an absolute path outside the workspace', name: 'list_files', args: { path: '/etc' }, code: 'SECURITY_VIOLATION', error: /outside the workspace/ },
      { label: 'arguments that do not fit the schema', name: 'read_file', args: { file: 'notes.txt' }, error: /^Invalid input for tool read_file/ },
      { label: 'arguments of the wrong type', name: 'read_file', args: { path: 42 }, error: /^Invalid input for tool read_file/ },
      { label: 'a tool that is not offered', name: 'write_file', args: { path: 'x.txt', content: 'x' }, error: /unavailable tool 'write_file'/ },
    ];
    for (const failure of failing) {
      it(failure.label, async () => {
        fake.enqueue(toolCall(failure.name, failure.args), answer('recovered'));
        const exchange = await chat(svc, `try ${failure.label}`, 'assistant');
        const result = expectOneToolRoundTrip(exchange, failure.name, 'recovered');
        expect(result.error).toMatch(failure.error);
        expect(JSON.stringify(result)).not.toContain('root:');
        // The model is told about the failure in the next request: the same error the client saw.
        const told = toolMessagesOf(fake.chatRequests()[1]?.body);
        expect(result).toEqual(failure.code ? { error: result.error, code: failure.code } : { error: result.error });
        expect(told).toEqual([result]);
        expect(existsSync(join(workspace.path, 'x.txt'))).toBe(false);
      });
    }
  });

  it('agent mode adds write_file (no run_command without ENABLE_SYSTEM_COMMANDS), which writes the file', async () => {
    fake.enqueue(toolCall('write_file', { path: 'out/new.txt', content: 'written by agent\n' }), answer('written'));
    const exchange = await chat(svc, 'write a file', 'agent');
    expect(offeredTools(fake.chatRequests()[0]?.body)).toEqual([...readOnlyTools, 'write_file'].sort());
    const result = expectOneToolRoundTrip(exchange, 'write_file', 'written');
    expect(result).toEqual({ path: 'out/new.txt', size: 17, created: true });
    expect(readFileSync(join(workspace.path, 'out/new.txt'), 'utf8')).toBe('written by agent\n');
  });

  it('ends with finishReason tool-calls when the model keeps calling tools past MAX_TOOL_STEPS', async () => {
    fake.enqueue(toolCall('list_files', { path: '.' }), toolCall('git_status', {}), toolCall('list_files', { path: '.' }), answer('never'));
    const exchange = await chat(svc, 'loop', 'assistant');
    expect(exchange.types).toEqual(['tool_call', 'tool_result', 'tool_call', 'tool_result', 'context_update', 'done']);
    expect(exchange.calls.map((call) => call.name)).toEqual(['list_files', 'git_status']);
    expect(exchange.done.metadata.finishReason).toBe('tool-calls');
    expect(fake.chatRequests()).toHaveLength(2);
    const messages = (await svc.request('GET', `/api/conversation/${exchange.done.metadata.conversationId}`)).body.messages;
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', finishReason: 'tool-calls' });
    expect(messages.at(-1).toolCalls.map((call: { name: string }) => call.name)).toEqual(['list_files', 'git_status']);
  });

  it('ENABLE_FILE_OPERATIONS=false leaves only git_status, in assistant and agent mode', async () => {
    await using restricted = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url, ENABLE_FILE_OPERATIONS: 'false', RATE_LIMIT_ENABLED: 'false' });
    expect((await restricted.request('POST', '/api/workspaces/add', { json: { name: 'agent', path: workspace.path } })).status).toBe(200);
    for (const mode of ['assistant', 'agent'] as const) {
      fake.reset();
      fake.enqueue(answer('ok'));
      await chat(restricted, `tools in ${mode}?`, mode);
      expect(offeredTools(fake.chatRequests()[0]?.body)).toEqual(['git_status']);
    }
    // A call to a removed tool does not read the file.
    fake.reset();
    fake.enqueue(toolCall('read_file', { path: 'notes.txt' }), answer('no'));
    const exchange = await chat(restricted, 'read anyway', 'assistant');
    expect(exchange.results[0].result.error).toEqual(expect.any(String));
    expect(JSON.stringify(exchange.results)).not.toContain('hello notes');
  });

  it('with no workspace registered no tools are offered', async () => {
    await using bare = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url, ENABLE_SYSTEM_COMMANDS: 'true', RATE_LIMIT_ENABLED: 'false' });
    for (const mode of ['assistant', 'agent'] as const) {
      fake.reset();
      fake.enqueue(answer('ok'));
      const exchange = await chat(bare, `tools in ${mode}?`, mode);
      expect(exchange.types).toEqual(['text', 'context_update', 'done']);
      expect(fake.chatRequests()[0]?.body.tools).toBeUndefined();
    }
  });
});

describeWithSandbox('agent run_command in the sandbox', () => {
  let fake: FakeOllama;
  let workspace: Folder;
  let svc: TestService;

  beforeAll(async () => {
    fake = await startFakeOllama();
    workspace = makeFolder();
    svc = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url, ENABLE_SYSTEM_COMMANDS: 'true', SANDBOX: 'bwrap', RATE_LIMIT_ENABLED: 'false' });
    expect((await svc.request('POST', '/api/workspaces/add', { json: { name: 'sandboxed', path: workspace.path } })).status).toBe(200);
  });
  afterAll(async () => {
    const { terminals } = svc.service.deps;
    for (const terminal of terminals.listFor('local')) terminals.remove(terminal);
    await svc[Symbol.asyncDispose]();
    await fake.close();
    workspace[Symbol.dispose]();
  });
  beforeEach(() => {
    fake.reset();
  });

  const pendingIds = async () => ((await svc.request('GET', '/api/security/pending')).body.pending as { id: string }[]).map((pending) => pending.id);

  it('agent mode offers run_command with ENABLE_SYSTEM_COMMANDS=true; assistant mode does not', async () => {
    fake.enqueue(answer('ok'), answer('ok'));
    await chat(svc, 'agent tools', 'agent');
    await chat(svc, 'assistant tools', 'assistant');
    const [agent, assistant] = fake.chatRequests();
    expect(offeredTools(agent?.body)).toEqual([...readOnlyTools, 'run_command', 'write_file'].sort());
    expect(offeredTools(assistant?.body)).toEqual(readOnlyTools);
  });

  it('runs a low-risk command and returns its exit code and output', async () => {
    fake.enqueue(toolCall('run_command', { command: 'echo hi' }), answer('it said hi'));
    const result = expectOneToolRoundTrip(await chat(svc, 'say hi', 'agent'), 'run_command', 'it said hi');
    expect(result).toEqual({ status: 'completed', exitCode: 0, output: 'hi', terminalId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(toolMessagesOf(fake.chatRequests()[1]?.body)).toEqual([result]);
  });

  it('holds a high-risk command for confirmation, also when the model claims it is low risk (the JSON path: the hold is the result)', async () => {
    // The streaming paths pause on a hold instead (agent-approval-pause.test.ts).
    mkdirSync(join(workspace.path, 'build'), { recursive: true });
    for (const args of [{ command: 'rm -rf ./build' }, { command: 'rm -rf ./build', risk: 'low' }]) {
      fake.reset();
      fake.enqueue(toolCall('run_command', args), answer('waiting for you'));
      const reply = await svc.request('POST', '/api/message', { json: { message: 'clean the build', mode: 'agent' } });
      expect(reply.status).toBe(200);
      expect(reply.body.response).toBe('waiting for you');
      const result = reply.body.toolCalls[0].result;
      // The second round of the loop has the first one's exchange in its history.
      expect(toolMessagesOf(fake.chatRequests()[1]?.body).at(-1)).toEqual(result);
      expect(result).toMatchObject({ status: 'pending_confirmation', commandId: expect.stringMatching(/^[0-9a-f-]{36}$/), risk: 'high' });
      expect(await pendingIds()).toContain(result.commandId);
      expect(existsSync(join(workspace.path, 'build'))).toBe(true);
    }
    const { pending } = (await svc.request('GET', '/api/security/pending')).body;
    expect(pending.map((entry: { command: string }) => entry.command)).toEqual(['rm -rf ./build', 'rm -rf ./build']);
  });

  it('refuses a critical command: a tool_result with error, nothing run or held', async () => {
    const before = await pendingIds();
    fake.enqueue(toolCall('run_command', { command: 'rm -rf /' }), answer('refused'));
    const result = expectOneToolRoundTrip(await chat(svc, 'wipe everything', 'agent'), 'run_command', 'refused');
    expect(result).toMatchObject({ error: expect.any(String), code: 'SECURITY_VIOLATION' });
    expect(result.status).toBeUndefined();
    expect(await pendingIds()).toEqual(before);
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
  });
});
