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
export function serviceFiles(config: Config): ServiceFiles {
  return {
    file: join(process.cwd(), '.env'),
    directory: config.DATABASE_URL.startsWith('file:') ? dirname(sqliteFilePath(config.DATABASE_URL)) : undefined,
  };
}
