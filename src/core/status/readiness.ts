import type { DatabaseKind } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { readMigrations } from '../db/migrate.js';

/** `/readyz`'s two checks: whether the database answers, and whether it has every migration this build ships. */
export interface Readiness {
  ready: boolean;
  checks: {
    database: 'ok' | 'unreachable';
    /** `unknown` while the database cannot be asked. */
    migrations: 'ok' | 'pending' | 'unknown';
  };
  /** Migrations this build ships that the database has not applied (a restored older backup, say). */
  pending?: string[];
}

const READINESS_TIMEOUT_MS = 2000;

/**
 * Readiness for an orchestrator's probe (`/readyz`): one query, on `_prisma_migrations`, answers
 * both checks, since a database that can read its migration records is reachable. Probes that
 * arrive while one runs share it, as `/api/status`'s do.
 */
export class ReadinessCheck {
  readonly #store: Store;
  readonly #expected: readonly string[];
  #checking: Promise<Readiness> | undefined;

  constructor(store: Store, expected: readonly string[] = migrationNames(store.kind)) {
    this.#store = store;
    this.#expected = expected;
  }

  check(): Promise<Readiness> {
    this.#checking ??= this.#run().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  async #run(): Promise<Readiness> {
    const applied = await appliedMigrations(this.#store, READINESS_TIMEOUT_MS);
    if (applied === null) return { ready: false, checks: { database: 'unreachable', migrations: 'unknown' } };
    const pending = this.#expected.filter((name) => !applied.has(name));
    if (pending.length > 0) return { ready: false, checks: { database: 'ok', migrations: 'pending' }, pending };
    return { ready: true, checks: { database: 'ok', migrations: 'ok' } };
  }
}

function migrationNames(kind: DatabaseKind): string[] {
  return readMigrations(kind).map((migration) => migration.name);
}

/** The finished, not rolled back, migrations; null when the database does not answer in time. */
async function appliedMigrations(store: Store, timeoutMs: number): Promise<Set<string> | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => {
      resolve(null);
    }, timeoutMs);
  });
  const query = store.db
    .$queryRaw<{ migration_name: string }[]>`SELECT "migration_name" FROM "_prisma_migrations" WHERE "finished_at" IS NOT NULL AND "rolled_back_at" IS NULL`
    .then((rows) => new Set(rows.map((row) => row.migration_name)))
    .catch(() => null);
  try {
    return await Promise.race([query, late]);
  } finally {
    clearTimeout(timer);
  }
}
