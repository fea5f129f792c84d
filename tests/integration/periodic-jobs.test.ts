import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { initRepository, makeFolder } from '../helpers/fixture-folders.js';
import { startTestService } from '../helpers/test-service.js';

// ENABLE_SCHEDULING's jobs (CONTRACT §1): each runs once at start-up and then on its interval,
// so a restart shows their effect: old audit entries purged, stale held commands expired,
// workspaces' Git state refreshed.

const day = 24 * 60 * 60 * 1000;

describeOnDatabases('periodic jobs', (kind) => {
  it('purge the audit log, expire held commands and refresh workspaces at start-up', async () => {
    using repository = makeFolder();
    initRepository(repository.path);
    await using first = await startTestService(kind, { AUDIT_LOG_RETENTION_DAYS: '7' });
    const { db } = first.service.deps.store;
    expect((await first.request('POST', '/api/workspaces/add', { json: { name: 'repo', path: repository.path } })).body.workspace.status).toBe('clean');
    const [old, recent, stale] = [newId(), newId(), newId()];
    await db.auditEntry.create({ data: { id: old, type: 'workspace', userId: 'u', details: { action: 'old' }, timestamp: new Date(Date.now() - 8 * day) } });
    await db.auditEntry.create({ data: { id: recent, type: 'workspace', userId: 'u', details: { action: 'recent' }, timestamp: new Date(Date.now() - 6 * day) } });
    await db.pendingCommand.create({
      data: { id: stale, userId: 'u', terminalId: newId(), command: 'kill 1', risk: 'high', reasons: [], expiresAt: new Date(Date.now() - 1000) },
    });
    writeFileSync(join(repository.path, 'README.md'), 'changed behind the service\n');
    await first.stop();

    await using second = await startTestService(kind, { AUDIT_LOG_RETENTION_DAYS: '7' }, first.database);
    const store = second.service.deps.store.db;
    const ids = async () => (await store.auditEntry.findMany({ select: { id: true } })).map((row) => row.id);
    await expect.poll(ids).not.toContain(old);
    expect(await ids()).toContain(recent);
    await expect.poll(async () => (await store.pendingCommand.findUnique({ where: { id: stale } }))?.status).toBe('expired');
    await expect.poll(async () => (await second.request('GET', '/api/workspaces')).body.workspaces[0].status).toBe('dirty');
  });

  it('do nothing with ENABLE_SCHEDULING=false', async () => {
    await using first = await startTestService(kind, { AUDIT_LOG_RETENTION_DAYS: '7' });
    const old = newId();
    await first.service.deps.store.db.auditEntry.create({
      data: { id: old, type: 'workspace', userId: 'u', details: { action: 'old' }, timestamp: new Date(Date.now() - 8 * day) },
    });
    await first.stop();
    await using second = await startTestService(kind, { AUDIT_LOG_RETENTION_DAYS: '7', ENABLE_SCHEDULING: 'false' }, first.database);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await second.service.deps.store.db.auditEntry.findUnique({ where: { id: old } })).not.toBeNull();
  });
});
