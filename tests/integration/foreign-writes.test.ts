import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { rawRequest } from '../helpers/raw-request.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §8 (amended) and §2: a state-changing request a foreign web page could send without a
// CORS preflight is refused before anything runs. Before, five `POST /api/terminals` with
// `Content-Type: text/plain` from another site used up the local user's terminal cap, and /trpc
// answered such bodies 500.

const evil = 'https://evil.example';

describe('requests a web page cannot forge', () => {
  let fake: FakeOllama;
  let service: TestService;
  beforeAll(async () => {
    fake = await startFakeOllama();
    service = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url, ALLOWED_ORIGINS: 'https://app.example', ENABLE_SYSTEM_COMMANDS: 'true' });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await fake.close();
  });

  const conversationCount = async () => (await service.request('GET', '/api/conversations')).body.total as number;
  const save = (headers: Record<string, string>, path = '/api/conversation/save', body = '{"title":"planted"}') =>
    rawRequest(service.url, 'POST', path, { headers: { 'content-type': 'application/json', ...headers }, body });

  it('a foreign Origin, Origin: null or Sec-Fetch-Site: cross-site is 403 on every path, and nothing is stored', async () => {
    const before = await conversationCount();
    const foreign: Record<string, string>[] = [
      { origin: evil },
      { origin: 'null' },
      { origin: `${evil}:${new URL(service.url).port}` },
      { origin: 'http://127.0.0.1.evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'cross-site', origin: evil },
    ];
    for (const headers of foreign) {
      for (const path of ['/api/conversation/save', '/./api/conversation/save', '/API/conversation/save']) {
        const reply = await save(headers, path);
        expect(reply.status, `${path} ${JSON.stringify(headers)}`).toBe(403);
        expect(reply.body.error.code).toBe('SECURITY_VIOLATION');
      }
      const trpc = await save(headers, '/trpc/conversations.save', '{"json":{"title":"planted"}}');
      expect(trpc.status).toBe(403);
      expect(trpc.body.error.json.data).toMatchObject({ httpStatus: 403, appCode: 'SECURITY_VIOLATION' });
      const batch = await save(headers, '/trpc/conversations.save,conversations.save?batch=1', '{"0":{"json":{}},"1":{"json":{}}}');
      expect(batch.status).toBe(403);
      expect(batch.body).toHaveLength(2);
      const v1 = await save(headers, '/v1/chat/completions', '{"model":"ollama/llama3.2","messages":[{"role":"user","content":"hi"}]}');
      expect(v1.status).toBe(403);
      expect(v1.body.error.type).toBe('permission_error');
      const terminal = await rawRequest(service.url, 'POST', '/api/terminals', { headers });
      expect(terminal.status).toBe(403);
      expect((await rawRequest(service.url, 'DELETE', '/api/conversation/3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e90', { headers })).status).toBe(403);
    }
    expect(await conversationCount()).toBe(before);
    expect(fake.chatRequests().length).toBe(0);
    expect((await service.request('GET', '/api/terminals')).body.terminals).toHaveLength(0);
  });

  it("the service's own origins, ALLOWED_ORIGINS, and clients without Origin (curl, SDKs) pass; reads are not refused", async () => {
    const { port } = new URL(service.url);
    const trusted: Record<string, string>[] = [{}, { origin: service.url }, { origin: `http://localhost:${port}` }, { origin: 'https://app.example' }, { 'sec-fetch-site': 'same-origin', origin: service.url }, { 'sec-fetch-site': 'none' }];
    for (const headers of trusted) {
      expect((await save(headers)).status, JSON.stringify(headers)).toBe(200);
    }
    // A page elsewhere may send a GET, but CORS keeps the answer from it.
    const read = await rawRequest(service.url, 'GET', '/api/conversations', { headers: { origin: evil } });
    expect(read.status).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a non-empty body that is not JSON is 415 on /api, /trpc and /v1, never 500, and runs nothing', async () => {
    const before = await conversationCount();
    const bodies = [
      { 'content-type': 'text/plain', body: '{"title":"planted"}' },
      { 'content-type': 'text/plain;charset=UTF-8', body: 'x' },
      { 'content-type': 'application/x-www-form-urlencoded', body: 'title=planted' },
      { 'content-type': 'multipart/form-data; boundary=b', body: '--b\r\nContent-Disposition: form-data; name="title"\r\n\r\nplanted\r\n--b--\r\n' },
      { 'content-type': 'application/jsonx', body: '{}' },
    ];
    for (const { 'content-type': type, body } of bodies) {
      for (const path of ['/api/conversation/save', '/./api/conversation/save', '/api/terminals', '/trpc/conversations.save', '/trpc/terminals.create', '/v1/chat/completions']) {
        const reply = await rawRequest(service.url, 'POST', path, { headers: { 'content-type': type }, body });
        expect(reply.status, `${path} ${type}`).toBe(415);
        if (path.startsWith('/trpc')) expect(reply.body.error.json.data.httpStatus).toBe(415);
        else if (path.startsWith('/v1')) expect(reply.body.error.type).toBe('invalid_request_error');
        else expect(reply.body.error.code).toBe('INVALID_REQUEST');
      }
    }
    expect(await conversationCount()).toBe(before);
    expect((await service.request('GET', '/api/terminals')).body.terminals).toHaveLength(0);
    // No body is no body, whatever the Content-Type says (curl -X POST).
    expect((await rawRequest(service.url, 'POST', '/api/context/clear', { headers: { 'content-type': 'text/plain' } })).status).toBe(200);
    expect((await service.request('GET', '/api/status')).status).toBe(200);
  });

  it('a JSON body under a structured-syntax JSON type (+json) is JSON on every path: /api, /trpc, never a 500', async () => {
    for (const type of ['application/problem+json', 'application/vnd.api+json; charset=utf-8', 'APPLICATION/MERGE-PATCH+JSON']) {
      const rest = await rawRequest(service.url, 'POST', '/api/conversation/save', { headers: { 'content-type': type }, body: JSON.stringify({ title: `rest ${type}` }) });
      expect(rest.status, type).toBe(200);
      const trpc = await rawRequest(service.url, 'POST', '/trpc/conversations.save', { headers: { 'content-type': type }, body: JSON.stringify({ json: { title: `trpc ${type}` } }) });
      expect(trpc.status, `${type} ${JSON.stringify(trpc.body)}`).toBe(200);
      const batch = await rawRequest(service.url, 'POST', '/trpc/conversations.save,conversations.save?batch=1', {
        headers: { 'content-type': type },
        body: JSON.stringify({ 0: { json: { title: 'batch 0' } }, 1: { json: { title: 'batch 1' } } }),
      });
      expect(batch.status, type).toBe(200);
    }
    // Each save names the current conversation: the last one's title is what the batch sent.
    const titles = (await service.request('GET', '/api/conversations?limit=100')).body.conversations.map((row: { title: string }) => row.title);
    expect(titles).toContain('batch 1');
  });
});

