import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { rawRequest } from '../helpers/raw-request.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { isDoneOf, open, wsUrl } from '../helpers/ws-client.js';

// Issue 20: the rate group is counted once, by the procedure chain, whatever transport or path
// spelling brings the call. Before, the group was chosen from the raw path, so after a 429
// `POST /./api/model/switch` and `POST /x/../api/model/switch` got 200 without rate headers.

const limits = { RATE_LIMIT_ENABLED: 'true', API_RATE_LIMIT: '40', RATE_LIMIT_MODELS: '2', RATE_LIMIT_CHAT: '3', RATE_LIMIT_WORKSPACE: '40', RATE_LIMIT_TERMINAL: '40' };
const json = { 'content-type': 'application/json' };

describe('one rate limit for every transport and spelling', () => {
  let fake: FakeOllama;
  let service: TestService;
  beforeAll(async () => {
    fake = await startFakeOllama();
    service = await startTestService('sqlite', { ...limits, OLLAMA_BASE_URL: fake.url });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await fake.close();
  });

  it('after the models group is spent, no path spelling, /trpc call, batch or /v1 route reaches a models procedure', async () => {
    for (let i = 0; i < 2; i++) expect((await rawRequest(service.url, 'POST', '/api/model/switch', { headers: json, body: '{}' })).status).toBe(400);
    const spellings = [
      '/api/model/switch',
      '/./api/model/switch',
      '/x/../api/model/switch',
      '/api/./model/switch',
      '/api/%2e/model/switch',
      '/api/x/%2E%2E/model/switch',
      '/API/MODEL/SWITCH',
      '/api/model/switch/',
      '/api/model/switch?x=1',
      '//api/model/switch',
      '/api//model/switch',
      '/api/model/%73witch',
      '/api/models/download',
      '/api/models/../model/switch',
    ];
    for (const path of spellings) {
      const reply = await rawRequest(service.url, 'POST', path, { headers: json, body: '{}' });
      // Either it reaches the models group (429 with its headers) or no procedure at all (404).
      expect([404, 429], path).toContain(reply.status);
      if (reply.status === 429) {
        expect(reply.headers['x-ratelimit-limit'], path).toBe('2');
        expect(reply.body?.error?.details?.group, path).toBe('models');
      } else expect(reply.body?.error?.code, path).toBe('NOT_FOUND');
    }
    for (const path of ['/trpc/models.switch', '/trpc/x/models.switch', '/trpc/models%2Eswitch', '/TRPC/models.switch']) {
      const reply = await rawRequest(service.url, 'POST', path, { headers: json, body: '{"json":{}}' });
      expect(reply.status, path).toBe(429);
    }
    const batch = await rawRequest(service.url, 'POST', '/trpc/conversations.save,models.switch?batch=1', { headers: json, body: '{"0":{"json":{"title":"t"}},"1":{"json":{}}}' });
    expect(batch.body[0].result.data.json.success).toBe(true);
    expect(batch.body[1].error.json.data.httpStatus).toBe(429);
  });

  it('chat calls count once each in the chat group across REST, /v1, /trpc and the /ws channel', async () => {
    fake.enqueue({ kind: 'text', chunks: ['a'] }, { kind: 'text', chunks: ['b'] }, { kind: 'text', chunks: ['c'] });
    const first = await service.request('POST', '/api/message', { json: { message: 'one' } });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    const second = await service.request('POST', '/v1/chat/completions', { json: { model: 'ollama/llama3.2', messages: [{ role: 'user', content: 'two' }] } });
    expect(second.status).toBe(200);
    const socket = await open(wsUrl(service.url, '/ws'));
    socket.send({ type: 'message', id: 'three', data: { message: 'three' } });
    await socket.until(isDoneOf('three'));

    // Spent: every transport now refuses, and nothing reaches the provider.
    const requestsBefore = fake.requests.length;
    // A dot-segment spelling is no path at all: every layer would not read it alike (404).
    expect((await rawRequest(service.url, 'POST', '/./api/message', { headers: json, body: '{"message":"x"}' })).status).toBe(404);
    expect((await rawRequest(service.url, 'POST', '/api/message', { headers: json, body: '{"message":"x"}' })).status).toBe(429);
    expect((await rawRequest(service.url, 'POST', '/trpc/chat.send', { headers: json, body: '{"json":{"message":"x"}}' })).status).toBe(429);
    const v1 = await service.request('POST', '/v1/chat/completions', { json: { model: 'ollama/llama3.2', messages: [{ role: 'user', content: 'x' }] } });
    expect(v1.status).toBe(429);
    expect(v1.body.error.type).toBe('rate_limit_error');
    socket.send({ type: 'message', id: 'four', data: { message: 'four' } });
    const refused = await socket.until((frame) => frame.data?.requestId === 'four');
    expect(refused.at(-1)?.data.code).toBe('RATE_LIMIT_EXCEEDED');
    socket.close();
    expect(fake.requests.length).toBe(requestsBefore);
  });
});

describe('what is not counted', () => {
  it('terminal keystrokes (terminals.input) count in no group, so typing never meets a limit', async () => {
    await using service = await startTestService('sqlite', { ...limits, API_RATE_LIMIT: '3' });
    const statuses = [];
    for (let i = 0; i < 10; i++) {
      const reply = await rawRequest(service.url, 'POST', '/trpc/terminals.input', {
        headers: json,
        body: JSON.stringify({ json: { terminalId: '3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e90', data: 'x' } }),
      });
      expect(reply.headers['x-ratelimit-limit']).toBeUndefined();
      statuses.push(reply.status);
    }
    // Refused by the feature flag (terminals are off here), never by a limit.
    expect(new Set(statuses)).toEqual(new Set([403]));
    // The general group is untouched by them: three calls still pass.
    for (let i = 0; i < 3; i++) expect((await service.request('GET', '/api/conversations')).status).toBe(200);
    expect((await service.request('GET', '/api/conversations')).status).toBe(429);
  });
});
