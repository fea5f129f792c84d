import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeOnDatabases } from '../helpers/databases.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §3 and §7: conversations, the current-conversation rules, context, and the alternative paths.

const unknownId = '4b0c5c1e-3f7a-4d2b-9a51-0c6f1e2d3a4b';

describeOnDatabases('conversations', (kind) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService(kind);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
  });

  const importConversation = async (messages: { role: string; content: string }[], extra: Record<string, unknown> = {}) => {
    const res = await svc.request('POST', '/api/conversation/save', { json: { conversationData: { messages }, ...extra } });
    expect(res.status).toBe(200);
    return res.body.conversationId as string;
  };

  it('GET /api/context makes a current conversation on demand and reports it', async () => {
    const res = await svc.request('GET', '/api/context');
    expect(res.status).toBe(200);
    const { context, conversationId, messageCount } = res.body;
    expect(conversationId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(messageCount).toBe(0);
    expect(context).toEqual({
      conversationId,
      messageCount: 0,
      title: '',
      workspace: null,
      model: { name: 'llama3.2', provider: 'ollama' },
    });
    const again = await svc.request('GET', '/api/context');
    expect(again.body.conversationId).toBe(conversationId);
    const current = await svc.request('GET', '/api/conversation/current');
    expect(current.status).toBe(200);
    expect(current.body.conversation.id).toBe(conversationId);
    expect(current.body.messages).toEqual([]);
  });

  it('context/clear starts a new empty current conversation and keeps the old one', async () => {
    const before = (await svc.request('GET', '/api/context')).body.conversationId as string;
    await svc.request('POST', '/api/conversation/save', { json: { title: 'Keep me' } });
    const cleared = await svc.request('POST', '/api/context/clear');
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ success: true, message: expect.any(String) });
    const after = (await svc.request('GET', '/api/context')).body.conversationId as string;
    expect(after).not.toBe(before);
    const old = await svc.request('GET', `/api/conversation/${before}`);
    expect(old.status).toBe(200);
    expect(old.body.conversation.title).toBe('Keep me');
  });

  it('save without conversationData titles the current conversation and returns its id', async () => {
    await svc.request('POST', '/api/context/clear');
    const current = (await svc.request('GET', '/api/context')).body.conversationId as string;
    const saved = await svc.request('POST', '/api/conversation/save', { json: { title: 'Named' } });
    expect(saved.body).toEqual({ success: true, conversationId: current });
    const loaded = await svc.request('GET', `/api/conversation/${current}`);
    expect(loaded.body.conversation.title).toBe('Named');
  });

  it('save with no current conversation makes one (200)', async () => {
    const current = (await svc.request('GET', '/api/context')).body.conversationId as string;
    expect((await svc.request('DELETE', `/api/conversation/${current}`)).status).toBe(200);
    const saved = await svc.request('POST', '/api/conversation/save');
    expect(saved.status).toBe(200);
    expect(saved.body.conversationId).not.toBe(current);
    expect((await svc.request('GET', '/api/context')).body.conversationId).toBe(saved.body.conversationId);
  });

  it('imports a conversation with its messages, default title and metadata; it does not become current', async () => {
    const current = (await svc.request('GET', '/api/context')).body.conversationId as string;
    const longLine = `Plan the migration of ${'a very long subject '.repeat(5)}`;
    const res = await svc.request('POST', '/api/conversation/save', {
      json: {
        conversationData: {
          messages: [
            { role: 'system', content: 'be brief' },
            { role: 'user', content: `${longLine}\nsecond line` },
            { role: 'assistant', content: 'Sure.' },
            { role: 'tool', content: '{"ok":true}' },
          ],
          metadata: { source: 'import-test', tags: ['a'] },
        },
      },
    });
    expect(res.status).toBe(200);
    const imported = res.body.conversationId as string;
    const loaded = await svc.request('GET', `/api/conversation/${imported}`);
    expect(loaded.status).toBe(200);
    expect(loaded.body.conversation).toMatchObject({ id: imported, messageCount: 2 });
    expect(loaded.body.conversation.title).toBe(longLine.trim().slice(0, 60));
    expect(loaded.body.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    for (const message of loaded.body.messages) {
      expect(message.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(Date.parse(message.createdAt)).not.toBeNaN();
    }
    expect(loaded.body.metadata).toEqual({ source: 'import-test', tags: ['a'] });
    expect((await svc.request('GET', '/api/context')).body.conversationId).toBe(current);
  });

  it('an explicit title wins over the default on import', async () => {
    const id = await importConversation([{ role: 'user', content: 'hello' }], { title: 'Chosen' });
    expect((await svc.request('GET', `/api/conversation/${id}`)).body.conversation.title).toBe('Chosen');
  });

  it('lists newest first with total, limit, offset and a case-insensitive q over titles and messages', async () => {
    await using own = await startTestService(kind);
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      const res = await own.request('POST', '/api/conversation/save', {
        json: { title: `Topic ${index}`, conversationData: { messages: [{ role: 'user', content: index === 3 ? 'Needle In Haystack' : `plain ${index}` }] } },
      });
      ids.push(res.body.conversationId as string);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const all = await own.request('GET', '/api/conversations');
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(5);
    expect(all.body.conversations.map((c: { id: string }) => c.id)).toEqual([...ids].reverse());
    for (const entry of all.body.conversations) {
      expect(Object.keys(entry).sort()).toEqual(['createdAt', 'id', 'lastModified', 'messageCount', 'title']);
    }
    const page = await own.request('GET', '/api/conversations?limit=2&offset=1');
    expect(page.body.total).toBe(5);
    expect(page.body.conversations.map((c: { id: string }) => c.id)).toEqual([ids[3], ids[2]]);
    const byMessage = await own.request('GET', '/api/conversations?q=needle%20in');
    expect(byMessage.body.conversations.map((c: { id: string }) => c.id)).toEqual([ids[3]]);
    expect(byMessage.body.total).toBe(1);
    const byTitle = await own.request('GET', '/api/conversations?q=TOPIC%201');
    expect(byTitle.body.conversations.map((c: { id: string }) => c.id)).toEqual([ids[1]]);
  });

  it('does not list empty untitled conversations (a fresh current one)', async () => {
    await using own = await startTestService(kind);
    await own.request('GET', '/api/context');
    const list = await own.request('GET', '/api/conversations');
    expect(list.body).toEqual({ conversations: [], total: 0 });
  });

  it('refuses bad list parameters with 400', async () => {
    expectEnvelope(await svc.request('GET', '/api/conversations?limit=201'), 400, 'INVALID_REQUEST');
    expectEnvelope(await svc.request('GET', '/api/conversations?limit=0'), 400, 'INVALID_REQUEST');
    expectEnvelope(await svc.request('GET', '/api/conversations?limit=abc'), 400, 'INVALID_REQUEST');
    expectEnvelope(await svc.request('GET', '/api/conversations?offset=-1'), 400, 'INVALID_REQUEST');
  });

  it('set-current and load make a conversation current; load returns it', async () => {
    const id = await importConversation([{ role: 'user', content: 'pick me' }]);
    const set = await svc.request('POST', `/api/conversation/${id}/set-current`);
    expect(set.body).toEqual({ success: true, conversationId: id });
    expect((await svc.request('GET', '/api/context')).body.conversationId).toBe(id);

    await svc.request('POST', '/api/context/clear');
    const loaded = await svc.request('POST', '/api/conversations/load', { json: { conversationId: id } });
    expect(loaded.status).toBe(200);
    expect(loaded.body.conversation.id).toBe(id);
    expect(loaded.body.messages[0].content).toBe('pick me');
    const current = await svc.request('GET', '/api/conversation/current');
    expect(current.body.conversation.id).toBe(id);
    expect(current.body.messages).toHaveLength(1);
  });

  it('renames a conversation', async () => {
    const id = await importConversation([{ role: 'user', content: 'x' }]);
    const res = await svc.request('POST', `/api/conversation/${id}/rename`, { json: { title: 'Renamed' } });
    expect(res.body).toEqual({ success: true });
    expect((await svc.request('GET', `/api/conversation/${id}`)).body.conversation.title).toBe('Renamed');
    expectEnvelope(await svc.request('POST', `/api/conversation/${id}/rename`, { json: {} }), 400, 'INVALID_REQUEST');
  });

  it('deletes through both paths; deleting the current one leaves none until the next need', async () => {
    const first = await importConversation([{ role: 'user', content: 'one' }]);
    const del = await svc.request('DELETE', `/api/conversation/${first}`);
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ success: true, message: expect.any(String) });
    expectEnvelope(await svc.request('GET', `/api/conversation/${first}`), 404, 'NOT_FOUND');

    const second = await importConversation([{ role: 'user', content: 'two' }]);
    await svc.request('POST', `/api/conversation/${second}/set-current`);
    expect((await svc.request('DELETE', `/api/conversations/${second}`)).status).toBe(200);
    expectEnvelope(await svc.request('DELETE', `/api/conversations/${second}`), 404, 'NOT_FOUND');
    const context = await svc.request('GET', '/api/context');
    expect(context.body.conversationId).not.toBe(second);
    expect(context.body.messageCount).toBe(0);
  });

  it('the alternative save path is the same operation', async () => {
    const res = await svc.request('POST', '/api/conversations/save', {
      json: { conversationData: { messages: [{ role: 'user', content: 'via alias' }] } },
    });
    expect(res.status).toBe(200);
    const loaded = await svc.request('GET', `/api/conversation/${res.body.conversationId}`);
    expect(loaded.body.messages[0].content).toBe('via alias');
  });

  it('unknown and malformed ids are 404 on every conversation path', async () => {
    for (const id of [unknownId, 'not-a-uuid', '..%2F..%2Fetc', '%E0%A4%A']) {
      expectEnvelope(await svc.request('GET', `/api/conversation/${id}`), 404, 'NOT_FOUND');
      expectEnvelope(await svc.request('DELETE', `/api/conversation/${id}`), 404, 'NOT_FOUND');
      expectEnvelope(await svc.request('POST', `/api/conversation/${id}/set-current`), 404, 'NOT_FOUND');
      expectEnvelope(await svc.request('POST', `/api/conversation/${id}/rename`, { json: { title: 't' } }), 404, 'NOT_FOUND');
    }
    expectEnvelope(await svc.request('POST', '/api/conversations/load', { json: { conversationId: unknownId } }), 404, 'NOT_FOUND');
    expectEnvelope(await svc.request('POST', '/api/conversations/load', { json: {} }), 400, 'INVALID_REQUEST');
  });

  it('a failed request leaves stored conversations untouched', async () => {
    const id = await importConversation([{ role: 'user', content: 'precious' }], { title: 'Precious' });
    const before = await svc.request('GET', `/api/conversation/${id}`);
    await svc.request('POST', `/api/conversation/${id}/rename`, { json: { title: 5 } });
    await svc.request('POST', '/api/conversation/save', { json: { conversationData: { messages: 'nope' } } });
    await svc.request('POST', '/api/conversation/save', { body: '{"title":', headers: { 'content-type': 'application/json' } });
    const after = await svc.request('GET', `/api/conversation/${id}`);
    expect(after.body).toEqual(before.body);
  });
});
