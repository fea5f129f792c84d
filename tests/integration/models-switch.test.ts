import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeOllama, type FakeProvider } from '../fakes/index.js';
import { createTestDatabase, describeOnDatabases } from '../helpers/databases.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// Switching the caller's own active model (CONTRACT §12): provider inference, ambiguity, the `<provider>/<name>` form,
// the audit trail, and persistence across a restart on the same database.

const OPENAI_KEY = 'sk-switch-openai-0123456789';
const ANTHROPIC_KEY = 'sk-ant-switch-0123456789';

describeOnDatabases('model switch', (kind) => {
  let ollama: FakeOllama;
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  let env: Record<string, string>;
  let svc: TestService;
  beforeAll(async () => {
    // `shared:7b` is offered by both Ollama and the OpenAI-compatible server.
    ollama = await startFakeOllama({ models: ['llama3.2:latest', 'shared:7b'] });
    openai = await startFakeOpenAI({ apiKey: OPENAI_KEY, models: ['gpt-4o-mini', 'gpt-4o', 'shared:7b'] });
    anthropic = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
    env = {
      RATE_LIMIT_ENABLED: 'false',
      ENABLE_SCHEDULING: 'false',
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: OPENAI_KEY,
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    };
    svc = await startTestService(kind, env);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await Promise.all([ollama.close(), openai.close(), anthropic.close()]);
  });

  const switchTo = (json: object) => svc.request('POST', '/api/model/switch', { json });
  const current = async () => (await svc.request('GET', '/api/model/current')).body as { model: string; provider: string };

  it('infers the provider of a name only one provider lists', async () => {
    const res = await switchTo({ modelName: 'gpt-4o' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, activeModel: 'gpt-4o', provider: 'openai' });
    expect(await current()).toEqual({
      model: 'gpt-4o',
      provider: 'openai',
      capabilities: { streaming: true, tools: true, vision: true, contextWindow: 128_000 },
    });

    expect((await switchTo({ modelName: 'claude-3-5-haiku-20241022' })).body.provider).toBe('anthropic');
    // A bare Ollama name finds its `latest` tag.
    expect((await switchTo({ modelName: 'llama3.2' })).body).toEqual({ success: true, activeModel: 'llama3.2', provider: 'ollama' });
  });

  it('an ambiguous or unknown name is 400 with the candidates', async () => {
    const ambiguous = expectEnvelope(await switchTo({ modelName: 'shared:7b' }), 400, 'INVALID_REQUEST');
    expect(ambiguous.details.candidates).toEqual(
      expect.arrayContaining([
        { provider: 'ollama', name: 'shared:7b' },
        { provider: 'openai', name: 'shared:7b' },
      ]),
    );
    const unknown = expectEnvelope(await switchTo({ modelName: 'no-such-model' }), 400, 'INVALID_REQUEST');
    expect(unknown.details).toMatchObject({ modelName: 'no-such-model', candidates: [] });
    expect((await current()).model).toBe('llama3.2');
  });

  it('a provider, given or as a prefix, settles it; a conflicting pair is 400', async () => {
    expect((await switchTo({ modelName: 'shared:7b', provider: 'openai' })).body).toEqual({
      success: true,
      activeModel: 'shared:7b',
      provider: 'openai',
    });
    expect((await switchTo({ modelName: 'ollama/shared:7b' })).body).toEqual({ success: true, activeModel: 'shared:7b', provider: 'ollama' });
    // With a provider the name is taken as given, listed or not.
    expect((await switchTo({ modelName: 'anthropic/claude-opus-4-1' })).body.provider).toBe('anthropic');
    expectEnvelope(await switchTo({ modelName: 'openai/gpt-4o', provider: 'anthropic' }), 400, 'INVALID_REQUEST');
    expectEnvelope(await switchTo({ modelName: '  ' }), 400, 'INVALID_REQUEST');
    expectEnvelope(await switchTo({ modelName: 'gpt-4o', provider: 'mistral' }), 400, 'INVALID_REQUEST');
    expect(await current()).toMatchObject({ model: 'claude-opus-4-1', provider: 'anthropic' });
  });

  it('every switch is audited with the model and the previous one, and no key', async () => {
    const entries = (await svc.request('GET', '/api/audit/log?type=model&limit=1000')).body.entries as {
      userId: string;
      details: Record<string, unknown>;
    }[];
    const switches = entries.filter((entry) => entry.details.action === 'switch');
    expect(switches[0]?.details).toEqual({
      action: 'switch',
      modelName: 'claude-opus-4-1',
      provider: 'anthropic',
      previous: { modelName: 'shared:7b', provider: 'ollama' },
    });
    expect(switches.map((entry) => entry.details.modelName)).toEqual([
      'claude-opus-4-1',
      'shared:7b',
      'shared:7b',
      'llama3.2',
      'claude-3-5-haiku-20241022',
      'gpt-4o',
    ]);
    expect(switches.every((entry) => entry.userId === 'local')).toBe(true);
    const text = JSON.stringify(entries);
    expect(text).not.toContain(OPENAI_KEY);
    expect(text).not.toContain(ANTHROPIC_KEY);
  });

  it('the active model outlives a restart on the same database, whatever AI_MODEL_* say', async () => {
    const database = await createTestDatabase(kind);
    try {
      const first = await startTestService(kind, { ...env, AI_MODEL_PROVIDER: 'ollama', AI_MODEL_NAME: 'llama3.2' }, database);
      try {
        expect((await first.request('POST', '/api/model/switch', { json: { modelName: 'gpt-4o-mini' } })).body.provider).toBe('openai');
      } finally {
        await first.stop();
      }
      await using second = await startTestService(kind, { ...env, AI_MODEL_PROVIDER: 'anthropic', AI_MODEL_NAME: 'claude-sonnet-4-5' }, database);
      expect((await second.request('GET', '/api/model/current')).body).toMatchObject({ model: 'gpt-4o-mini', provider: 'openai' });
      const listed = (await second.request('GET', '/api/models')).body.models as { name: string; provider: string }[];
      expect(listed.filter((entry) => entry.name === 'gpt-4o-mini')).toEqual([expect.objectContaining({ provider: 'openai', status: 'available' })]);
    } finally {
      await database.drop();
    }
  });
});
