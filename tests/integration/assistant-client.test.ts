import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { TRPCClientError } from '@trpc/client';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAssistantClient, type AppRouter } from '../../src/index.js';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { startAuthService } from '../helpers/auth-service.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { followStream } from '../helpers/follow-stream.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// The package's client helper (src/client/assistant-client.ts) and the example built on it.

const run = promisify(execFile);

describe('createAssistantClient', () => {
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

  it('batches queries into one request, and streams an answer over a subscription', async () => {
    let posts = 0;
    let gets = 0;
    const client = createAssistantClient({
      baseUrl: `${service.url}/`,
      EventSource,
      fetch: (input, init) => {
        if ((init?.method ?? 'GET') === 'GET') gets += 1;
        else posts += 1;
        return fetch(input, init);
      },
    });
    const [status, context, page] = await Promise.all([
      client.system.status.query({}),
      client.context.get.query({}),
      client.conversations.list.query({ limit: 5, offset: 0 }),
    ]);
    expect(status.status).toBe('ok');
    expect(context.context.model.provider).toBe('ollama');
    expect(page.conversations).toEqual([]);
    expect(gets).toBe(1);

    fake.enqueue({ kind: 'text', chunks: ['Typed', ' answer'] });
    const { streamId } = await client.chat.stream.mutate({ message: 'Say it', mode: 'chat' });
    expect(posts).toBe(1);
    const { events } = await followStream(client, streamId);
    expect(events.filter((event) => event.type === 'text').map((event) => event.content).join('')).toBe('Typed answer');
    expect(events.at(-1)).toMatchObject({ type: 'done', metadata: { finishReason: 'stop' } });
  });

  it('gives errors their contract code', async () => {
    const client = createAssistantClient({ baseUrl: service.url, EventSource });
    const error = await client.conversations.get.query({ id: 'missing' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<AppRouter>).data).toMatchObject({ appCode: 'NOT_FOUND', httpStatus: 404 });
  });

  it('the example script streams an answer and lists conversations', async () => {
    fake.enqueue({ kind: 'text', chunks: ['Release', ' plan', ' ready'] });
    const { stdout } = await run('npx', ['tsx', 'examples/typed-client.ts', 'Plan the release'], {
      env: { ...process.env, ASSISTANT_URL: service.url },
      timeout: 60_000,
    });
    expect(stdout).toMatch(/^service ok, version /);
    expect(stdout).toContain('Release plan ready');
    expect(stdout).toMatch(/\(stop, conversation [0-9a-f-]{36}\)/);
    // A message without conversation_id goes on in the caller's current conversation (CONTRACT §7).
    expect(stdout).toContain('- Say it: 4 messages');
  });
});

describe('createAssistantClient with authentication', () => {
  let idp: TestIdentityProvider;
  let fake: FakeOllama;
  let service: TestService;
  beforeAll(async () => {
    idp = await startIdentityProvider();
    fake = await startFakeOllama();
    idp.define('ada', { sub: 'ada', roles: ['User'] });
    service = await startAuthService('sqlite', idp, { OLLAMA_BASE_URL: fake.url });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await fake.close();
    await idp[Symbol.asyncDispose]();
  });

  it('asks the token source before each request, for calls and subscriptions alike', async () => {
    const session: { token?: string } = {};
    let asked = 0;
    const client = createAssistantClient({
      baseUrl: service.url,
      EventSource,
      token: () => {
        asked += 1;
        return session.token;
      },
    });
    const refused = await client.system.me.query({}).catch((caught: unknown) => caught);
    expect((refused as TRPCClientError<AppRouter>).data?.appCode).toBe('UNAUTHORIZED');

    session.token = await idp.tokenFor('ada');
    const me = await client.system.me.query({});
    expect(me.userId).toBe('ada');

    fake.enqueue({ kind: 'text', chunks: ['Signed in'] });
    const { streamId } = await client.chat.stream.mutate({ message: 'Hi', mode: 'chat' });
    const { events } = await followStream(client, streamId);
    expect(events.at(-1)).toMatchObject({ type: 'done', metadata: { finishReason: 'stop' } });
    expect(asked).toBeGreaterThanOrEqual(4);
  });
});
