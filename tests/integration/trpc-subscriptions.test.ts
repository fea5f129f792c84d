import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { EventSource } from 'eventsource';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../../src/index.js';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { startAuthService } from '../helpers/auth-service.js';
import { startIdentityProvider } from '../helpers/identity-provider.js';
import { followStream } from '../helpers/follow-stream.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// Chat streams as tRPC subscriptions at /trpc (CONTRACT §10: tRPC's own SSE framing), driven by
// the official client: events `tracked()` by sequence number, so a subscription resumes after
// the last event it had.

function clientFor(url: string, connectionParams?: Record<string, string>) {
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({ url: `${url}/trpc`, transformer: superjson, EventSource, ...(connectionParams ? { connectionParams } : {}) }),
        false: httpLink({ url: `${url}/trpc`, transformer: superjson, headers: connectionParams?.token ? { authorization: `Bearer ${connectionParams.token}` } : {} }),
      }),
    ],
  });
}

describe('chat streams as tRPC subscriptions', () => {
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

  it('follows a stream started with chat.stream, each event tracked by its sequence number, and resumes after one', async () => {
    fake.enqueue({ kind: 'text', chunks: ['One', ' two', ' three'] });
    const client = clientFor(service.url);
    const { streamId } = await client.chat.stream.mutate({ message: 'Count', mode: 'chat' });
    const whole = await followStream(client, streamId);
    expect(whole.events.map((event) => event.type)).toEqual(['text', 'text', 'text', 'context_update', 'done']);
    expect(whole.ids).toEqual(['1', '2', '3', '4', '5']);

    const resumed = await followStream(client, streamId, '2');
    expect(resumed.ids).toEqual(['3', '4', '5']);
    expect(resumed.events[0]).toEqual({ type: 'text', content: ' three' });
  });

  it('another stream id is refused with NOT_FOUND', async () => {
    const client = clientFor(service.url);
    await expect(followStream(client, '3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e90')).rejects.toMatchObject({ data: { appCode: 'NOT_FOUND' } });
  });
});

describe("the user's event feed as a tRPC subscription", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('sqlite');
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
  });

  /** Collects `count` feed events, each with its tracked id. */
  function feed(client: ReturnType<typeof clientFor>, count: number, lastEventId?: string) {
    const received: { id: string; data: Record<string, unknown> }[] = [];
    let started!: () => void;
    const ready = new Promise<void>((resolve) => (started = resolve));
    const done = new Promise<typeof received>((resolve, reject) => {
      const subscription = client.events.follow.subscribe(lastEventId ? { lastEventId } : {}, {
        onStarted: () => {
          started();
        },
        onData: ({ id, data }) => {
          received.push({ id, data });
          if (received.length === count) {
            subscription.unsubscribe();
            resolve(received);
          }
        },
        onError: (error) => {
          subscription.unsubscribe();
          reject(error);
        },
      });
    });
    return { ready, done };
  }

  it('delivers what /ws pushes, tracked by id, and a resumed subscription catches up on what it missed', async () => {
    const client = clientFor(service.url);
    const live = feed(client, 2);
    await live.ready;
    const saved = await client.conversations.save.mutate({ conversationData: { messages: [{ role: 'user', content: 'feed me' }] } });
    await client.conversations.rename.mutate({ id: saved.conversationId, title: 'Fed' });
    const [first, second] = await live.done;
    expect(first?.data).toMatchObject({ kind: 'conversation', action: 'saved', conversationId: saved.conversationId });
    expect(second?.data).toMatchObject({ kind: 'conversation', action: 'renamed', title: 'Fed' });
    expect((first?.id ?? '') < (second?.id ?? '')).toBe(true);

    // Two more while nobody listens; a client that had the first resumes with the three after it.
    await client.conversations.rename.mutate({ id: saved.conversationId, title: 'Fed again' });
    await client.conversations.delete.mutate({ id: saved.conversationId });
    const resumed = await feed(client, 3, first?.id).done;
    expect(resumed.map((event) => event.data.action)).toEqual(['renamed', 'renamed', 'deleted']);
    expect(resumed[0]?.id).toBe(second?.id);
  });
});

describe('subscriptions with authentication', () => {
  it('take the token from the connection parameters; without one they are refused', async () => {
    await using idp = await startIdentityProvider();
    await using fake = await startFakeOllama();
    await using service = await startAuthService('sqlite', idp, { OLLAMA_BASE_URL: fake.url });
    const token = await idp.sign({ sub: 'subscriber', realm_access: { roles: ['User'] } });
    fake.enqueue({ kind: 'text', chunks: ['hi'] });
    const client = clientFor(service.url, { token });
    const { streamId } = await client.chat.stream.mutate({ message: 'Hello', mode: 'chat' });
    expect((await followStream(client, streamId)).events.at(-1)?.type).toBe('done');
    await expect(followStream(clientFor(service.url), streamId)).rejects.toMatchObject({ data: { appCode: 'UNAUTHORIZED' } });
  });
});
