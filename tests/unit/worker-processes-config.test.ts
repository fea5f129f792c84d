import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config/load-config.js';
import { refusalOf } from '../helpers/config-refusal.js';

// WORKERS (issue 24, item 5): several processes behind one port share their state only through
// the several-instances mode, so more than one is refused without PostgreSQL and Redis.

const shared = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/test',
  REDIS_URL: 'redis://127.0.0.1:6379',
  CLUSTER_SECRET: 'a-cluster-secret-of-enough-length',
};


describe('WORKERS', () => {
  it('is 1 by default, on SQLite as on PostgreSQL', () => {
    expect(loadConfig({}, null).WORKERS).toBe(1);
    expect(loadConfig({ WORKERS: '1' }, null).WORKERS).toBe(1);
    expect(loadConfig({ WORKERS: '' }, null).WORKERS).toBe(1);
  });

  it('takes a number, or auto for one per core, with PostgreSQL and Redis', () => {
    expect(loadConfig({ ...shared, WORKERS: '3' }, null).WORKERS).toBe(3);
    expect(loadConfig({ ...shared, WORKERS: ' AUTO ' }, null).WORKERS).toBe(availableParallelism());
  });

  it('refuses more than one process on SQLite, naming the setting and why', () => {
    expect(refusalOf({ WORKERS: '2' })).toBe(
      'Invalid configuration: WORKERS is 2, and more than one process needs a postgresql:// DATABASE_URL and REDIS_URL (with CLUSTER_SECRET): the processes share streams, rate limits and terminals through them only; DATABASE_URL is SQLite (got "2")',
    );
    // Redis alone does not make SQLite shareable between processes.
    expect(refusalOf({ WORKERS: '2', REDIS_URL: shared.REDIS_URL, CLUSTER_SECRET: shared.CLUSTER_SECRET })).toMatch(/^Invalid configuration: WORKERS is 2, .*; DATABASE_URL is SQLite \(got "2"\)$/);
  });

  it('refuses more than one process without Redis', () => {
    expect(refusalOf({ WORKERS: '4', DATABASE_URL: shared.DATABASE_URL })).toMatch(/^Invalid configuration: WORKERS is 4, .*; REDIS_URL is unset \(got "4"\)$/);
  });

  it('still wants CLUSTER_SECRET with REDIS_URL', () => {
    expect(refusalOf({ WORKERS: '2', DATABASE_URL: shared.DATABASE_URL, REDIS_URL: shared.REDIS_URL })).toBe(
      'Invalid configuration: CLUSTER_SECRET is required with REDIS_URL: it signs the calls instances carry for each other',
    );
  });

  it('refuses what is neither auto nor a whole number from 1 to 256', () => {
    for (const value of ['0', '257', '1.5', '-2', 'two', 'all']) {
      expect(refusalOf({ ...shared, WORKERS: value }), value).toBe(`Invalid configuration: WORKERS must be auto or a whole number from 1 to 256 (got ${JSON.stringify(value)})`);
    }
  });
});
