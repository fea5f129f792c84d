import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdminUrl, postgresAvailable } from '../helpers/databases.js';

// The configuration mistakes a person makes first (issue 22): each stops the start with one line
// on stderr naming the variable to change, and no stack trace; an unreachable Redis is a warning
// naming REDIS_URL and the service starts. Run as a real process, as a person would see it.

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the service until it exits by itself (or 60 s pass). */
async function runService(env: Record<string, string>): Promise<Outcome> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_ENABLED: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Starts the service and waits for the stdout line from which `listening` reads the URL. */
async function startUntilListening(env: Record<string, string>, listening: (line: string) => string | undefined) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_ENABLED: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = once(child, 'exit');
  const url = await new Promise<string>((resolve, reject) => {
    // Generous: a start through tsx on a busy two-core machine has taken 20 s.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no listening line in 60 s; stderr: ${stderr}`));
    }, 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const found = listening(line);
      if (found !== undefined) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    void exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited before listening; stderr: ${stderr}`));
    });
  });
  return {
    url,
    lines: () => lines,
    stop: async () => {
      child.kill('SIGTERM');
      await exit;
    },
  };
}

/** One line on stderr, naming `variable`, no stack anywhere, a failed exit. */
function expectOneLine(outcome: Outcome, variable: string): string {
  expect(outcome.code).toBe(1);
  const lines = outcome.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  const line = lines[0] ?? '';
  expect(line).toContain(variable);
  for (const text of [outcome.stdout, outcome.stderr]) {
    expect(text).not.toMatch(/^\s+at /m);
    expect(text).not.toContain('"stack"');
  }
  return line;
}

// Each case starts a process through tsx, which takes many seconds on a busy two-core machine.
describe('configuration mistakes at start-up', { timeout: 90_000 }, () => {
  let folder: string;
  let occupied: Server;
  let occupiedPort: number;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'startup-mistakes-'));
    occupied = createServer();
    occupied.listen(0, '127.0.0.1');
    await once(occupied, 'listening');
    occupiedPort = (occupied.address() as { port: number }).port;
  });

  afterAll(() => {
    occupied.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('a port in use names PORT', async () => {
    const outcome = await runService({ PORT: String(occupiedPort), DATABASE_URL: `file:${join(folder, 'port.db')}` });
    const line = expectOneLine(outcome, 'PORT');
    expect(line).toBe(`Cannot start: PORT ${occupiedPort} is already in use on 127.0.0.1 (another program, or this service running already); stop it or set PORT to a free port`);
  });

  it('an unreachable PostgreSQL names DATABASE_URL, without its password', async () => {
    // Port 1 on the loopback: refused at once.
    const outcome = await runService({ PORT: '0', DATABASE_URL: 'postgresql://someone:hunter2@127.0.0.1:1/assistant' });
    const line = expectOneLine(outcome, 'DATABASE_URL');
    expect(line).toBe('Cannot start: PostgreSQL at 127.0.0.1:1 cannot be reached (ECONNREFUSED); start PostgreSQL there or correct DATABASE_URL');
    expect(outcome.stdout + outcome.stderr).not.toContain('hunter2');
  });

  it.skipIf(!postgresAvailable)('a database that does not exist names DATABASE_URL and the database', async () => {
    const url = new URL(postgresAdminUrl);
    url.pathname = '/no_such_database_for_assistant';
    const outcome = await runService({ PORT: '0', DATABASE_URL: url.toString() });
    const line = expectOneLine(outcome, 'DATABASE_URL');
    expect(line).toMatch(/^Cannot start: the database "no_such_database_for_assistant" does not exist on PostgreSQL at 127\.0\.0\.1:5432; create it \(createdb no_such_database_for_assistant\)/);
  });

  it('a SQLite file that cannot be made names DATABASE_URL', async () => {
    // A folder cannot be made below a file, even by root.
    const blocker = join(folder, 'a-file');
    writeFileSync(blocker, '');
    const outcome = await runService({ PORT: '0', DATABASE_URL: `file:${blocker}/data/assistant.db` });
    const line = expectOneLine(outcome, 'DATABASE_URL');
    expect(line).toBe(`Cannot start: the SQLite file ${blocker}/data/assistant.db cannot be opened (ENOTDIR: not a directory, mkdir '${blocker}/data'); check that its folder exists or can be made and is writable, or correct DATABASE_URL`);
  });

  it('an unreachable Redis is a warning naming REDIS_URL, and the service starts', async () => {
    const service = await startUntilListening(
      {
        DATABASE_URL: `file:${join(folder, 'redis.db')}`,
        REDIS_URL: 'redis://:secret-password@127.0.0.1:1',
        CLUSTER_SECRET: 'a-cluster-secret-of-enough-length',
      },
      (line) => /^listening on http:/.test((JSON.parse(line) as { msg?: string }).msg ?? '') ? (JSON.parse(line) as { url: string }).url : undefined,
    );
    try {
      expect((await fetch(`${service.url}/api/status`)).status).toBe(200);
      const entries = service.lines().map((line) => JSON.parse(line) as { level: number; msg: string; reason?: string });
      const warnings = entries.filter((entry) => entry.msg.includes('REDIS_URL'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 40, reason: 'ECONNREFUSED' });
      expect(warnings[0]?.msg).toMatch(/^REDIS_URL: Redis at 127\.0\.0\.1:1 cannot be reached; the service starts without it/);
      // Said before the service says it listens, not at the first request.
      expect(entries.findIndex((entry) => entry.msg.includes('REDIS_URL'))).toBeLessThan(entries.findIndex((entry) => entry.msg.startsWith('listening on ')));
      expect(service.lines().join('\n')).not.toContain('secret-password');
    } finally {
      await service.stop();
    }
  });

  it('LOG_FORMAT=pretty writes readable lines, the start-up one with the URL', async () => {
    const service = await startUntilListening(
      { DATABASE_URL: `file:${join(folder, 'pretty.db')}`, LOG_FORMAT: 'pretty' },
      (line) => /^\d\d:\d\d:\d\d\.\d{3} INFO {2}listening on (http:\/\/127\.0\.0\.1:\d+) url=http:\/\/127\.0\.0\.1:\d+ database=sqlite$/.exec(line)?.[1],
    );
    try {
      expect((await fetch(`${service.url}/api/status`)).status).toBe(200);
      expect(service.lines().filter((line) => line.startsWith('{'))).toEqual([]);
    } finally {
      await service.stop();
    }
  });
});
