import { describe, expect, it } from 'vitest';
import { databaseOpenFailure, describeDatabase, SettingError, startupFailureLine } from '../../src/core/config/startup-failure.js';

// The one line each setting mistake gets at start-up (issue 22); the real process is driven in
// tests/integration/startup-mistakes.test.ts.

const config = { PORT: 3000, HOST: '127.0.0.1', DATABASE_URL: 'postgresql://app:hunter2@db.internal:6543/assistant' };

const systemError = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(`${code} something`), { code, ...extra });

describe('start-up failure lines', () => {
  it('a listen error names PORT or HOST', () => {
    expect(startupFailureLine(systemError('EADDRINUSE', { syscall: 'listen' }), config)).toMatch(/^Cannot start: PORT 3000 is already in use on 127\.0\.0\.1/);
    expect(startupFailureLine(systemError('EACCES', { syscall: 'listen' }), config)).toMatch(/^Cannot start: PORT 3000 on 127\.0\.0\.1 needs privileges/);
    expect(startupFailureLine(systemError('EADDRNOTAVAIL', { syscall: 'listen' }), config)).toMatch(/^Cannot start: HOST 127\.0\.0\.1 is not an address of this machine/);
  });

  it('a database failure names DATABASE_URL with its host, never its password', () => {
    const lines = [
      databaseOpenFailure(config.DATABASE_URL, systemError('ECONNREFUSED')).message,
      databaseOpenFailure(config.DATABASE_URL, new AggregateError([systemError('ECONNREFUSED')])).message,
      databaseOpenFailure(config.DATABASE_URL, systemError('3D000')).message,
      databaseOpenFailure(config.DATABASE_URL, systemError('28P01')).message,
    ];
    expect(lines[0]).toBe('Cannot start: PostgreSQL at db.internal:6543 cannot be reached (ECONNREFUSED); start PostgreSQL there or correct DATABASE_URL');
    expect(lines[1]).toBe(lines[0]);
    expect(lines[2]).toBe('Cannot start: the database "assistant" does not exist on PostgreSQL at db.internal:6543; create it (createdb assistant) or correct the name in DATABASE_URL');
    expect(lines[3]).toMatch(/^Cannot start: PostgreSQL at db\.internal:6543 refused the sign-in .*correct the user or password in DATABASE_URL$/);
    for (const line of lines) expect(line).not.toContain('hunter2');
  });

  it('a SettingError is reported as it is; an unknown fault gets no line (it keeps its stack)', () => {
    expect(startupFailureLine(new SettingError('DATABASE_URL', 'Cannot start: x'), config)).toBe('Cannot start: x');
    expect(startupFailureLine(new TypeError('undefined is not a function'), config)).toBeUndefined();
  });

  it('describes where a database URL points without its credentials', () => {
    expect(describeDatabase('postgresql://u:p@localhost/x')).toBe('PostgreSQL at localhost:5432');
    expect(describeDatabase('file:/var/lib/assistant/a.db')).toBe('the SQLite file /var/lib/assistant/a.db');
  });
});
