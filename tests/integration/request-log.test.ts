import { expect, it } from 'vitest';
import { spawnService } from '../helpers/child-service.js';
import { createTestDatabase, describeOnDatabases } from '../helpers/databases.js';
import { request } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';
import { connect, wsUrl } from '../helpers/ws-client.js';

// The operator's request log, as the service writes it to stdout: one line per HTTP request and
// per WebSocket upgrade, taken (101) or refused (its status), with secrets in the URL redacted,
// and one for a request too malformed for Node's HTTP parser.

interface LogLine {
  msg?: string;
  url?: string;
  status?: number;
  requestId?: string;
  durationMs?: number;
}

describeOnDatabases('the request log', (kind) => {
  it('has a line for every request and every WebSocket upgrade, taken or refused, without secrets', async () => {
    const database = await createTestDatabase(kind);
    const service = await spawnService({ DATABASE_URL: database.url });
    try {
      const { url } = service;
      expect((await request(url, 'GET', '/api/status', { headers: { 'x-request-id': 'status-check-1' } })).status).toBe(200);
      const taken = await connect(wsUrl(url, '/ws?access_token=sk-LOGCANARY-123'));
      expect(taken.ok).toBe(true);
      if (taken.ok) taken.client.close();
      const unknown = await connect(wsUrl(url, '/ws/nothing-here'));
      expect(unknown.ok ? 101 : unknown.status).toBe(404);
      const wrongHost = await connect(wsUrl(url, '/ws'), { headers: { host: 'evil.example' } });
      expect(wrongHost.ok ? 101 : wrongHost.status).toBe(403);
      // tRPC's subscription link sends the token in connectionParams (EventSource has no headers).
      const params = encodeURIComponent(JSON.stringify({ token: 'eyJ-LOGCANARY-2' }));
      await request(url, 'GET', `/trpc/system.status?connectionParams=${params}&input=%7B%7D`);
      // Too long for Node's parser, so Express never sees it: the envelope, and a line of its own.
      const tooLong = await request(url, 'GET', `/api/conversations?q=${'a'.repeat(20_000)}`);
      expect(tooLong.status).toBe(400);
      expect(tooLong.body.error.code).toBe('INVALID_REQUEST');
      await waitFor(() => service.lines.find((line) => line.includes('"msg":"unparsable request"')), 5000, 'the unparsable request line');
      expect(JSON.parse(service.lines.find((line) => line.includes('"msg":"unparsable request"')) ?? '{}')).toMatchObject({ status: 400, reason: 'HPE_HEADER_OVERFLOW' });

      const lines = await waitFor(
        () => {
          const parsed = service.lines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.msg === 'request');
          return parsed.length >= 5 ? parsed : undefined;
        },
        5000,
        'five request lines',
      );
      expect(lines.map(({ url: path, status }) => ({ url: path, status }))).toEqual([
        { url: '/api/status', status: 200 },
        { url: '/ws?access_token=[redacted]', status: 101 },
        { url: '/ws/nothing-here', status: 404 },
        { url: '/ws', status: 403 },
        // The status is tRPC's business (connection parameters are for subscriptions); the URL is ours.
        { url: '/trpc/system.status?connectionParams=[redacted]&input=[redacted]', status: expect.any(Number) },
      ]);
      expect(lines[0]?.requestId).toBe('status-check-1');
      for (const line of lines) expect(line.durationMs).toEqual(expect.any(Number));
      expect(service.lines.join('\n')).not.toContain('LOGCANARY');

      // A client's own mistakes on /trpc (unknown id, bad input) are logged at info, without a stack
      // (issue 20: every 4xx there was an error line with a stack).
      const missing = await request(url, 'GET', `/trpc/conversations.get?input=${encodeURIComponent(JSON.stringify({ json: { id: '3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e90' } }))}`);
      expect(missing.status).toBe(404);
      expect((await request(url, 'POST', '/trpc/conversations.rename', { json: { json: { id: 7 } } })).status).toBe(400);
      const refusals = await waitFor(
        () => {
          const parsed = service.lines.map((line) => JSON.parse(line) as LogLine & { level?: number; err?: unknown }).filter((line) => line.msg === 'procedure refused');
          return parsed.length >= 2 ? parsed : undefined;
        },
        5000,
        'two refusal lines',
      );
      for (const line of refusals) {
        expect(line.level).toBe(30);
        expect(line.err).toBeUndefined();
      }
      expect(service.lines.filter((line) => line.includes('"level":50'))).toEqual([]);
    } finally {
      service.child.kill('SIGKILL');
      await service.exit;
      await database.drop();
    }
  });
});
