import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeOnDatabases } from '../helpers/databases.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §7's prompt orders: create, update, default, list, delete, and every section rule.

const validSections = [
  { type: 'system', content: 'You are terse.' },
  { type: 'custom', content: 'Answer in English.', enabled: false },
  { type: 'conversation_history' },
  { type: 'user_message' },
];

describeOnDatabases('prompt orders', (kind) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService(kind);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
  });

  const save = (order: Record<string, unknown>) => svc.request('POST', '/api/prompt-orders', { json: { order } });

  it('lists nothing at first, with the built-in order as the default', async () => {
    await using own = await startTestService(kind);
    const res = await own.request('GET', '/api/prompt-orders');
    expect(res.status).toBe(200);
    expect(res.body.orders).toEqual([]);
    expect(res.body.default.sections.map((s: { type: string }) => s.type)).toEqual([
      'system',
      'workspace_context',
      'tools',
      'conversation_history',
      'user_message',
    ]);
  });

  it('creates an order and lists it with enabled flags filled in', async () => {
    const res = await save({ name: 'Terse', description: 'short answers', sections: validSections });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const id = res.body.orderId as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const list = await svc.request('GET', '/api/prompt-orders');
    const stored = list.body.orders.find((order: { id: string }) => order.id === id);
    expect(stored).toMatchObject({
      id,
      name: 'Terse',
      description: 'short answers',
      isDefault: false,
      sections: [
        { type: 'system', content: 'You are terse.', enabled: true },
        { type: 'custom', content: 'Answer in English.', enabled: false },
        { type: 'conversation_history', enabled: true },
        { type: 'user_message', enabled: true },
      ],
    });
  });

  it('updates an order named by id, and refuses an unknown id with 404', async () => {
    const id = (await save({ name: 'Before', sections: validSections })).body.orderId as string;
    const updated = await save({ id, name: 'After', sections: validSections });
    expect(updated.body).toEqual({ success: true, orderId: id });
    const list = await svc.request('GET', '/api/prompt-orders');
    expect(list.body.orders.filter((order: { id: string }) => order.id === id).map((o: { name: string }) => o.name)).toEqual(['After']);
    expectEnvelope(await save({ id: '0f8b7b1e-1111-4222-8333-944455556666', name: 'x', sections: validSections }), 404, 'NOT_FOUND');
    expectEnvelope(await save({ id: 'nope', name: 'x', sections: validSections }), 404, 'NOT_FOUND');
  });

  it('keeps one default: marking another clears the first, and it replaces the built-in one', async () => {
    const first = (await save({ name: 'First default', sections: validSections, isDefault: true })).body.orderId as string;
    const second = (await save({ name: 'Second default', sections: validSections, isDefault: true })).body.orderId as string;
    const list = await svc.request('GET', '/api/prompt-orders');
    const defaults = list.body.orders.filter((order: { isDefault: boolean }) => order.isDefault);
    expect(defaults.map((order: { id: string }) => order.id)).toEqual([second]);
    expect(list.body.default.id).toBe(second);
    expect(list.body.orders.find((order: { id: string }) => order.id === first).isDefault).toBe(false);
  });

  it('deletes an order; an unknown one is 404', async () => {
    const id = (await save({ name: 'Doomed', sections: validSections })).body.orderId as string;
    expect((await svc.request('DELETE', `/api/prompt-orders/${id}`)).body).toEqual({ success: true });
    expectEnvelope(await svc.request('DELETE', `/api/prompt-orders/${id}`), 404, 'NOT_FOUND');
    expectEnvelope(await svc.request('DELETE', '/api/prompt-orders/not-an-id'), 404, 'NOT_FOUND');
  });

  const invalid: [string, Record<string, unknown>, RegExp][] = [
    ['no order object', {}, /expected object/],
    ['an empty name', { name: ' ', sections: validSections }, /empty/],
    ['an unknown section type', { name: 'x', sections: [{ type: 'banner' }, ...validSections] }, /Invalid option/],
    ['no conversation_history', { name: 'x', sections: [{ type: 'system' }, { type: 'user_message' }] }, /conversation_history must appear exactly once/],
    [
      'conversation_history twice',
      { name: 'x', sections: [{ type: 'conversation_history' }, { type: 'conversation_history' }, { type: 'user_message' }] },
      /conversation_history must appear exactly once/,
    ],
    ['no user_message', { name: 'x', sections: [{ type: 'conversation_history' }] }, /user_message must appear exactly once/],
    [
      'user_message not last',
      { name: 'x', sections: [{ type: 'user_message' }, { type: 'conversation_history' }] },
      /user_message must be the last section/,
    ],
    [
      'user_message disabled',
      { name: 'x', sections: [{ type: 'conversation_history' }, { type: 'user_message', enabled: false }] },
      /user_message cannot be disabled/,
    ],
    [
      'conversation_history disabled',
      { name: 'x', sections: [{ type: 'conversation_history', enabled: false }, { type: 'user_message' }] },
      /conversation_history cannot be disabled/,
    ],
    ['sections not an array', { name: 'x', sections: 'system' }, /expected array/],
  ];

  it.each(invalid)('refuses %s with 400 and the rule in details.issues', async (_label, order, rule) => {
    const before = await svc.request('GET', '/api/prompt-orders');
    const res = await svc.request('POST', '/api/prompt-orders', { json: Object.keys(order).length ? { order } : {} });
    const error = expectEnvelope(res, 400, 'INVALID_REQUEST');
    const messages = (error.details.issues as { message: string }[]).map((issue) => issue.message).join(' | ');
    expect(messages).toMatch(rule);
    expect((await svc.request('GET', '/api/prompt-orders')).body).toEqual(before.body);
  });
});
