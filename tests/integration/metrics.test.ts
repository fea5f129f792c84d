import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { newSigningKey, startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { parsePrometheusText, samplesOf, valueOf, type Exposition } from '../helpers/prometheus-text.js';
import { describeWithSandbox } from '../helpers/sandbox.js';
import { openSse } from '../helpers/sse.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';
import { connect, wsUrl, type TestSocket } from '../helpers/ws-client.js';

// GET /metrics (CONTRACT §5): Prometheus text read back with a strict parser, and each counter
// moved by real traffic through the running service by exactly what that traffic should add.

const requests = 'assistant_http_requests_total';
const durations = 'assistant_http_request_duration_seconds';

async function scrape(service: TestService): Promise<Exposition> {
  const reply = await service.request('GET', '/metrics');
  expect(reply.status, reply.text).toBe(200);
  return parsePrometheusText(reply.text);
}

/**
 * Scrapes until `probe` gives a value: a request's count is recorded when its reply has ended on
 * the server's side, which may come a moment after the client has read it.
 */
function scrapeUntil<T>(service: TestService, probe: (metrics: Exposition) => T | undefined, what: string): Promise<T> {
  return waitFor(async () => probe(await scrape(service)), 5000, what);
}

async function openSocket(service: TestService, path: string): Promise<TestSocket> {
  const connection = await connect(wsUrl(service.url, path));
  if (!connection.ok) throw new Error(`${path} refused: ${String(connection.status)}`);
  return connection.client;
}

describe('GET /metrics without authentication', () => {
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

  it('answers Prometheus text: every family typed, the default process metrics included, no socket open yet', async () => {
    const reply = await service.request('GET', '/metrics');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const metrics = parsePrometheusText(reply.text);
    expect(Object.fromEntries([...metrics.types].filter(([name]) => name.startsWith('assistant_')))).toEqual({
      assistant_http_requests_total: 'counter',
      assistant_http_request_duration_seconds: 'histogram',
      assistant_chat_streams_active: 'gauge',
      assistant_websocket_connections: 'gauge',
      assistant_websocket_connections_opened_total: 'counter',
      assistant_chat_exchanges_total: 'counter',
      assistant_chat_tokens_total: 'counter',
      assistant_commands_total: 'counter',
      assistant_terminal_sessions_open: 'gauge',
      assistant_terminal_sessions_created_total: 'counter',
      assistant_event_loop_lag_seconds: 'histogram',
    });
    expect(metrics.types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(metrics.types.get('nodejs_heap_size_used_bytes')).toBe('gauge');
    for (const channel of ['main', 'markdown', 'terminal']) {
      expect(samplesOf(metrics, 'assistant_websocket_connections', { channel }), channel).toEqual([
        { name: 'assistant_websocket_connections', labels: { channel }, value: 0 },
      ]);
    }
    expect(valueOf(metrics, 'assistant_chat_streams_active')).toBe(0);
    expect(valueOf(metrics, 'assistant_terminal_sessions_open')).toBe(0);
  });

  it('the parser refuses what is not the text format, so the scrape above proves something', () => {
    expect(() => parsePrometheusText('# TYPE a counter\na{b="c"} 1\n')).not.toThrow();
    expect(() => parsePrometheusText('a 1\n')).toThrow(/without TYPE/);
    expect(() => parsePrometheusText('# TYPE a counter\na{b=c} 1\n')).toThrow(/bad labels/);
    expect(() => parsePrometheusText('# TYPE a counter\na one\n')).toThrow(/bad value/);
    expect(() => parsePrometheusText('{"success":true}\n')).toThrow(/not a sample/);
  });

  it('counts requests by route template and status, never by raw URL; unknown paths share one label', async () => {
    const id = crypto.randomUUID();
    const before = await scrape(service);
    const label = (method: string, route: string, status: string) => ({ method, route, status });
    const expected = [
      { labels: label('GET', '/api/conversation/{id}', '404'), count: 2 },
      { labels: label('GET', '/api/conversations', '200'), count: 1 },
      { labels: label('GET', 'unmatched', '404'), count: 2 },
      { labels: label('POST', '/api/conversation/save', '400'), count: 1 },
      { labels: label('GET', '/trpc/system.status', '200'), count: 1 },
    ];
    expect((await service.request('GET', `/api/conversation/${id}`)).status).toBe(404);
    expect((await service.request('GET', `/api/conversation/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await service.request('GET', '/api/conversations')).status).toBe(200);
    expect((await service.request('GET', `/no/such/${id}`)).status).toBe(404);
    expect((await service.request('GET', `/trpc/no.such.procedure${id}`)).status).toBe(404);
    expect((await service.request('POST', '/api/conversation/save', { body: 'not json', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await service.request('GET', `/trpc/system.status?input=${encodeURIComponent('{"json":{}}')}`)).status).toBe(200);

    const after = await scrapeUntil(
      service,
      (metrics) => (expected.every(({ labels, count }) => valueOf(metrics, requests, labels) - valueOf(before, requests, labels) >= count) ? metrics : undefined),
      'the requests to be counted',
    );
    for (const { labels, count } of expected) {
      expect(valueOf(after, requests, labels) - valueOf(before, requests, labels), JSON.stringify(labels)).toBe(count);
    }
    const timed = { method: 'GET', route: '/api/conversations' };
    expect(valueOf(after, `${durations}_count`, timed) - valueOf(before, `${durations}_count`, timed)).toBe(1);
    expect(valueOf(after, `${durations}_bucket`, { ...timed, le: '+Inf' })).toBe(valueOf(after, `${durations}_count`, timed));
    // The scrape is a request like any other, under its own route.
    expect(valueOf(after, requests, label('GET', '/metrics', '200'))).toBeGreaterThanOrEqual(1);
    const routes = new Set(samplesOf(after, requests).map((sample) => sample.labels.route));
    for (const route of routes) expect(route, 'a raw URL became a label').not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}|no\/such/);
  });

  it('counts an exchange and the tokens its provider reported, by provider and model', async () => {
    const labels = { provider: 'ollama', model: 'llama3.2' };
    const before = await scrape(service);
    fake.enqueue({ kind: 'text', chunks: ['Hel', 'lo'], usage: { input: 7, output: 3 } });
    const reply = await service.request('POST', '/api/message', { json: { message: 'Say hello', mode: 'chat' } });
    expect(reply.status, reply.text).toBe(200);
    const after = await scrapeUntil(service, (metrics) => (valueOf(metrics, 'assistant_chat_tokens_total', { ...labels, type: 'output' }) > valueOf(before, 'assistant_chat_tokens_total', { ...labels, type: 'output' }) ? metrics : undefined), 'the tokens');
    const delta = (name: string, wanted: Record<string, string>) => valueOf(after, name, wanted) - valueOf(before, name, wanted);
    expect(delta('assistant_chat_tokens_total', { ...labels, type: 'input' })).toBe(7);
    expect(delta('assistant_chat_tokens_total', { ...labels, type: 'output' })).toBe(3);
    expect(delta('assistant_chat_exchanges_total', { provider: 'ollama', finish_reason: 'stop' })).toBe(1);
    expect(delta(requests, { method: 'POST', route: '/api/message', status: '200' })).toBe(1);
  });

  it('shows a running stream as active until it is aborted, and counts how it ended', async () => {
    const before = await scrape(service);
    fake.enqueue({ kind: 'stallMidStream', chunks: ['one ', 'two '], after: 1 });
    const stream = await openSse(`${service.url}/api/message/stream`, { json: { message: 'wait for me', mode: 'chat' } });
    expect(stream.status).toBe(200);
    const streamId = stream.headers.get('x-stream-id') ?? '';
    await stream.events((event) => event.data.type === 'text');
    expect(valueOf(await scrape(service), 'assistant_chat_streams_active')).toBe(1);

    expect((await service.request('POST', `/api/streams/${streamId}/abort`)).status).toBe(200);
    const events = await stream.events();
    expect(events.at(-1)?.data.type).toBe('done');
    const after = await scrapeUntil(service, (metrics) => (valueOf(metrics, 'assistant_chat_streams_active') === 0 ? metrics : undefined), 'the stream to end');
    const aborted = { provider: 'ollama', finish_reason: 'aborted' };
    expect(valueOf(after, 'assistant_chat_exchanges_total', aborted) - valueOf(before, 'assistant_chat_exchanges_total', aborted)).toBe(1);
    // The SSE reply is a request too, counted under its template when it has ended.
    const sse = { method: 'POST', route: '/api/message/stream', status: '200' };
    await scrapeUntil(service, (metrics) => (valueOf(metrics, requests, sse) - valueOf(before, requests, sse) === 1 ? true : undefined), 'the SSE request');
  });

  it('counts open WebSocket connections by channel, back to zero once they close', async () => {
    const before = await scrape(service);
    const main = await openSocket(service, '/ws');
    const markdown = await openSocket(service, '/ws/markdown-stream');
    const second = await openSocket(service, '/ws');
    const open = await scrape(service);
    expect(valueOf(open, 'assistant_websocket_connections', { channel: 'main' })).toBe(2);
    expect(valueOf(open, 'assistant_websocket_connections', { channel: 'markdown' })).toBe(1);
    expect(valueOf(open, 'assistant_websocket_connections', { channel: 'terminal' })).toBe(0);
    const opened = (metrics: Exposition, channel: string) => valueOf(metrics, 'assistant_websocket_connections_opened_total', { channel });
    expect(opened(open, 'main') - opened(before, 'main')).toBe(2);
    expect(opened(open, 'markdown') - opened(before, 'markdown')).toBe(1);

    main.close();
    markdown.close();
    second.socket.terminate();
    await Promise.all([main.closed, markdown.closed, second.closed]);
    const closed = await scrapeUntil(
      service,
      (metrics) => (samplesOf(metrics, 'assistant_websocket_connections').every((sample) => sample.value === 0) ? metrics : undefined),
      'the sockets to be gone',
    );
    expect(opened(closed, 'main') - opened(before, 'main')).toBe(2);
  });
});

describeWithSandbox('GET /metrics: terminals and commands', () => {
  let service: TestService;
  let workspace: Folder;

  beforeAll(async () => {
    workspace = makeFolder();
    mkdirSync(join(workspace.path, 'build'));
    service = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true', COMMAND_TIMEOUT_MS: '5000' });
    const added = await service.request('POST', '/api/workspaces/add', { json: { name: 'metrics', path: workspace.path } });
    expect(added.status, added.text).toBe(200);
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    workspace[Symbol.dispose]();
  });

  it('counts terminals created and open, and each command verdict by risk level', async () => {
    const before = await scrape(service);
    const created = await service.request('POST', '/api/terminals', { json: {} });
    expect(created.status, created.text).toBe(200);
    const terminalId = created.body.terminalId as string;
    const execute = (command: string) => service.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command } });
    const confirm = (commandId: string, confirmed: boolean) => service.request('POST', '/api/security/confirm', { json: { commandId, confirmed } });

    expect((await execute('echo hi')).status).toBe(200);
    expect((await execute('rm -rf /')).status).toBe(403);
    const heldOnce = await execute('rm -r build');
    expect(heldOnce.status, heldOnce.text).toBe(202);
    expect((await confirm(heldOnce.body.commandId as string, false)).body).toMatchObject({ executed: false });
    const heldTwice = await execute('rm -r build');
    expect(heldTwice.status).toBe(202);
    expect((await confirm(heldTwice.body.commandId as string, true)).body).toMatchObject({ executed: true, exitCode: 0 });

    const socket = await openSocket(service, `/api/terminals/${terminalId}/ws`);
    const during = await scrape(service);
    expect(valueOf(during, 'assistant_terminal_sessions_open')).toBe(1);
    expect(valueOf(during, 'assistant_websocket_connections', { channel: 'terminal' })).toBe(1);
    const delta = (name: string, labels: Record<string, string> = {}) => valueOf(during, name, labels) - valueOf(before, name, labels);
    expect(delta('assistant_terminal_sessions_created_total')).toBe(1);
    const verdicts = Object.fromEntries(
      samplesOf(during, 'assistant_commands_total')
        .map((sample) => [`${sample.labels.risk ?? ''} ${sample.labels.verdict ?? ''}`, delta('assistant_commands_total', sample.labels)] as const)
        .filter(([, count]) => count !== 0),
    );
    expect(verdicts).toEqual({
      'low executed': 1,
      'critical refused': 1,
      'high held': 2,
      'high rejected': 1,
      'high confirmed': 1,
      'high executed': 1,
    });

    socket.close();
    expect((await service.request('DELETE', `/api/terminals/${terminalId}`)).status).toBe(200);
    const after = await scrapeUntil(service, (metrics) => (valueOf(metrics, 'assistant_terminal_sessions_open') === 0 ? metrics : undefined), 'the terminal to go');
    expect(valueOf(after, 'assistant_terminal_sessions_created_total') - valueOf(before, 'assistant_terminal_sessions_created_total')).toBe(1);
  });
});

describe('GET /metrics with authentication', () => {
  let idp: TestIdentityProvider;
  let service: TestService;

  beforeAll(async () => {
    idp = await startIdentityProvider();
    service = await startAuthService('sqlite', idp, { RATE_LIMIT_ENABLED: 'false' });
    idp.define('admin', { sub: 'metrics-admin', roles: ['Admin'] });
    idp.define('user', { sub: 'metrics-user', roles: ['User'] });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await idp[Symbol.asyncDispose]();
  });

  it('needs a valid token (401), then system:info (403 FORBIDDEN); Admin holds it', async () => {
    const none = await service.request('GET', '/metrics');
    expectEnvelope(none, 401, 'UNAUTHORIZED');
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expectEnvelope(await requestAs(service, 'not-a-token', 'GET', '/metrics'), 401, 'UNAUTHORIZED');
    // Admin's claims, signed with a key the issuer never published.
    const forged = await idp.sign({ sub: 'metrics-admin', realm_access: { roles: ['Admin'] } }, { key: await newSigningKey() });
    expectEnvelope(await requestAs(service, forged, 'GET', '/metrics'), 401, 'UNAUTHORIZED');

    const asUser = await requestAs(service, await idp.tokenFor('user'), 'GET', '/metrics');
    expect(expectEnvelope(asUser, 403, 'FORBIDDEN').details).toEqual({ missing: 'system:info' });
    expect(asUser.text).not.toMatch(/assistant_/);

    const asAdmin = await requestAs(service, await idp.tokenFor('admin'), 'GET', '/metrics');
    expect(asAdmin.status, asAdmin.text).toBe(200);
    const metrics = parsePrometheusText(asAdmin.text);
    // The refusals above were answered and counted before this scrape.
    expect(valueOf(metrics, requests, { method: 'GET', route: '/metrics', status: '401' })).toBe(3);
    expect(valueOf(metrics, requests, { method: 'GET', route: '/metrics', status: '403' })).toBe(1);
  });

  it('audits the 403 denial like any guard does', async () => {
    const asUser = await requestAs(service, await idp.tokenFor('user'), 'GET', '/metrics');
    expect(asUser.status).toBe(403);
    const log = await requestAs(service, await idp.tokenFor('admin'), 'GET', '/api/audit/log?type=access');
    expect(log.status, log.text).toBe(200);
    const denials = log.body.entries as { userId: string; details: { missing?: string } }[];
    expect(denials.some((entry) => entry.userId === 'metrics-user' && entry.details.missing === 'system:info')).toBe(true);
  });

  it('decides an unknown method before authentication: 404', async () => {
    expectEnvelope(await service.request('POST', '/metrics'), 404, 'NOT_FOUND');
  });
});

describe('GET /metrics: rate limit and one registry per service', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService('sqlite', { RATE_LIMIT_ENABLED: 'true', API_RATE_LIMIT: '2' });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
  });

  it('counts in the general group: the third scrape in a minute is 429', async () => {
    const first = await service.request('GET', '/metrics');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    // A new service's registry holds only its own traffic, though other services ran in this process.
    expect(samplesOf(parsePrometheusText(first.text), requests, { route: '/api/conversations' })).toEqual([]);
    expect((await service.request('GET', '/metrics')).status).toBe(200);
    const third = await service.request('GET', '/metrics');
    expectEnvelope(third, 429, 'RATE_LIMIT_EXCEEDED');
    expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
