import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeOnDatabasesWithSandbox } from '../helpers/sandbox.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// CONTRACT §5's audit log: every command decision recorded before the command starts, newest
// first, filtered and paged, the same through both endpoints, never holding a secret. (The
// retention purge is in periodic-jobs.test.ts.)

interface Entry {
  id: string;
  timestamp: string;
  type: string;
  userId: string;
  ip: string;
  details: { action: string } & Record<string, unknown>;
  risk: string | null;
}

describeOnDatabasesWithSandbox('audit log', (kind) => {
  let svc: TestService;
  let workspace: Folder;
  let terminalId: string;

  beforeAll(async () => {
    workspace = makeFolder();
    svc = await startTestService(kind, { ENABLE_SYSTEM_COMMANDS: 'true' });
    await svc.request('POST', '/api/workspaces/add', { json: { name: 'audited', path: workspace.path } });
    terminalId = (await svc.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    workspace[Symbol.dispose]();
  });

  const execute = (command: string) => svc.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command } });
  const commandEntries = async (limit = 100): Promise<Entry[]> =>
    (await svc.request('GET', `/api/audit/log?type=command&limit=${limit}`)).body.entries as Entry[];

  it('records executed, held, confirmed, rejected and refused commands with user, ip and risk, newest first', async () => {
    await execute('echo audited');
    const held = await execute('kill 31337');
    await svc.request('POST', '/api/security/confirm', { json: { commandId: held.body.commandId, confirmed: false } });
    const heldAgain = await execute('kill 31338');
    await svc.request('POST', '/api/security/confirm', { json: { commandId: heldAgain.body.commandId, confirmed: true } });
    await execute('rm -rf /');

    const entries = await commandEntries();
    expect(entries.map((entry) => [entry.details.action, entry.details.command])).toEqual([
      ['refused', 'rm -rf /'],
      ['executed', 'kill 31338'],
      ['confirmed', 'kill 31338'],
      ['held', 'kill 31338'],
      ['rejected', 'kill 31337'],
      ['held', 'kill 31337'],
      ['executed', 'echo audited'],
    ]);
    for (const entry of entries) {
      expect(entry).toMatchObject({ type: 'command', userId: 'local', ip: expect.stringMatching(/127\.0\.0\.1$/) });
    }
    expect(entries.map((entry) => entry.risk)).toEqual(['critical', 'high', 'high', 'high', 'high', 'high', 'low']);
    const timestamps = entries.map((entry) => Date.parse(entry.timestamp));
    expect([...timestamps].sort((a, b) => b - a)).toEqual(timestamps);
  });

  it('has the entry on record while the command is still running', async () => {
    const before = (await commandEntries(1000)).length;
    await svc.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'sleep 0.5', waitForCompletion: false } });
    const during = await commandEntries(1000);
    expect((await svc.request('GET', `/api/terminals/${terminalId}`)).body.status).toBe('busy');
    expect(during.length).toBe(before + 1);
    expect(during[0]?.details).toMatchObject({ action: 'executed', command: 'sleep 0.5' });
    await waitFor(async () => ((await svc.request('GET', `/api/terminals/${terminalId}`)).body.status === 'running' ? true : undefined));
  });

  it('keeps secrets out of every entry', async () => {
    const secret = 'sk-live-0123456789abcdef';
    await execute(`curl -H "Authorization: Bearer ${secret}" "https://api.example.com/v1?apiKey=${secret}"`);
    await execute(`echo token=${secret} password=${secret} https://user:${secret}@example.com`);
    const everything = await svc.request('GET', '/api/audit/log?limit=1000');
    expect(everything.text).not.toContain(secret);
    expect(everything.text).toContain('[redacted]');
    const stored = await svc.service.deps.store.db.auditEntry.findMany();
    expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it('pages and filters; /api/security/audit answers exactly the same', async () => {
    const page = await svc.request('GET', '/api/audit/log?limit=2&offset=1&type=command');
    const all = await commandEntries(1000);
    expect(page.body.entries).toEqual(all.slice(1, 3));
    expect(page.body.total).toBe(all.length);
    const terminalEntries = (await svc.request('GET', '/api/audit/log?type=terminal')).body.entries as Entry[];
    expect(terminalEntries.map((entry) => entry.details.action)).toContain('created');
    expect(terminalEntries.every((entry) => entry.type === 'terminal' && entry.risk === null)).toBe(true);
    const viaSecurity = await svc.request('GET', '/api/security/audit?limit=2&offset=1&type=command');
    expect(viaSecurity.body).toEqual(page.body);
    expect((await svc.request('GET', '/api/audit/log')).body.entries.length).toBeLessThanOrEqual(100);
  });

  it('answers 400 for an unknown type or a limit over 1000', async () => {
    for (const query of ['type=bogus', 'limit=1001', 'limit=0', 'offset=-1', 'limit=ten']) {
      expectEnvelope(await svc.request('GET', `/api/audit/log?${query}`), 400, 'INVALID_REQUEST');
      expectEnvelope(await svc.request('GET', `/api/security/audit?${query}`), 400, 'INVALID_REQUEST');
    }
  });
});
