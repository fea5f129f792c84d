import { dirname, join } from 'node:path';
import type { Config } from '../config/load-config.js';
import { sqliteFilePath } from '../db/create-db.js';

/**
 * The service's own files that commands must not read even though the root is visible: the
 * SQLite folder (every user's conversations and the audit log) and the `.env` file (its keys).
 */
export function serviceFiles(config: Config): string[] {
  const files = [join(process.cwd(), '.env')];
  if (config.DATABASE_URL.startsWith('file:')) files.push(dirname(sqliteFilePath(config.DATABASE_URL)));
  return files;
}
