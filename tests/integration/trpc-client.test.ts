import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../../src/index.js';
import { closedOrigin } from '../helpers/closed-origin.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// The same procedures at /trpc, driven by the official typed client with superjson.

describe('typed RPC at /trpc', () => {
  let svc: TestService;
  let client: ReturnType<typeof createTRPCClient<AppRouter>>;
  beforeAll(async () => {
    svc = await startTestService('sqlite', { OLLAMA_BASE_URL: await closedOrigin() });
    client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${svc.url}/trpc`, transformer: superjson })] });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
  });

  it('reads status and context with full types', async () => {
    const status = await client.system.status.query({});
    // No Ollama here, and it is the default model's provider (CONTRACT §3).
    expect(status.status).toBe('degraded');
    expect(status.providers.ollama.reachable).toBe(false);
    const context = await client.context.get.query({});
    expect(context.context.model).toEqual({ name: 'llama3.2', provider: 'ollama' });
  });

  it('imports, lists, renames and loads a conversation; REST sees the same data', async () => {
    const { conversationId } = await client.conversations.save.mutate({
      title: 'Typed',
      conversationData: { messages: [{ role: 'user', content: 'from the typed client' }] },
    });
    await client.conversations.rename.mutate({ id: conversationId, title: 'Typed, renamed' });
    const page = await client.conversations.list.query({ limit: 10, offset: 0, q: 'typed client' });
    expect(page.conversations.map((c) => c.title)).toEqual(['Typed, renamed']);
    const rest = await svc.request('GET', `/api/conversation/${conversationId}`);
    expect(rest.body.messages[0].content).toBe('from the typed client');
  });

  it('reports the contract code and HTTP status of errors', async () => {
    const notFound = await client.conversations.get.query({ id: 'missing' }).catch((error: unknown) => error);
    expect(notFound).toBeInstanceOf(TRPCClientError);
    const data = (notFound as TRPCClientError<AppRouter>).data;
    expect(data?.appCode).toBe('NOT_FOUND');
    expect(data?.httpStatus).toBe(404);
    expect(data).not.toHaveProperty('stack');

    const invalid = await client.promptOrders.save
      .mutate({ order: { name: 'x', sections: [{ type: 'user_message' }] } })
      .then(
        () => {
          throw new Error('an invalid order was accepted');
        },
        (error: unknown) => error as TRPCClientError<AppRouter>,
      );
    expect(invalid.data?.appCode).toBe('INVALID_REQUEST');
    expect(invalid.data?.httpStatus).toBe(400);
    expect(JSON.stringify(invalid.data?.details)).toContain('conversation_history must appear exactly once');
  });
});
