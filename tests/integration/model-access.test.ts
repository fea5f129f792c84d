import type { TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAssistantClient } from '../../src/client/assistant-client.js';
import type { AppRouter } from '../../src/routers/app-router.js';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeOllama, type FakeProvider } from '../fakes/index.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { expectEnvelope, type TestService } from '../helpers/test-service.js';
import { open, wsUrl, type Frame } from '../helpers/ws-client.js';

// CONTRACT §13's model access: each role's `allow` patterns filter every model list, and a model
// outside them is refused with 403 naming it wherever it is chosen (switch, default, download)
// or chatted with, on every chat path and transport, before a provider hears of it. One service
// per database; each test puts the policy it needs, which also shows a change applies at once.

const OPENAI_KEY = 'sk-model-access-0123456789';
const ANTHROPIC_KEY = 'sk-ant-model-access-0123456789';
const CLAUDE = 'claude-sonnet-4-20250514';

type Person = 'user' | 'dev' | 'lead' | 'admin' | 'dude';

/** User: only local models; Dev: only OpenAI's; Lead: local and Anthropic's; Admin: no entry, so every model. */
const teamPolicy = {
  quotas: [],
  modelAccess: [
    { role: 'User', allow: ['ollama/*'] },
    { role: 'Dev', allow: ['openai/*'] },
    { role: 'Lead', allow: ['ollama/*', 'anthropic/*'] },
  ],
};

/** What a refusal said, the same on every transport: its status, code and the model it named. */
interface Refusal {
  path: string;
  status: number;
  code: string;
  /** `details.model`; OpenAI's error object has no details, so there the message must name it. */
  model: string | null;
  message: string;
}

const envelopeRefusal = (path: string, reply: { status: number; body: any }): Refusal => ({
  path,
  status: reply.status,
  code: reply.body?.error?.code,
  model: reply.body?.error?.details?.model ?? null,
  message: reply.body?.error?.message ?? '',
});

describeOnDatabases('model access per role', (kind) => {
  let idp: TestIdentityProvider;
  let ollama: FakeOllama;
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  let svc: TestService;
  const tokens = new Map<Person, string>();
  const token = (person: Person) => tokens.get(person) ?? '';
  const as = (person: Person, method: string, path: string, json?: unknown) => requestAs(svc, token(person), method, path, json === undefined ? {} : { json });
  const putPolicy = async (policy: unknown) => {
    const stored = await as('dude', 'PUT', '/api/policies', policy);
    expect(stored.status, stored.text).toBe(200);
  };
  const providerCalls = () => ollama.chatRequests().length + openai.chatRequests().length + anthropic.chatRequests().length;
  const names = (models: { provider: string; name: string }[]) => models.map((model) => `${model.provider}/${model.name}`).sort();

  beforeAll(async () => {
    idp = await startIdentityProvider();
    ollama = await startFakeOllama({ models: ['llama3.2:latest', 'qwen3:8b'] });
    // qwen3:8b at both Ollama and OpenAI: a bare name two providers list.
    openai = await startFakeOpenAI({ apiKey: OPENAI_KEY, models: ['gpt-4o-mini', 'gpt-4o', 'qwen3:8b'] });
    anthropic = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY, models: [CLAUDE] });
    svc = await startAuthService(kind, idp, {
      ENABLE_SCHEDULING: 'false',
      AI_MODEL_PROVIDER: 'ollama',
      AI_MODEL_NAME: 'llama3.2',
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: OPENAI_KEY,
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_MODEL: CLAUDE,
    });
    const people: [Person, string[]][] = [
      ['user', ['User']],
      ['dev', ['Dev']],
      ['lead', ['Lead']],
      ['admin', ['Admin']],
      ['dude', ['TheDude']],
    ];
    for (const [person, roles] of people) {
      idp.define(person, { sub: `access-${person}`, roles });
      tokens.set(person, await idp.tokenFor(person));
    }
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await Promise.all([ollama.close(), openai.close(), anthropic.close(), idp[Symbol.asyncDispose]()]);
  });

  /** Every list a person can read, as `provider/name`. */
  async function listsOf(person: Person) {
    const read = async (path: string) => {
      const reply = await as(person, 'GET', path);
      expect(reply.status, `${path}: ${reply.text}`).toBe(200);
      return reply.body;
    };
    const [api, v1, ollamaList, openaiList, anthropicList] = await Promise.all([
      read('/api/models'),
      read('/v1/models'),
      read('/api/ollama/models'),
      read(`/api/openai/models?apiKey=${OPENAI_KEY}`),
      read(`/api/anthropic/models?apiKey=${ANTHROPIC_KEY}`),
    ]);
    return {
      api: names(api.models),
      v1: (v1.data as { id: string }[]).map((model) => model.id).sort(),
      perProvider: [...names(ollamaList.models), ...names(openaiList.models), ...names(anthropicList.models)].sort(),
    };
  }

  /**
   * One chat with `provider/model` (or, with `model` undefined, whatever the person's active model
   * is) on every chat path and transport; each answer's refusal.
   */
  async function chatEverywhere(person: Person, provider: 'openai' | 'ollama', model: string | undefined): Promise<Refusal[]> {
    const named = model === undefined ? {} : { model: `${provider}/${model}` };
    const body = { message: 'may I?', mode: 'chat', ...named };
    const hostedKey = provider === 'ollama' ? {} : { apiKey: OPENAI_KEY };
    const rest = ['/api/message', '/api/message/stream', '/api/message/stream/markdown', '/api/markdown/stream'].map(async (path) =>
      envelopeRefusal(path, await as(person, 'POST', path, body)),
    );
    const unified = ['/api/unified/message', '/api/unified/stream'].map(async (path) =>
      envelopeRefusal(path, await as(person, 'POST', path, { ...body, provider })),
    );
    const perProvider = [`/api/${provider}/message`, `/api/${provider}/stream`].map(async (path) =>
      envelopeRefusal(path, await as(person, 'POST', path, { ...body, ...hostedKey })),
    );
    // /v1 needs a model: a bare name is the active model's provider's.
    const v1Model = model === undefined ? 'llama3.2' : `${provider}/${model}`;
    const v1 = [false, true].map(async (stream) => {
      const reply = await as(person, 'POST', '/v1/chat/completions', { model: v1Model, stream, messages: [{ role: 'user', content: 'may I?' }] });
      return { path: `/v1/chat/completions stream=${stream}`, status: reply.status, code: reply.body?.error?.code, model: null, message: reply.body?.error?.message ?? '' };
    });
    const sockets = ['/ws', '/ws/markdown-stream'].map(async (path) => {
      const socket = await open(wsUrl(svc.url, `${path}?access_token=${token(person)}`));
      try {
        socket.send({ type: 'message', id: 'ask', data: body });
        const [frame] = (await socket.until((received: Frame) => received.type === 'error' || received.data?.event?.type === 'done')).slice(-1);
        const error = frame?.type === 'error' ? frame.data : {};
        return { path, status: frame?.type === 'error' ? 403 : 200, code: error.code, model: error.details?.model ?? null, message: error.message ?? '' };
      } finally {
        socket.close();
      }
    });
    const typed = createAssistantClient({ baseUrl: svc.url, token: token(person) });
    const trpcCalls: [string, () => Promise<unknown>][] = [
      ['/trpc chat.send', () => typed.chat.send.mutate(body as never)],
      ['/trpc chat.stream', () => typed.chat.stream.mutate(body as never)],
      ['/trpc openaiCompatible.chatCompletion', () => typed.openaiCompatible.chatCompletion.mutate({ model: v1Model, messages: [{ role: 'user', content: 'may I?' }] })],
    ];
    const trpc = trpcCalls.map(async ([path, call]) => {
      const failure = (await call().then(
        () => null,
        (error: unknown) => error,
      )) as TRPCClientError<AppRouter> | null;
      return { path, status: failure?.data?.httpStatus ?? 200, code: failure?.data?.appCode ?? '', model: (failure?.data?.details.model as string | undefined) ?? null, message: failure?.message ?? '' };
    });
    return Promise.all([...rest, ...unified, ...perProvider, ...v1, ...sockets, ...trpc]);
  }

  function expectRefusedNaming(refusals: Refusal[], model: string): void {
    expect(refusals).toHaveLength(15);
    for (const refusal of refusals) {
      const openAIShape = refusal.path.startsWith('/v1');
      expect({ path: refusal.path, status: refusal.status, code: refusal.code, model: refusal.model }).toEqual({
        path: refusal.path,
        status: 403,
        code: openAIShape ? 'forbidden' : 'FORBIDDEN',
        model: openAIShape ? null : model,
      });
      expect(refusal.message, refusal.path).toContain(model);
    }
  }

  it('each role lists only the models it may use: GET /api/models, /v1/models and the per-provider lists', async () => {
    await putPolicy(teamPolicy);
    const ollamaModels = ['ollama/llama3.2:latest', 'ollama/qwen3:8b'];
    const openaiModels = ['openai/gpt-4o', 'openai/gpt-4o-mini', 'openai/qwen3:8b'];
    expect(await listsOf('user')).toEqual({ api: ollamaModels, v1: ollamaModels, perProvider: ollamaModels });
    expect(await listsOf('dev')).toEqual({ api: openaiModels, v1: openaiModels, perProvider: openaiModels });
    const leadModels = [`anthropic/${CLAUDE}`, ...ollamaModels];
    expect(await listsOf('lead')).toEqual({ api: leadModels, v1: leadModels, perProvider: leadModels });
    const everything = [`anthropic/${CLAUDE}`, ...ollamaModels, ...openaiModels];
    expect(await listsOf('admin')).toEqual({ api: everything, v1: everything, perProvider: everything });
    // The Dev's active model is the default, which the Dev may not use: not listed, still current.
    const current = await as('dev', 'GET', '/api/model/current');
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({ model: 'llama3.2', provider: 'ollama' });
  });

  it('a forbidden model is refused on every chat path with 403 naming it, before any provider call or stored message', async () => {
    await putPolicy(teamPolicy);
    const callsBefore = providerCalls();
    const userConversations = (await as('user', 'GET', '/api/conversations')).body;
    const devConversations = (await as('dev', 'GET', '/api/conversations')).body;

    // Named by the request: the User asks for OpenAI's model.
    expectRefusedNaming(await chatEverywhere('user', 'openai', 'gpt-4o'), 'openai/gpt-4o');
    // Named by nobody: the Dev's active model is the service default, a local model.
    expectRefusedNaming(await chatEverywhere('dev', 'ollama', undefined), 'ollama/llama3.2');
    // Named by the path: /api/anthropic/* without a model is Anthropic's default.
    const anthropicDefault = envelopeRefusal('/api/anthropic/message', await as('user', 'POST', '/api/anthropic/message', { message: 'may I?', apiKey: ANTHROPIC_KEY }));
    expect(anthropicDefault).toMatchObject({ status: 403, code: 'FORBIDDEN', model: `anthropic/${CLAUDE}` });

    expect(providerCalls()).toBe(callsBefore);
    expect((await as('user', 'GET', '/api/conversations')).body).toEqual(userConversations);
    expect((await as('dev', 'GET', '/api/conversations')).body).toEqual(devConversations);
    // Each refusal is audited as an access denial naming the model.
    const denials = ((await as('admin', 'GET', '/api/audit/log?type=access&limit=1000')).body.entries as { userId: string; details: { model?: string } }[]).filter(
      (entry) => entry.details.model !== undefined,
    );
    expect(denials.filter((entry) => entry.userId === 'access-user' && entry.details.model === 'openai/gpt-4o')).toHaveLength(15);
    expect(denials.filter((entry) => entry.userId === 'access-dev' && entry.details.model === 'ollama/llama3.2')).toHaveLength(15);

    // The models they may use still answer, on the same paths.
    const allowed = await as('user', 'POST', '/api/message', { message: 'local, please', mode: 'chat', model: 'ollama/qwen3:8b' });
    expect(allowed.status, allowed.text).toBe(200);
    const completion = await as('dev', 'POST', '/v1/chat/completions', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hosted, please' }] });
    expect(completion.status, completion.text).toBe(200);
    expect(providerCalls()).toBe(callsBefore + 2);
  });

  it('switching to, making a default of or downloading a forbidden model → 403 naming it, nothing stored or pulled', async () => {
    await putPolicy(teamPolicy);
    for (const modelName of ['openai/gpt-4o', 'gpt-4o']) {
      const refused = expectEnvelope(await as('user', 'POST', '/api/model/switch', { modelName }), 403, 'FORBIDDEN');
      expect(refused.details).toEqual({ model: 'openai/gpt-4o' });
    }
    expect((await as('user', 'GET', '/api/model/current')).body).toMatchObject({ model: 'llama3.2', provider: 'ollama' });
    // A bare name two providers list is the one provider the caller may use; with both allowed it stays ambiguous.
    expect((await as('user', 'POST', '/api/model/switch', { modelName: 'qwen3:8b' })).body).toEqual({ success: true, activeModel: 'qwen3:8b', provider: 'ollama' });
    expect((await as('dev', 'POST', '/api/model/switch', { modelName: 'qwen3:8b' })).body).toEqual({ success: true, activeModel: 'qwen3:8b', provider: 'openai' });
    expectEnvelope(await as('admin', 'POST', '/api/model/switch', { modelName: 'qwen3:8b' }), 400, 'INVALID_REQUEST');

    // A Lead may only make a default of a model their own roles may use.
    const notDefault = expectEnvelope(await as('lead', 'POST', '/api/model/default', { modelName: 'openai/gpt-4o-mini' }), 403, 'FORBIDDEN');
    expect(notDefault.details).toEqual({ model: 'openai/gpt-4o-mini' });
    expect((await as('admin', 'GET', '/api/model/current')).body).toMatchObject({ model: 'llama3.2', provider: 'ollama' });

    // The Dev may download, but no local model; the Lead may.
    const pullsBefore = ollama.requests.filter((request) => request.path.startsWith('/api/pull')).length;
    for (const modelName of ['ollama/phi4', 'phi4', 'qwen3:8b']) {
      const refused = expectEnvelope(await as('dev', 'POST', '/api/model/download', { modelName }), 403, 'FORBIDDEN');
      expect(refused.details).toEqual({ model: `ollama/${modelName.replace('ollama/', '')}` });
    }
    expect(ollama.requests.filter((request) => request.path.startsWith('/api/pull'))).toHaveLength(pullsBefore);
    expect((await as('lead', 'POST', '/api/model/download', { modelName: 'qwen3:8b' })).body).toEqual({ success: true, status: 'available' });
  });

  it('a policy change applies at once; a model chosen earlier and no longer allowed is refused by name, and still current', async () => {
    await putPolicy({ quotas: [], modelAccess: [{ role: 'User', allow: ['ollama/*', 'openai/gpt-4o-mini'] }] });
    expect((await listsOf('user')).api).toEqual(['ollama/llama3.2:latest', 'ollama/qwen3:8b', 'openai/gpt-4o-mini']);
    expect((await as('user', 'POST', '/api/model/switch', { modelName: 'openai/gpt-4o-mini' })).status).toBe(200);
    const before = providerCalls();
    expect((await as('user', 'POST', '/api/message', { message: 'now hosted', mode: 'chat' })).body.model).toBe('gpt-4o-mini');
    expect(providerCalls()).toBe(before + 1);

    await putPolicy(teamPolicy);
    expect((await listsOf('user')).api).toEqual(['ollama/llama3.2:latest', 'ollama/qwen3:8b']);
    const refused = expectEnvelope(await as('user', 'POST', '/api/message', { message: 'still hosted?', mode: 'chat' }), 403, 'FORBIDDEN');
    expect(refused.details).toEqual({ model: 'openai/gpt-4o-mini' });
    expect(providerCalls()).toBe(before + 1);
    expect((await as('user', 'GET', '/api/model/current')).body).toMatchObject({ model: 'gpt-4o-mini', provider: 'openai' });

    // No entry for any of the user's roles: every model again.
    await putPolicy({ quotas: [], modelAccess: [] });
    expect((await listsOf('user')).api).toEqual([`anthropic/${CLAUDE}`, 'ollama/llama3.2:latest', 'ollama/qwen3:8b', 'openai/gpt-4o', 'openai/gpt-4o-mini', 'openai/qwen3:8b']);
    expect((await as('user', 'POST', '/api/message', { message: 'hosted again', mode: 'chat' })).status).toBe(200);
    expect(providerCalls()).toBe(before + 2);
  });
});
