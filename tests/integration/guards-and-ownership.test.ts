import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../src/core/auth/permissions.js';
import { appErrorFrom } from '../../src/procedures/error-mapping.js';
import type { ProcedureMeta } from '../../src/procedures/meta.js';
import { appRouter } from '../../src/routers/app-router.js';
import { callerFor, errorCodeOf, userWith } from '../helpers/callers.js';
import { expectedGuards } from '../helpers/contract-guards.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { closedOrigin } from '../helpers/closed-origin.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta; type: string } }>;

describe('guard declarations', () => {
  it('every procedure of the router declares the guard, rate group and feature flag the contract gives it', () => {
    const declared = Object.fromEntries(
      Object.entries(procedures).map(([path, procedure]) => [
        path,
        {
          guard: procedure._def.meta?.guard,
          rateGroup: procedure._def.meta?.rateGroup,
          ...(procedure._def.meta?.feature ? { feature: procedure._def.meta.feature } : {}),
        },
      ]),
    );
    expect(declared).toEqual(expectedGuards);
  });

  it('every query and mutation is exposed as a REST operation; subscriptions live at /trpc only', () => {
    // The specification gives terminal input no REST path: it is the terminal socket's `input`
    // frame, and typed clients call the mutation at /trpc.
    const socketOnly = new Set(['terminals.input']);
    // The OpenAI-compatible procedures are served at /v1 by their own bridge, in OpenAI's format.
    const openAIBridge = new Set(['openaiCompatible.chatCompletion', 'openaiCompatible.chatCompletionStream', 'openaiCompatible.models']);
    // Prometheus text at GET /metrics, a path of its own outside /api (CONTRACT §5).
    const ownPaths = new Set(['system.metrics']);
    for (const [path, procedure] of Object.entries(procedures)) {
      if (procedure._def.type === 'subscription' || socketOnly.has(path) || openAIBridge.has(path) || ownPaths.has(path)) {
        expect(procedure._def.meta?.openapi, path).toBeUndefined();
      } else expect(procedure._def.meta?.openapi?.path, path).toMatch(/^\/api\//);
    }
  });
});


describeOnDatabases('callers', (kind) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService(kind, { OLLAMA_BASE_URL: await closedOrigin() });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
  });

  const as = (user: User | null) => callerFor(svc.service.deps, user, '203.0.113.7');


  it("another user's conversation is 404 on every path, and lists stay apart", async () => {
    const alice = as(userWith('alice', ['User']));
    const bob = as(userWith('bob', ['User']));
    const { conversationId } = await alice.conversations.save({
      title: 'Alice only',
      conversationData: { messages: [{ role: 'user', content: 'secret plans' }] },
    });
    expect(await errorCodeOf(bob.conversations.get({ id: conversationId }))).toBe('NOT_FOUND');
    expect(await errorCodeOf(bob.conversations.load({ conversationId }))).toBe('NOT_FOUND');
    expect(await errorCodeOf(bob.conversations.setCurrent({ id: conversationId }))).toBe('NOT_FOUND');
    expect(await errorCodeOf(bob.conversations.rename({ id: conversationId, title: 'mine' }))).toBe('NOT_FOUND');
    expect(await errorCodeOf(bob.conversations.delete({ id: conversationId }))).toBe('NOT_FOUND');
    expect((await bob.conversations.list({ limit: 50, offset: 0, q: 'secret' })).total).toBe(0);
    expect((await alice.conversations.get({ id: conversationId })).conversation.title).toBe('Alice only');

    const aliceCurrent = (await alice.context.get({})).conversationId;
    const bobCurrent = (await bob.context.get({})).conversationId;
    expect(aliceCurrent).not.toBe(bobCurrent);
    await bob.context.clear({});
    expect((await alice.context.get({})).conversationId).toBe(aliceCurrent);
  });

  it('a missing permission is 403 FORBIDDEN, audited with the permission and without running the operation', async () => {
    const user = as(userWith('plain-user', ['User']));
    expect(await errorCodeOf(user.promptOrders.save({ order: { name: 'x', sections: [{ type: 'conversation_history' }, { type: 'user_message' }] } }))).toBe(
      'FORBIDDEN',
    );
    expect((await user.promptOrders.list({})).orders).toEqual([]);
    const entry = await svc.service.deps.store.db.auditEntry.findFirst({ where: { userId: 'plain-user', type: 'access' } });
    expect(entry).toMatchObject({ ip: '203.0.113.7', details: { action: 'denied', missing: 'prompt_orders:save' }, risk: null });
  });

  it('the guard runs before validation: a forbidden caller with a bad body still gets 403', async () => {
    const user = as(userWith('plain-user-2', ['User']));
    expect(await errorCodeOf(user.promptOrders.save({ order: 'not even an object' } as never))).toBe('FORBIDDEN');
  });

  it('no caller at all is 401 UNAUTHORIZED with a Bearer challenge; public procedures still answer', async () => {
    const anonymous = as(null);
    const error = appErrorFrom(await anonymous.conversations.list({ limit: 1, offset: 0 }).catch((e: unknown) => e));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.headers['WWW-Authenticate']).toBe('Bearer');
    // Answered, not refused: `degraded` only because no Ollama runs here (CONTRACT §3).
    expect((await anonymous.system.status({})).status).toBe('degraded');
  });
});
