import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../src/core/auth/permissions.js';
import { appErrorFrom } from '../../src/procedures/error-mapping.js';
import type { Feature, Guard, ProcedureMeta } from '../../src/procedures/meta.js';
import { appRouter } from '../../src/routers/app-router.js';
import { callerFor, errorCodeOf, userWith } from '../helpers/callers.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §5's endpoint table for the areas built so far: the guard each procedure must declare.
const expectedGuards: Record<string, { guard: Guard; rateGroup: string; feature?: Feature }> = {
  'system.status': { guard: { kind: 'public' }, rateGroup: 'none' },
  'system.me': { guard: { kind: 'authenticated' }, rateGroup: 'general' },
  'context.get': { guard: { kind: 'permission', permissions: ['conversations:load'] }, rateGroup: 'general' },
  'context.clear': { guard: { kind: 'permission', permissions: ['chat:clear'] }, rateGroup: 'general' },
  'conversations.list': { guard: { kind: 'permission', permissions: ['conversations:list'] }, rateGroup: 'general' },
  'conversations.current': { guard: { kind: 'permission', permissions: ['conversations:load'] }, rateGroup: 'general' },
  'conversations.get': { guard: { kind: 'permission', permissions: ['conversations:load'] }, rateGroup: 'general' },
  'conversations.load': { guard: { kind: 'permission', permissions: ['conversations:load'] }, rateGroup: 'general' },
  'conversations.setCurrent': { guard: { kind: 'permission', permissions: ['conversations:load'] }, rateGroup: 'general' },
  'conversations.save': { guard: { kind: 'permission', permissions: ['conversations:save'] }, rateGroup: 'general' },
  'conversations.rename': { guard: { kind: 'permission', permissions: ['conversations:save'] }, rateGroup: 'general' },
  'conversations.delete': { guard: { kind: 'permission', permissions: ['conversations:delete'] }, rateGroup: 'general' },
  'chat.send': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'chat.stream': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'chat.streamMarkdown': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'chat.unifiedSend': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'chat.unifiedStream': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'chat.openaiSend': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'chat.openaiStream': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'chat.anthropicSend': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'chat.anthropicStream': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'chat.ollamaSend': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'chat.ollamaStream': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'streams.get': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'streams.abort': { guard: { kind: 'permission', permissions: ['chat:send'] }, rateGroup: 'chat' },
  'models.list': { guard: { kind: 'permission', permissions: ['models:list'] }, rateGroup: 'general' },
  'models.current': { guard: { kind: 'permission', permissions: ['models:list'] }, rateGroup: 'general' },
  'models.listOpenai': { guard: { kind: 'permission', permissions: ['models:list'] }, rateGroup: 'general' },
  'models.listAnthropic': { guard: { kind: 'permission', permissions: ['models:list'] }, rateGroup: 'general' },
  'models.listOllama': { guard: { kind: 'permission', permissions: ['models:list'] }, rateGroup: 'general' },
  'models.download': { guard: { kind: 'permission', permissions: ['models:download'] }, rateGroup: 'models' },
  'models.switch': { guard: { kind: 'permission', permissions: ['models:download'] }, rateGroup: 'models' },
  'models.delete': { guard: { kind: 'permission', permissions: ['models:delete'] }, rateGroup: 'models' },
  'promptOrders.list': { guard: { kind: 'permission', permissions: ['prompt_orders:list'] }, rateGroup: 'general' },
  'promptOrders.save': { guard: { kind: 'permission', permissions: ['prompt_orders:save'] }, rateGroup: 'general' },
  'promptOrders.delete': { guard: { kind: 'permission', permissions: ['prompt_orders:save'] }, rateGroup: 'general' },
  'workspaces.list': { guard: { kind: 'permission', permissions: ['workspaces:list'] }, rateGroup: 'workspace' },
  'workspaces.branches': { guard: { kind: 'permission', permissions: ['workspaces:list'] }, rateGroup: 'workspace' },
  'workspaces.switch': { guard: { kind: 'permission', permissions: ['workspaces:switch'] }, rateGroup: 'workspace' },
  'workspaces.refresh': { guard: { kind: 'permission', permissions: ['workspaces:switch'] }, rateGroup: 'workspace' },
  'workspaces.refreshAll': { guard: { kind: 'permission', permissions: ['workspaces:switch'] }, rateGroup: 'workspace' },
  'workspaces.switchBranch': { guard: { kind: 'permission', permissions: ['workspaces:switch'] }, rateGroup: 'workspace' },
  'workspaces.add': { guard: { kind: 'permission', permissions: ['workspaces:switch'], anyRole: ['Dev', 'Lead', 'TheDude'] }, rateGroup: 'workspace' },
  'workspaces.delete': { guard: { kind: 'permission', permissions: ['workspaces:switch'], anyRole: ['Dev', 'Lead', 'TheDude'] }, rateGroup: 'workspace' },
  // Terminals and confirmation also answer 403 SECURITY_VIOLATION while ENABLE_SYSTEM_COMMANDS=false.
  'terminals.create': { guard: { kind: 'permission', permissions: ['terminal:create'] }, rateGroup: 'terminal', feature: 'systemCommands' },
  'terminals.list': { guard: { kind: 'permission', permissions: ['terminal:execute'] }, rateGroup: 'terminal', feature: 'systemCommands' },
  'terminals.get': { guard: { kind: 'permission', permissions: ['terminal:execute'] }, rateGroup: 'terminal', feature: 'systemCommands' },
  'terminals.output': { guard: { kind: 'permission', permissions: ['terminal:execute'] }, rateGroup: 'terminal', feature: 'systemCommands' },
  'terminals.execute': { guard: { kind: 'permission', permissions: ['terminal:execute'] }, rateGroup: 'terminal', feature: 'systemCommands' },
  'terminals.interrupt': { guard: { kind: 'permission', permissions: ['terminal:execute'] }, rateGroup: 'terminal', feature: 'systemCommands' },
  'terminals.delete': { guard: { kind: 'permission', permissions: ['terminal:kill'] }, rateGroup: 'terminal', feature: 'systemCommands' },
  'security.pending': { guard: { kind: 'permission', permissions: ['terminal:execute'] }, rateGroup: 'terminal', feature: 'systemCommands' },
  'security.confirm': { guard: { kind: 'permission', permissions: ['terminal:execute'] }, rateGroup: 'terminal', feature: 'systemCommands' },
  'security.audit': { guard: { kind: 'permission', permissions: ['audit:view'], anyRole: ['Admin'] }, rateGroup: 'general' },
  'audit.log': { guard: { kind: 'permission', permissions: ['audit:view'] }, rateGroup: 'general' },
};

const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } }>;

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

  it('every procedure is exposed as a REST operation', () => {
    for (const [path, procedure] of Object.entries(procedures)) {
      expect(procedure._def.meta?.openapi?.path, path).toMatch(/^\/api\//);
    }
  });
});


describeOnDatabases('callers', (kind) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService(kind);
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
    expect((await anonymous.system.status({})).status).toBe('ok');
  });
});
