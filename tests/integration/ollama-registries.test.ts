import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { openSse } from '../helpers/sse.js';
import { startTestService, type TestResponse, type TestService } from '../helpers/test-service.js';
import { open, wsUrl } from '../helpers/ws-client.js';
import { waitFor } from '../helpers/wait-for.js';

// CONTRACT §1 (OLLAMA_ALLOWED_REGISTRIES): an Ollama model name that names another registry host
// is refused with 400 INVALID_REQUEST naming the model and the variable, on every path that pulls
// or uses an Ollama model, whatever transport carries it, before Ollama hears of it. Without the
// rule each of these requests reaches Ollama, which would fetch from the named host.

const hostileNames = [
  'evil.example/library/x',
  'evil.example:5000/x',
  'localhost:11434/x',
  'LOCALHOST/x',
  'EVIL.EXAMPLE/library/x:latest',
  'evil/library/x',
  'évil.example/x',
  'http://evil/x',
];

/** Names no Ollama accepts (non-ASCII, a scheme): a download refuses them as malformed before the registry rule. */
const malformed = new Set(['évil.example/x', 'http://evil/x']);

function expectRefusal(reply: { status: number; body: any }, name: string, path = '') {
  expect(reply.status).toBe(400);
  expect(reply.body).toMatchObject({ success: false, error: { code: 'INVALID_REQUEST' } });
  expect(reply.body.error.message).toContain(name);
  if (path.endsWith('/download') && malformed.has(name)) expect(reply.body.error.message).toContain('not a valid Ollama model name');
  else expect(reply.body.error.message).toContain('OLLAMA_ALLOWED_REGISTRIES');
}

describe('Ollama model names naming another registry', () => {
  let ollama: FakeOllama;
  let svc: TestService;
  beforeAll(async () => {
    ollama = await startFakeOllama({ models: ['llama3.2:latest'] });
    svc = await startTestService('sqlite', { OLLAMA_BASE_URL: ollama.url, AI_MODEL_PROVIDER: 'ollama', AI_MODEL_NAME: 'llama3.2' });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await ollama.close();
  });
  beforeEach(() => {
    ollama.reset();
  });

  /** Nothing that could make Ollama pull (or chat with) the named model reached it. */
  function expectOllamaUntouched() {
    expect(ollama.requests.filter((request) => request.method === 'POST').map((request) => request.path)).toEqual([]);
  }

  for (const name of hostileNames) {
    describe(name, () => {
      it('download (both spellings, bare, prefixed, with provider) → 400; no pull', async () => {
        for (const [path, body] of [
          ['/api/model/download', { modelName: name }],
          ['/api/models/download', { modelName: name }],
          ['/api/model/download', { modelName: name, provider: 'ollama' }],
          ['/api/model/download', { modelName: `ollama/${name}` }],
        ] as const) {
          expectRefusal(await svc.request('POST', path, { json: body }), name, path);
        }
        expectOllamaUntouched();
        const listed = (await svc.request('GET', '/api/models')).body.models as { name: string }[];
        expect(listed.some((entry) => entry.name.includes('evil'))).toBe(false);
      });

      it('switch → 400, and the active model is unchanged', async () => {
        expectRefusal(await svc.request('POST', '/api/model/switch', { json: { modelName: name, provider: 'ollama' } }), name);
        expectRefusal(await svc.request('POST', '/api/model/switch', { json: { modelName: `ollama/${name}` } }), name);
        expect((await svc.request('GET', '/api/model/current')).body).toMatchObject({ provider: 'ollama' });
        expect(JSON.stringify((await svc.request('GET', '/api/model/current')).body)).not.toContain('evil');
        expectOllamaUntouched();
      });

      it('chat with `model` on the message, stream, unified, per-provider and markdown paths → 400 JSON; nothing sent', async () => {
        const attempts: [string, Record<string, unknown>][] = [
          ['/api/message', { message: 'hi', mode: 'chat', model: `ollama/${name}` }],
          ['/api/message/stream', { message: 'hi', mode: 'chat', model: `ollama/${name}` }],
          ['/api/message/stream/markdown', { message: 'hi', mode: 'chat', model: `ollama/${name}` }],
          ['/api/unified/message', { message: 'hi', mode: 'chat', provider: 'ollama', model: name }],
          ['/api/unified/stream', { message: 'hi', mode: 'chat', provider: 'ollama', model: name }],
          ['/api/ollama/message', { message: 'hi', mode: 'chat', model: name }],
          ['/api/ollama/stream', { message: 'hi', mode: 'chat', model: name }],
        ];
        for (const [path, body] of attempts) {
          const reply = await openSse(`${svc.url}${path}`, { json: body });
          expect(reply.headers.get('content-type'), path).toMatch(/^application\/json/);
          expectRefusal({ status: reply.status, body: reply.json }, name);
        }
        expectOllamaUntouched();
      });

      it('/v1/chat/completions, whole and streamed → 400 in OpenAI’s error object; nothing sent', async () => {
        for (const stream of [false, true]) {
          const reply: TestResponse = await svc.request('POST', '/v1/chat/completions', {
            json: { model: `ollama/${name}`, stream, messages: [{ role: 'user', content: 'hi' }] },
          });
          expect(reply.status).toBe(400);
          expect(reply.body.error.message).toContain(name);
          expect(reply.body.error.message).toContain('OLLAMA_ALLOWED_REGISTRIES');
        }
        expectOllamaUntouched();
      });

      it('a chat frame on /ws → an INVALID_REQUEST error frame; nothing sent', async () => {
        const client = await open(wsUrl(svc.url, '/ws'));
        try {
          client.send({ type: 'message', id: 'pull-it', data: { message: 'hi', mode: 'chat', model: `ollama/${name}` } });
          const frames = await client.until((frame) => frame.type === 'error' && frame.data?.requestId === 'pull-it');
          const error = frames.at(-1)?.data;
          expect(error.code).toBe('INVALID_REQUEST');
          expect(error.message).toContain('OLLAMA_ALLOWED_REGISTRIES');
        } finally {
          client.close();
        }
        expectOllamaUntouched();
      });
    });
  }

  it('names on Ollama’s own registry still work: bare, with a namespace, with registry.ollama.ai spelled out', async () => {
    for (const name of ['llama3.2', 'library/llama3.2', 'registry.ollama.ai/library/llama3.2']) {
      const reply = await svc.request('POST', '/api/model/download', { json: { modelName: name } });
      expect(reply.status, `${name}: ${reply.text}`).toBe(200);
    }
    const chat = await svc.request('POST', '/api/message', { json: { message: 'hi', mode: 'chat', model: 'ollama/llama3.2' } });
    expect(chat.status, chat.text).toBe(200);
  });
});

describe('OLLAMA_ALLOWED_REGISTRIES lists a host', () => {
  let ollama: FakeOllama;
  let svc: TestService;
  beforeAll(async () => {
    ollama = await startFakeOllama({ models: ['llama3.2:latest'] });
    ollama.pullSettings = { stepDelayMs: 1, steps: 2, totalBytes: 1000 };
    svc = await startTestService('sqlite', { OLLAMA_BASE_URL: ollama.url, OLLAMA_ALLOWED_REGISTRIES: 'Registry.Internal:5000' });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await ollama.close();
  });

  it('that host’s models are pulled, switched to and chatted with; every other host is still refused', async () => {
    const allowed = 'registry.internal:5000/team/coder:7b';
    const download = await svc.request('POST', '/api/model/download', { json: { modelName: allowed } });
    expect(download.status, download.text).toBe(200);
    await waitFor(() => ollama.installed.has(allowed) || undefined, 5000, 'the pull to finish');
    expect(ollama.requests.filter((request) => request.path === '/api/pull').map((request) => request.body.model ?? request.body.name)).toEqual([allowed]);

    const switched = await svc.request('POST', '/api/model/switch', { json: { modelName: `ollama/${allowed}` } });
    expect(switched.status, switched.text).toBe(200);
    ollama.enqueue({ kind: 'text', chunks: ['from ', 'the internal registry'] });
    const chat = await svc.request('POST', '/api/message', { json: { message: 'hi', mode: 'chat' } });
    expect(chat.status, chat.text).toBe(200);
    expect(chat.body.response).toBe('from the internal registry');

    for (const name of ['registry.internal/team/coder', 'registry.internal:5001/team/coder', 'evil.registry.internal:5000/x/y']) {
      expectRefusal(await svc.request('POST', '/api/model/download', { json: { modelName: name } }), name);
    }
    // A scheme is refused even before the listed host.
    const viaUrl = 'https://registry.internal:5000/team/coder';
    expectRefusal(await svc.request('POST', '/api/model/switch', { json: { modelName: viaUrl, provider: 'ollama' } }), viaUrl);
  });
});
