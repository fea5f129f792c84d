import { spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase } from '../helpers/databases.js';
import { request } from '../helpers/test-service.js';

// Start-up and shutdown as an operator sees them.

describe('start-up', () => {
  it('a bad configuration value stops the start with one line naming the variable', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: 'eighty', OPENAI_API_KEY: 'sk-should-not-leak' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual(['Invalid configuration: PORT must be a whole number from 0 to 65535 (got "eighty")']);
  });

  it('a secret is never echoed in a configuration error', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, DATABASE_URL: 'mysql://user:hunter2@db/x' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^Invalid configuration: DATABASE_URL must start with file:/);
    expect(result.stderr).not.toContain('hunter2');
  });
});

describe('graceful shutdown', () => {
  it('on SIGTERM stops accepting, finishes the request in flight, and exits 0', async () => {
    const database = await createTestDatabase('sqlite');
    let service: ChildService | undefined;
    try {
      service = await spawnService({ DATABASE_URL: database.url });
      const { child, url } = service;
      // A request whose body is still arriving is in flight when the signal lands.
      const body = JSON.stringify({ title: 'Saved during shutdown' });
      const inFlight = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(
          `${url}/api/conversation/save`,
          { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(body.length) } },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => {
              resolve({ status: res.statusCode ?? 0, text });
            });
          },
        );
        req.on('error', reject);
        req.write(body.slice(0, 5));
        setTimeout(() => {
          child.kill('SIGTERM');
          setTimeout(() => req.end(body.slice(5)), 500);
        }, 200);
      });
      const finished = await inFlight;
      expect(finished.status).toBe(200);
      expect(JSON.parse(finished.text)).toMatchObject({ success: true });

      const started = Date.now();
      const exit = await service.exit;
      expect(exit.code).toBe(0);
      expect(Date.now() - started).toBeLessThan(3000);
      await expect(request(service.url, 'GET', '/api/status')).rejects.toThrow();
      expect(service.lines.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
    } finally {
      service?.child.kill('SIGKILL'); // only if a failed assertion left it running
      await database.drop();
    }
  });
});
