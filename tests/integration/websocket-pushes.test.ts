import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { sandboxAvailable } from '../helpers/sandbox.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { isDoneOf, open, wsUrl, type Frame } from '../helpers/ws-client.js';

// CONTRACT §8's server pushes: `context_update` frames on every socket of the user, with
// `data.kind` pending_command, command_done, model_download or conversation.

const pushOf = (kind: string) => (frame: Frame) => frame.type === 'context_update' && frame.data?.kind === kind;

describe('pushes to the user’s sockets', () => {
  let fake: FakeOllama;
  let service: TestService;
  beforeAll(async () => {
    fake = await startFakeOllama();
    service = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await fake.close();
  });

  it('conversation changes made over REST reach the socket', async () => {
    const client = await open(wsUrl(service.url, '/ws'));
    const saved = await service.request('POST', '/api/conversation/save', { json: { conversationData: { messages: [{ role: 'user', content: 'pushed' }] } } });
    const conversationId = saved.body.conversationId as string;
    expect((await client.until(pushOf('conversation'))).at(-1)?.data).toEqual({ kind: 'conversation', action: 'saved', conversationId });
    await service.request('POST', `/api/conversation/${conversationId}/rename`, { json: { title: 'Renamed' } });
    expect((await client.until(pushOf('conversation'))).at(-1)?.data).toMatchObject({ action: 'renamed', conversationId, title: 'Renamed' });
    await service.request('DELETE', `/api/conversation/${conversationId}`);
    expect((await client.until(pushOf('conversation'))).at(-1)?.data).toMatchObject({ action: 'deleted', conversationId });
    client.close();
  });

  it('an answer finished on one socket is announced on the user’s other sockets', async () => {
    const chatting = await open(wsUrl(service.url, '/ws'));
    const watching = await open(wsUrl(service.url, '/ws'));
    fake.enqueue({ kind: 'text', chunks: ['done'] });
    chatting.send({ type: 'message', id: 'q', data: { message: 'Hello' } });
    const done = (await chatting.until(isDoneOf('q'))).at(-1)?.data.event;
    const push = (await watching.until(pushOf('conversation'))).at(-1)?.data;
    expect(push).toMatchObject({ kind: 'conversation', action: 'answered', conversationId: done.metadata.conversationId });
    chatting.close();
    watching.close();
  });

  it('a model download reports its progress and its end', async () => {
    const client = await open(wsUrl(service.url, '/ws'));
    expect((await service.request('POST', '/api/model/download', { json: { modelName: 'gemma3:4b' } })).status).toBe(200);
    const frames = await client.until((frame) => pushOf('model_download')(frame) && frame.data.status !== 'downloading');
    const downloads = frames.filter(pushOf('model_download')).map((frame) => frame.data);
    expect(downloads[0]).toMatchObject({ kind: 'model_download', modelName: 'gemma3:4b', status: 'downloading' });
    expect(downloads.at(-1)).toMatchObject({ status: 'available' });
    client.close();
  });
});

describe.runIf(sandboxAvailable)('command pushes', () => {
  let service: TestService;
  let workspace: Folder;
  beforeAll(async () => {
    workspace = makeFolder();
    service = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true' });
    await service.request('POST', '/api/workspaces/add', { json: { name: 'pushes', path: workspace.path } });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    workspace[Symbol.dispose]();
  });

  it('a held command and a finished one are pushed', async () => {
    const client = await open(wsUrl(service.url, '/ws'));
    const terminalId = (await service.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
    const held = await service.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'rm -r build' } });
    expect(held.status).toBe(202);
    expect((await client.until(pushOf('pending_command'))).at(-1)?.data).toMatchObject({
      kind: 'pending_command',
      commandId: held.body.commandId,
      terminalId,
      command: 'rm -r build',
      risk: 'high',
    });
    await service.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'false' } });
    expect((await client.until(pushOf('command_done'))).at(-1)?.data).toEqual({ kind: 'command_done', terminalId, exitCode: 1 });
    client.close();
  });
});
