import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase } from '../helpers/databases.js';
import { makeFolder } from '../helpers/fixture-folders.js';
import { sandboxAvailable } from '../helpers/sandbox.js';
import { request } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// Terminal processes as an operator sees them: the service as its own process, stopped by
// SIGTERM or killed with -9, must leave no shell or job behind; without a working sandbox,
// commands are refused unless SANDBOX=none is chosen.

function processesMatching(pattern: string): number {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').length;
  } catch {
    return 0;
  }
}

async function withService(env: Record<string, string>, body: (service: ChildService) => Promise<void>): Promise<void> {
  const database = await createTestDatabase('sqlite');
  let service: ChildService | undefined;
  try {
    service = await spawnService({ DATABASE_URL: database.url, ...env });
    await body(service);
  } finally {
    service?.child.kill('SIGKILL');
    await database.drop();
  }
}

/** A terminal in a fresh workspace running `sleep <marker>…` in the foreground and as two jobs. */
async function startSleepers(url: string, workspacePath: string, marker: string): Promise<void> {
  expect((await request(url, 'POST', '/api/workspaces/add', { json: { name: 'procs', path: workspacePath } })).status).toBe(200);
  const terminalId = (await request(url, 'POST', '/api/terminals', { json: {} })).body.terminalId as string;
  const execute = (command: string, waitForCompletion = true) =>
    request(url, 'POST', `/api/terminals/${terminalId}/execute`, { json: { command, waitForCompletion } });
  expect((await execute(`sleep 1${marker} & sleep 2${marker} &`)).body.exitCode).toBe(0);
  expect((await execute(`sleep 3${marker}`, false)).body.status).toBe('busy');
  // `busy` answers once the line is written to the shell, which forks the foreground sleep a
  // moment later: wait for all three instead of racing the fork.
  await waitFor(() => (processesMatching(`sleep [123]${marker}`) === 3 ? true : undefined), 3000, 'the three sleeps to start');
}

describe('terminal processes', () => {
  for (const sandbox of ['bwrap', 'none'] as const) {
    it.skipIf(sandbox === 'bwrap' && !sandboxAvailable)(`leave nothing behind after SIGTERM (SANDBOX=${sandbox})`, async () => {
      using workspace = makeFolder();
      const marker = `${process.pid}${sandbox === 'bwrap' ? 1 : 2}${Date.now() % 10000}`;
      await withService({ ENABLE_SYSTEM_COMMANDS: 'true', SANDBOX: sandbox }, async ({ url, child, exit }) => {
        await startSleepers(url, workspace.path, marker);
        child.kill('SIGTERM');
        expect((await exit).code).toBe(0);
        await waitFor(() => (processesMatching(`sleep [123]${marker}`) === 0 ? true : undefined), 3000, 'the jobs to end');
      });
    });
  }

  it.skipIf(!sandboxAvailable)('leave nothing behind when the service is killed with -9 (bubblewrap dies with its parent)', async () => {
    using workspace = makeFolder();
    const marker = `${process.pid}3${Date.now() % 10000}`;
    await withService({ ENABLE_SYSTEM_COMMANDS: 'true', SANDBOX: 'bwrap' }, async ({ url, child, exit }) => {
      await startSleepers(url, workspace.path, marker);
      child.kill('SIGKILL');
      expect((await exit).signal).toBe('SIGKILL');
      await waitFor(() => (processesMatching(`sleep [123]${marker}`) === 0 ? true : undefined), 3000, 'the sandbox to end');
    });
  });
});

describe('without a working sandbox', () => {
  it('refuses terminals with a message naming the fix, and /api/status says so', async () => {
    using workspace = makeFolder();
    // A PATH without bubblewrap stands for a machine that does not have it.
    await withService({ ENABLE_SYSTEM_COMMANDS: 'true', SANDBOX: 'auto', PATH: '/nonexistent' }, async ({ url }) => {
      expect((await request(url, 'GET', '/api/status')).body).toMatchObject({ sandbox: 'unavailable', systemCommands: true });
      await request(url, 'POST', '/api/workspaces/add', { json: { name: 'nosandbox', path: workspace.path } });
      const res = await request(url, 'POST', '/api/terminals', { json: {} });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('SECURITY_VIOLATION');
      expect(res.body.error.message).toMatch(/bubblewrap/);
      expect(res.body.error.message).toMatch(/SANDBOX=none/);
    });
  });

  it('runs unsandboxed only when SANDBOX=none is explicit', async () => {
    using workspace = makeFolder();
    await withService({ ENABLE_SYSTEM_COMMANDS: 'true', SANDBOX: 'none' }, async ({ url }) => {
      expect((await request(url, 'GET', '/api/status')).body.sandbox).toBe('none');
      await request(url, 'POST', '/api/workspaces/add', { json: { name: 'unsandboxed', path: workspace.path } });
      const terminalId = (await request(url, 'POST', '/api/terminals', { json: {} })).body.terminalId as string;
      const res = await request(url, 'POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'cat /proc/1/comm' } });
      // Reading /proc is reading outside the workspaces: high, held for confirmation.
      expect(res.status).toBe(202);
      const ran = await request(url, 'POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'echo unsandboxed' } });
      expect(ran.body.output).toBe('unsandboxed');
    });
  });
});
