import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeOllama, type FakeProvider } from '../fakes/index.js';
import { callerFor, errorCodeOf, userWith } from '../helpers/callers.js';
import { closedOrigin } from '../helpers/closed-origin.js';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase } from '../helpers/databases.js';
import { expectEnvelope, request, startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// The models area against the real service, with wire-faithful fake providers at the network edge.

interface Entry {
  name: string;
  status: string;
  provider: string;
  capabilities: { streaming: boolean; tools: boolean; vision: boolean; contextWindow?: number };
  progress?: { completed: number; total: number };
  error?: string;
}

const SERVER_OPENAI_KEY = 'sk-server-openai-0123456789';
const SERVER_ANTHROPIC_KEY = 'sk-ant-server-0123456789';
const CALLER_OPENAI_KEY = 'sk-caller-openai-abcdefghij';
const CALLER_ANTHROPIC_KEY = 'sk-ant-caller-abcdefghij';

const baseEnv = { RATE_LIMIT_ENABLED: 'false', ENABLE_SCHEDULING: 'false' };

/** A provider that answers every request with one status, in OpenAI's error format. */
async function statusServer(status: number): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '7' });
    res.end(JSON.stringify({ error: { message: `fake ${status}`, type: 'error' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

const models = async (svc: TestService, path = '/api/models'): Promise<Entry[]> => {
  const res = await svc.request('GET', path);
  expect(res.status, res.text).toBe(200);
  return res.body.models as Entry[];
};

const find = (list: Entry[], provider: string, name: string) => list.find((entry) => entry.provider === provider && entry.name === name);

const modelAudit = async (svc: TestService) =>
  (await svc.request('GET', '/api/audit/log?type=model&limit=1000')).body.entries as { type: string; details: Record<string, unknown> }[];

describe('model lists across providers', () => {
  let ollama: FakeOllama;
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  let svc: TestService;
  beforeAll(async () => {
    ollama = await startFakeOllama({ models: ['llama3.2:latest', 'llava:7b', 'qwen3:8b'] });
    openai = await startFakeOpenAI({ apiKey: SERVER_OPENAI_KEY, models: ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'] });
    anthropic = await startFakeAnthropic({ apiKey: SERVER_ANTHROPIC_KEY });
    svc = await startTestService('sqlite', {
      ...baseEnv,
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: SERVER_OPENAI_KEY,
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: SERVER_ANTHROPIC_KEY,
    });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await Promise.all([ollama.close(), openai.close(), anthropic.close()]);
  });

  it("lists Ollama's installed models and the hosted providers' models, with capabilities", async () => {
    const list = await models(svc);
    expect(find(list, 'ollama', 'llama3.2:latest')).toMatchObject({ status: 'available', capabilities: { streaming: true, tools: true, vision: false } });
    expect(find(list, 'ollama', 'llava:7b')?.capabilities).toMatchObject({ vision: true });
    expect(find(list, 'ollama', 'qwen3:8b')?.capabilities).toMatchObject({ tools: true, vision: false });
    expect(find(list, 'openai', 'gpt-4o')).toEqual({
      name: 'gpt-4o',
      status: 'available',
      provider: 'openai',
      capabilities: { streaming: true, tools: true, vision: true, contextWindow: 128_000 },
    });
    expect(find(list, 'openai', 'gpt-4o-mini')?.status).toBe('available');
    // Embedding models cannot hold a chat and are not offered.
    expect(find(list, 'openai', 'text-embedding-3-small')).toBeUndefined();
    expect(find(list, 'anthropic', 'claude-sonnet-4-20250514')).toMatchObject({
      status: 'available',
      capabilities: { tools: true, vision: true, contextWindow: 200_000 },
    });
    // The active model (llama3.2, the first-start default) is the installed llama3.2:latest: listed once.
    expect(list.filter((entry) => entry.provider === 'ollama' && entry.name.startsWith('llama3.2'))).toHaveLength(1);
  });

  it("asks the hosted providers' model lists with the server keys, in each provider's own headers", async () => {
    openai.reset();
    anthropic.reset();
    await models(svc);
    const openaiList = openai.requests.find((request) => request.path === '/v1/models');
    expect(openaiList?.headers.authorization).toBe(`Bearer ${SERVER_OPENAI_KEY}`);
    const anthropicList = anthropic.requests.find((request) => request.path.startsWith('/v1/models'));
    expect(anthropicList?.headers['x-api-key']).toBe(SERVER_ANTHROPIC_KEY);
    expect(anthropicList?.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('GET /api/ollama/models lists the installed models', async () => {
    const list = await models(svc, '/api/ollama/models');
    expect(list.map((entry) => entry.name).sort()).toEqual(['llama3.2:latest', 'llava:7b', 'qwen3:8b']);
    expect(list.every((entry) => entry.provider === 'ollama' && entry.status === 'available')).toBe(true);
  });

  it('GET /api/model/current names the active model with its capabilities', async () => {
    const res = await svc.request('GET', '/api/model/current');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ model: 'llama3.2', provider: 'ollama', capabilities: { streaming: true, tools: true, vision: false } });
  });
});

describe('per-provider model lists with the caller’s key', () => {
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  let svc: TestService;
  beforeAll(async () => {
    // The fakes accept only the caller's keys: a list made with the server's key would fail.
    openai = await startFakeOpenAI({ apiKey: CALLER_OPENAI_KEY });
    anthropic = await startFakeAnthropic({ apiKey: CALLER_ANTHROPIC_KEY });
    svc = await startTestService('sqlite', {
      ...baseEnv,
      OLLAMA_BASE_URL: await closedOrigin(),
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: SERVER_OPENAI_KEY,
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: SERVER_ANTHROPIC_KEY,
    });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await Promise.all([openai.close(), anthropic.close()]);
  });

  it('lists with the key given in the query', async () => {
    const openaiModels = await models(svc, `/api/openai/models?apiKey=${CALLER_OPENAI_KEY}`);
    expect(openaiModels.map((entry) => entry.name)).toEqual(['gpt-4o-mini', 'gpt-4o']);
    expect(openaiModels.every((entry) => entry.provider === 'openai' && entry.status === 'available')).toBe(true);
    expect(openai.requests.at(-1)?.headers.authorization).toBe(`Bearer ${CALLER_OPENAI_KEY}`);

    const anthropicModels = await models(svc, `/api/anthropic/models?apiKey=${CALLER_ANTHROPIC_KEY}`);
    expect(anthropicModels.map((entry) => entry.name)).toEqual(['claude-sonnet-4-20250514', 'claude-3-5-haiku-20241022']);
    expect(anthropic.requests.at(-1)?.headers['x-api-key']).toBe(CALLER_ANTHROPIC_KEY);
  });

  it('a missing apiKey is 400 INVALID_REQUEST, without asking the provider', async () => {
    openai.reset();
    for (const path of ['/api/openai/models', '/api/anthropic/models', '/api/openai/models?apiKey=']) {
      const error = expectEnvelope(await svc.request('GET', path), 400, 'INVALID_REQUEST');
      expect(JSON.stringify(error.details)).toContain('apiKey');
    }
    expect(openai.requests).toHaveLength(0);
  });

  it('a key the provider rejects is 400 INVALID_REQUEST, and the key is echoed nowhere', async () => {
    const wrong = 'sk-wrong-key-zyxwvutsrq';
    for (const provider of ['openai', 'anthropic']) {
      const res = await svc.request('GET', `/api/${provider}/models?apiKey=${wrong}`);
      const error = expectEnvelope(res, 400, 'INVALID_REQUEST');
      expect(error.message).toMatch(/rejected the API key/);
      expect(res.text).not.toContain(wrong);
      expect(res.text).not.toContain('zyxwvu');
    }
    expect(JSON.stringify(await modelAudit(svc))).not.toContain(wrong);
  });

  it("the unified list leaves out a provider that refuses the server's key", async () => {
    const list = await models(svc);
    expect(list.some((entry) => entry.provider === 'openai' || entry.provider === 'anthropic')).toBe(false);
    // Ollama is unreachable too, but the active model is always listed.
    expect(list).toEqual([
      { name: 'llama3.2', status: 'unavailable', provider: 'ollama', capabilities: { streaming: true, tools: true, vision: false } },
    ]);
  });
});

describe('provider failures on the per-provider lists', () => {
  it('429 → 429 RATE_LIMIT_EXCEEDED, 5xx and unreachable → 503 MODEL_UNAVAILABLE', async () => {
    const limited = await statusServer(429);
    const failing = await statusServer(502);
    try {
      await using svc = await startTestService('sqlite', {
        ...baseEnv,
        OPENAI_BASE_URL: limited.url,
        ANTHROPIC_BASE_URL: failing.url,
        OLLAMA_BASE_URL: await closedOrigin(),
      });
      const rateLimited = await svc.request('GET', '/api/openai/models?apiKey=sk-any');
      expectEnvelope(rateLimited, 429, 'RATE_LIMIT_EXCEEDED');
      expect(rateLimited.headers.get('retry-after')).toBe('7');
      expectEnvelope(await svc.request('GET', '/api/anthropic/models?apiKey=sk-any'), 503, 'MODEL_UNAVAILABLE');
      expectEnvelope(await svc.request('GET', '/api/ollama/models'), 503, 'MODEL_UNAVAILABLE');
    } finally {
      limited.server.close();
      failing.server.close();
    }
    await using unreachable = await startTestService('sqlite', { ...baseEnv, OPENAI_BASE_URL: `${await closedOrigin()}/v1` });
    expectEnvelope(await unreachable.request('GET', '/api/openai/models?apiKey=sk-any'), 503, 'MODEL_UNAVAILABLE');
  });
});

describe('unreachable and absent providers in GET /api/models', () => {
  it('an unreachable provider is left out; without a server key a hosted provider shows its default model', async () => {
    await using ollama = await startFakeOllama({ models: ['mistral:7b'] });
    await using svc = await startTestService('sqlite', {
      ...baseEnv,
      AI_MODEL_PROVIDER: 'openai',
      AI_MODEL_NAME: 'gpt-4.1',
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: `${await closedOrigin()}/v1`,
      OPENAI_API_KEY: SERVER_OPENAI_KEY,
      ANTHROPIC_MODEL: 'claude-opus-4-1',
    });
    const list = await models(svc);
    expect(list).toEqual([
      { name: 'mistral:7b', status: 'available', provider: 'ollama', capabilities: { streaming: true, tools: true, vision: false } },
      // The active model's provider is unreachable: still listed, as unavailable.
      {
        name: 'gpt-4.1',
        status: 'unavailable',
        provider: 'openai',
        capabilities: { streaming: true, tools: true, vision: true, contextWindow: 1_047_576 },
      },
      // No server key: listed, usable with the caller's own apiKey, but not `available`.
      {
        name: 'claude-opus-4-1',
        status: 'unavailable',
        reason: 'needs apiKey',
        provider: 'anthropic',
        capabilities: { streaming: true, tools: true, vision: true, contextWindow: 200_000 },
      },
    ]);
  });

  it('an active Ollama model that is not installed is listed as not_downloaded', async () => {
    await using ollama = await startFakeOllama({ models: [] });
    await using svc = await startTestService('sqlite', { ...baseEnv, OLLAMA_BASE_URL: ollama.url, OLLAMA_MODEL: 'llama3.2' });
    expect(find(await models(svc), 'ollama', 'llama3.2')?.status).toBe('not_downloaded');
  });
});

describe('downloads and deletes', () => {
  let ollama: FakeOllama;
  let svc: TestService;
  beforeAll(async () => {
    ollama = await startFakeOllama({ models: ['llama3.2:latest', 'phi3:mini'] });
    svc = await startTestService('sqlite', {
      ...baseEnv,
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: `${await closedOrigin()}/v1`,
      ANTHROPIC_BASE_URL: `${await closedOrigin()}/v1`,
    });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await ollama.close();
  });

  it('pulls in the background: downloading with progress in the lists, then available, one pull per model', async () => {
    // Slow enough that the pull cannot end before the progress is seen; sped up afterwards.
    ollama.pullSettings = { stepDelayMs: 100, steps: 1000, totalBytes: 1_000_000 };
    const first = await svc.request('POST', '/api/model/download', { json: { modelName: 'gemma3:4b' } });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ success: true, status: 'downloading' });

    const seen = await waitFor(async () => {
      const entry = find(await models(svc), 'ollama', 'gemma3:4b');
      return entry?.progress && entry.progress.completed > 0 ? entry : undefined;
    }, 10_000, 'download progress');
    expect(seen).toMatchObject({ status: 'downloading', capabilities: { vision: true } });
    expect(seen.progress?.total).toBe(1_000_000);
    expect(seen.progress?.completed).toBeLessThan(1_000_000);
    expect(find(await models(svc, '/api/ollama/models'), 'ollama', 'gemma3:4b')?.status).toBe('downloading');

    // A second request while it runs (on the alternative path) starts no second pull.
    const second = await svc.request('POST', '/api/models/download', { json: { modelName: 'gemma3:4b', provider: 'ollama' } });
    expect(second.body).toEqual({ success: true, status: 'downloading' });
    expect(ollama.requests.filter((request) => request.path === '/api/pull')).toHaveLength(1);

    ollama.pullSettings = { stepDelayMs: 0, steps: 1000, totalBytes: 1_000_000 };
    const done = await waitFor(async () => {
      const entry = find(await models(svc), 'ollama', 'gemma3:4b');
      return entry?.status === 'available' ? entry : undefined;
    }, 10_000, 'the download to finish');
    expect(done.progress).toBeUndefined();

    const again = await svc.request('POST', '/api/model/download', { json: { modelName: 'gemma3:4b' } });
    expect(again.body).toEqual({ success: true, status: 'available' });
    const actions = (await modelAudit(svc)).filter((entry) => entry.details.modelName === 'gemma3:4b').map((entry) => entry.details.action);
    expect(actions).toEqual(['downloaded', 'download']);
  });

  it('an installed model answers available at once; `llama3.2` is `llama3.2:latest`', async () => {
    ollama.reset();
    const res = await svc.request('POST', '/api/model/download', { json: { modelName: 'llama3.2' } });
    expect(res.body).toEqual({ success: true, status: 'available' });
    expect(ollama.requests.some((request) => request.path === '/api/pull')).toBe(false);
  });

  it('a failing pull leaves the model not downloaded, with the reason shown and audited', async () => {
    ollama.pullSettings = { stepDelayMs: 0, steps: 3, totalBytes: 1000 };
    const res = await svc.request('POST', '/api/model/download', { json: { modelName: 'missing-model:1b' } });
    expect(res.body).toEqual({ success: true, status: 'downloading' });
    const failed = await waitFor(async () => {
      const entry = find(await models(svc), 'ollama', 'missing-model:1b');
      return entry?.status === 'not_downloaded' ? entry : undefined;
    }, 10_000, 'the download to fail');
    expect(failed.error).toContain('file does not exist');
    const entry = (await modelAudit(svc)).find((audit) => audit.details.action === 'download_failed');
    expect(entry?.details).toMatchObject({ modelName: 'missing-model:1b', provider: 'ollama' });
    expect(String(entry?.details.reason)).toContain('file does not exist');
  });

  it('hosted models need no download: 400', async () => {
    for (const json of [
      { modelName: 'gpt-4o', provider: 'openai' },
      { modelName: 'openai/gpt-4o' },
      { modelName: 'anthropic/claude-sonnet-4-5' },
      // Bare names offered by a hosted provider (here its configured default model).
      { modelName: 'gpt-4o-mini' },
      { modelName: 'claude-sonnet-4-5' },
    ]) {
      const error = expectEnvelope(await svc.request('POST', '/api/model/download', { json }), 400, 'INVALID_REQUEST');
      expect(error.message, JSON.stringify(json)).toMatch(/hosted/);
    }
    expectEnvelope(await svc.request('POST', '/api/model/download', { json: { modelName: 'x', provider: 'nope' } }), 400, 'INVALID_REQUEST');
    expectEnvelope(await svc.request('POST', '/api/model/download', { json: {} }), 400, 'INVALID_REQUEST');
  });

  it('a name that is no Ollama model name is refused before Ollama is asked', async () => {
    ollama.reset();
    const error = expectEnvelope(
      await svc.request('POST', '/api/model/download', { json: { modelName: '../../etc/passwd' } }),
      400,
      'INVALID_REQUEST',
    );
    expect(error.message).toMatch(/not a valid Ollama model name/);
    expectEnvelope(await svc.request('DELETE', `/api/models/${encodeURIComponent('../x y')}`), 404, 'NOT_FOUND');
    expect(ollama.requests).toEqual([]);
  });

  it('deletes an Ollama model by its URL-encoded name; unknown → 404; hosted → 400', async () => {
    ollama.installed.add('qwen2.5:0.5b');
    const res = await svc.request('DELETE', `/api/models/${encodeURIComponent('qwen2.5:0.5b')}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.stringContaining('qwen2.5:0.5b') });
    expect(ollama.installed.has('qwen2.5:0.5b')).toBe(false);
    expect(find(await models(svc), 'ollama', 'qwen2.5:0.5b')).toBeUndefined();

    // A literal `:` in the path works as well, and a bare name means its `latest` tag.
    expect((await svc.request('DELETE', '/api/models/phi3:mini')).status).toBe(200);
    expect((await svc.request('DELETE', '/api/models/ollama%2Fllama3.2')).status).toBe(200);
    expect(ollama.installed.has('llama3.2:latest')).toBe(false);

    expectEnvelope(await svc.request('DELETE', '/api/models/phi3:mini'), 404, 'NOT_FOUND');
    expectEnvelope(await svc.request('DELETE', '/api/models/no-such-model%3A1b'), 404, 'NOT_FOUND');
    expectEnvelope(await svc.request('DELETE', `/api/models/${encodeURIComponent('openai/gpt-4o')}`), 400, 'INVALID_REQUEST');
    expectEnvelope(await svc.request('DELETE', '/api/models/gpt-4o-mini'), 400, 'INVALID_REQUEST');

    const deletes = (await modelAudit(svc)).filter((entry) => entry.details.action === 'delete').map((entry) => entry.details.modelName);
    expect(deletes).toEqual(['llama3.2:latest', 'phi3:mini', 'qwen2.5:0.5b']);
  });

  it('model management needs its permissions: a User may list and switch their own, not download, change the default or delete', async () => {
    const user = callerFor(svc.service.deps, userWith('plain-user', ['User']));
    expect(await errorCodeOf(user.models.list({}))).toBeNull();
    expect(await errorCodeOf(user.models.download({ modelName: 'tinyllama' }))).toBe('FORBIDDEN');
    // CONTRACT §12: the switch sets only the caller's own model, so chat:send and the provider's permission suffice.
    expect(await errorCodeOf(user.models.switch({ modelName: 'tinyllama', provider: 'ollama' }))).toBeNull();
    expect(await errorCodeOf(user.models.setDefault({ modelName: 'tinyllama', provider: 'ollama' }))).toBe('FORBIDDEN');
    expect(await errorCodeOf(user.models.delete({ name: 'llava:7b' }))).toBe('FORBIDDEN');
    const dev = callerFor(svc.service.deps, userWith('dev-user', ['Dev']));
    expect(await errorCodeOf(dev.models.delete({ name: 'never-installed' }))).toBe('NOT_FOUND');
  });
});

describe('Ollama unreachable', () => {
  it('download, delete and the Ollama list answer 503 MODEL_UNAVAILABLE', async () => {
    await using svc = await startTestService('sqlite', { ...baseEnv, OLLAMA_BASE_URL: await closedOrigin() });
    expectEnvelope(await svc.request('POST', '/api/model/download', { json: { modelName: 'tinyllama' } }), 503, 'MODEL_UNAVAILABLE');
    expectEnvelope(await svc.request('DELETE', '/api/models/tinyllama'), 503, 'MODEL_UNAVAILABLE');
    expectEnvelope(await svc.request('GET', '/api/ollama/models'), 503, 'MODEL_UNAVAILABLE');
  });
});

describe('API keys in the logs', () => {
  it("neither the caller's nor the server's key reaches the service's log lines", async () => {
    const database = await createTestDatabase('sqlite');
    await using openai = await startFakeOpenAI({ apiKey: CALLER_OPENAI_KEY });
    let service: ChildService | undefined;
    try {
      service = await spawnService({
        DATABASE_URL: database.url,
        LOG_LEVEL: 'debug',
        RATE_LIMIT_ENABLED: 'false',
        ENABLE_SCHEDULING: 'false',
        OPENAI_BASE_URL: openai.url,
        OPENAI_API_KEY: SERVER_OPENAI_KEY,
        ANTHROPIC_BASE_URL: `${await closedOrigin()}/v1`,
        ANTHROPIC_API_KEY: SERVER_ANTHROPIC_KEY,
        OLLAMA_BASE_URL: await closedOrigin(),
      });
      const url = service.url;
      expect((await request(url, 'GET', `/api/openai/models?apiKey=${CALLER_OPENAI_KEY}`)).status).toBe(200);
      expect((await request(url, 'GET', '/api/openai/models?apiKey=sk-rejected-key-555')).status).toBe(400);
      expect((await request(url, 'GET', `/api/anthropic/models?apiKey=${CALLER_ANTHROPIC_KEY}`)).status).toBe(503);
      expect((await request(url, 'GET', '/api/models')).status).toBe(200);
      const { child, exit } = service;
      child.kill('SIGTERM');
      await exit;
      const log = service.lines.join('\n');
      expect(log).toContain('model provider left out of the model list');
      for (const key of [CALLER_OPENAI_KEY, CALLER_ANTHROPIC_KEY, SERVER_OPENAI_KEY, SERVER_ANTHROPIC_KEY, 'sk-rejected-key-555']) {
        expect(log).not.toContain(key);
      }
    } finally {
      service?.child.kill('SIGKILL'); // only if a failed assertion left it running
      await database.drop();
    }
  });
});
