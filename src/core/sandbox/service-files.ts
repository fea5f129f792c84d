import { dirname, join } from 'node:path';
import type { Config } from '../config/load-config.js';
import { sqliteFilePath } from '../db/create-db.js';

export interface ServiceFiles {
  /** The SQLite database's folder (every user's conversations, the audit log); none on PostgreSQL. */
  directory?: string | undefined;
  /** The `.env` file in the working directory (the service's keys). */
  file: string;
}

/** The service's own files that commands, and programs Git runs, must not read though the root is visible. */
export function serviceFiles(config: Pick<Config, 'DATABASE_URL'>): ServiceFiles {
  return {
    file: join(process.cwd(), '.env'),
    directory: config.DATABASE_URL.startsWith('file:') ? dirname(sqliteFilePath(config.DATABASE_URL)) : undefined,
  };
}

/**
 * The names the service is reached by from outside: ALLOWED_HOSTS (without a port) and
 * OIDC_BASE_URL's host. The egress proxy refuses them (egress-policy.ts).
 */
export function serviceNames(config: Pick<Config, 'ALLOWED_HOSTS' | 'OIDC_BASE_URL'>): string[] {
  const names = config.ALLOWED_HOSTS.map((entry) => entry.replace(/^\[(.*)\](:\d+)?$/, '$1').replace(/^([^:]*):\d+$/, '$1'));
  if (config.OIDC_BASE_URL !== undefined) names.push(new URL(config.OIDC_BASE_URL).hostname.replace(/^\[(.*)\]$/, '$1'));
  return names.filter((name) => name !== '');
}
