import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedOrigin } from '../helpers/closed-origin.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';
import { rawRequest } from '../helpers/raw-request.js';

// CONTRACT §2 through HTTP: the envelope on every error path, check order, Host guard, body rules.

describeOnDatabases('HTTP contract', (kind) => {
  let svc: TestService;
  beforeAll(async () => {
    // No Ollama answers at its address, whatever runs on this machine.
    svc = await startTestService(kind, { BODY_LIMIT: '64kb', OLLAMA_BASE_URL: await closedOrigin() });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
  });

  it("GET /api/status reports the service, degraded (200) while the default model's provider is unreachable", async () => {
    const res = await svc.request('GET', '/api/status');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'degraded', assistant: true, database: kind, version: '0.1.0' });
    expect(Date.parse(res.body.timestamp)).not.toBeNaN();
    expect(Number.isInteger(res.body.uptime)).toBe(true);
    expect(res.body.providers.ollama).toEqual({ configured: true, defaultModel: 'llama3.2', reachable: false });
    expect(res.body.providers.openai.configured).toBe(false);
    expect(res.body.serviceDefaultModel).toEqual({ name: 'llama3.2', provider: 'ollama' });
    expect(res.body.problems).toEqual(['ollama, the provider of the service default model llama3.2, is unreachable (OLLAMA_BASE_URL)']);
  });

  it('HEAD behaves like GET without a body', async () => {
    const res = await svc.request('HEAD', '/api/status');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
  });

  it('an unknown path and a wrong method are 404 in the envelope', async () => {
    expectEnvelope(await svc.request('GET', '/api/nothing-here'), 404, 'NOT_FOUND');
    expectEnvelope(await svc.request('GET', '/elsewhere'), 404, 'NOT_FOUND');
    expectEnvelope(await svc.request('PUT', '/api/status'), 404, 'NOT_FOUND');
    expectEnvelope(await svc.request('DELETE', '/api/conversations'), 404, 'NOT_FOUND');
    expectEnvelope(await svc.request('GET', '/api/context/clear'), 404, 'NOT_FOUND');
  });

  it('a POST without body or Content-Type works (curl -X POST)', async () => {
    const res = await fetch(`${svc.url}/api/context/clear`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ success: true });
  });

  it('malformed JSON is a 400', async () => {
    const error = expectEnvelope(
      await svc.request('POST', '/api/conversation/save', { body: '{"title": ', headers: { 'content-type': 'application/json' } }),
      400,
      'INVALID_REQUEST',
    );
    expect(error.message).toMatch(/JSON/);
  });

  it('a non-empty body that is not JSON is a 415 (CONTRACT §2, amended); a JSON body that is not an object is a 400', async () => {
    expectEnvelope(
      await svc.request('POST', '/api/conversation/save', { body: 'title=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'INVALID_REQUEST',
    );
    expectEnvelope(await svc.request('POST', '/api/conversation/save', { json: [1, 2] }), 400, 'INVALID_REQUEST');
    expectEnvelope(await svc.request('POST', '/api/conversation/save', { json: null }), 400, 'INVALID_REQUEST');
  });

  it('a body over BODY_LIMIT is a 413 and the service keeps answering', async () => {
    const big = JSON.stringify({ title: 'x'.repeat(70 * 1024) });
    const res = await svc.request('POST', '/api/conversation/save', { body: big, headers: { 'content-type': 'application/json' } });
    const error = expectEnvelope(res, 413, 'INVALID_REQUEST');
    expect(error.message).toMatch(/too large/i);
    expect((await svc.request('GET', '/api/status')).status).toBe(200);
  });

  it('a body over the limit without Content-Length (chunked) is a 413 too', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(16 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 8) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetch(`${svc.url}/api/conversation/save`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    });
    expect(res.status).toBe(413);
  });

  it('validation errors list the zod issues with their paths', async () => {
    const error = expectEnvelope(
      await svc.request('POST', '/api/conversation/save', { json: { conversationData: { messages: [{ role: 'robot', content: 1 }] } } }),
      400,
      'INVALID_REQUEST',
    );
    const issues = error.details.issues as { path: (string | number)[]; message: string }[];
    expect(issues.map((issue) => issue.path)).toEqual(
      expect.arrayContaining([
        ['conversationData', 'messages', 0, 'role'],
        ['conversationData', 'messages', 0, 'content'],
      ]),
    );
    for (const issue of issues) expect(typeof issue.message).toBe('string');
  });

  it('unknown body fields are ignored', async () => {
    const res = await svc.request('POST', '/api/conversation/save', { json: { title: 'kept', surprise: { deep: true } } });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
  });

  it('a foreign Host header is refused with 403 SECURITY_VIOLATION before routing', async () => {
    const status = await rawRequest(svc.url, 'GET', '/api/nothing', { headers: { Host: 'attacker.example:80' } });
    expect(status.status).toBe(403);
    expect((status.body as { error: { code: string } }).error.code).toBe('SECURITY_VIOLATION');
  });

  it('a CORS preflight answers 204', async () => {
    const res = await svc.request('OPTIONS', '/api/conversations', {
      headers: { Origin: 'http://somewhere.example', 'Access-Control-Request-Method': 'GET' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('every reply carries a request id, and a sane incoming one is kept', async () => {
    const res = await svc.request('GET', '/api/status', { headers: { 'X-Request-Id': 'trace-123' } });
    expect(res.headers.get('x-request-id')).toBe('trace-123');
    const fresh = await svc.request('GET', '/api/status', { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('GET /api/auth/me names the local user with every role while auth is off', async () => {
    const res = await svc.request('GET', '/api/auth/me');
    expect(res.status).toBe(200);
    expect(res.body.userId).toBe('local');
    expect(res.body.authEnabled).toBe(false);
    expect(res.body.roles).toEqual(['User', 'Admin', 'Dev', 'Lead', 'TheDude']);
    expect(res.body.permissions).toContain('user:management');
  });
});

describe('CORS for allowed origins', () => {
  it('gives allow headers only to ALLOWED_ORIGINS', async () => {
    await using svc = await startTestService('sqlite', { ALLOWED_ORIGINS: 'http://ui.example' });
    const allowed = await svc.request('GET', '/api/status', { headers: { Origin: 'http://ui.example' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://ui.example');
    const other = await svc.request('GET', '/api/status', { headers: { Origin: 'http://other.example' } });
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describeOnDatabases('input PostgreSQL could not store', (kind) => {
  it('NUL characters are refused with 400 wherever they hide, and nothing is stored', async () => {
    await using svc = await startTestService(kind);
    const bodies = [
      { title: 'a\u0000b' },
      { conversationData: { messages: [{ role: 'user', content: 'x\u0000' }] } },
      { conversationData: { messages: [{ role: 'user', content: 'x' }], metadata: { deep: ['ok', { 'k\u0000': 1 }] } } },
    ];
    for (const json of bodies) {
      const error = expectEnvelope(await svc.request('POST', '/api/conversation/save', { json }), 400, 'INVALID_REQUEST');
      expect((error.details.issues as { message: string }[])[0]?.message).toMatch(/NUL/);
    }
    expectEnvelope(await svc.request('GET', '/api/conversations?q=%00'), 400, 'INVALID_REQUEST');
    expect((await svc.request('GET', '/api/conversations')).body.total).toBe(0);
  });

  it('lone surrogates and absurd nesting are refused with 400, and the service keeps answering', async () => {
    await using svc = await startTestService(kind);
    const surrogate = expectEnvelope(await svc.request('POST', '/api/conversation/save', { body: '{"title":"a\\ud800b"}', headers: { 'content-type': 'application/json' } }), 400, 'INVALID_REQUEST');
    expect(surrogate.details.issues).toEqual([{ path: ['title'], message: 'must be well-formed Unicode' }]);
    const paired = await svc.request('POST', '/api/conversation/save', { json: { title: 'emoji 😀 ok' } });
    expect(paired.status).toBe(200);
    const deep = `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const nested = expectEnvelope(await svc.request('POST', '/api/conversations/load', { body: deep, headers: { 'content-type': 'application/json' } }), 400, 'INVALID_REQUEST');
    expect(JSON.stringify(nested.details)).toContain('deeper than 64');
    expect((await svc.request('GET', '/api/status')).status).toBe(200);
  });
});
