import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startFakeOllama } from '../fakes/index.js';
import { postgresAdminUrl, postgresAvailable } from '../helpers/databases.js';
import { expectEnvelope, startTestService } from '../helpers/test-service.js';

// CONTRACT §2/§3: an unreachable database is 503 (SERVICE_UNAVAILABLE, and status `down`), never a
// 500, and the service recovers by itself when the database comes back.

describe.skipIf(!postgresAvailable)('PostgreSQL outage', () => {
  it('answers 503 while the database refuses connections, and recovers after', async () => {
    // The default model's provider answers, so the status is `ok` once the database is back (CONTRACT §3).
    await using ollama = await startFakeOllama();
    await using svc = await startTestService('postgresql', { OLLAMA_BASE_URL: ollama.url });
    const saved = await svc.request('POST', '/api/conversation/save', {
      json: { title: 'Before the outage', conversationData: { messages: [{ role: 'user', content: 'kept' }] } },
    });
    const name = new URL(svc.database.url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);

      const status = await svc.request('GET', '/api/status');
      expect(status.status).toBe(503);
      expect(status.body).toMatchObject({ success: false, status: 'down', assistant: true, error: { code: 'SERVICE_UNAVAILABLE' } });
      expect(Number.isInteger(status.body.uptime)).toBe(true);
      const list = expectEnvelope(await svc.request('GET', '/api/conversations'), 503, 'SERVICE_UNAVAILABLE');
      expect(list.message).toBe('Database unavailable');
      expectEnvelope(await svc.request('POST', '/api/conversation/save', { json: { title: 'during' } }), 503, 'SERVICE_UNAVAILABLE');
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    expect((await svc.request('GET', '/api/status')).body.status).toBe('ok');
    const loaded = await svc.request('GET', `/api/conversation/${saved.body.conversationId}`);
    expect(loaded.body.conversation.title).toBe('Before the outage');
  });
});
