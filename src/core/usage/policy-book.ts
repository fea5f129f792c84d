import type { Prisma } from '../../generated/sqlite/client.js';
import type { Actor } from '../auth/actor.js';
import { recordAudit } from '../audit/record-audit.js';
import type { ClusterBus } from '../cluster/cluster-bus.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import { effectiveLimits, type EffectiveLimit } from './effective-limits.js';
import { modelAccessFor, type ModelAccess } from './model-access.js';
import { emptyPolicy, policyDocumentSchema, type PolicyDocument } from './policy-document.js';

export const POLICY_KEY = 'policies';
const CHANNEL = 'policies-changed';

export interface StoredPolicy {
  policy: PolicyDocument;
  updatedAt: string | null;
}

/**
 * The policy document (CONTRACT §13), stored in the database and held in memory, so the quota and
 * model checks on every chat read no storage. Every instance applies a change without a restart:
 * the instance that stores it at once, the others when the cluster bus tells them (REDIS_URL) and
 * at the latest after `refreshMs`, when each re-reads the row.
 */
export class PolicyBook {
  private stored: StoredPolicy = { policy: emptyPolicy, updatedAt: null };
  private readAt = 0;
  private reading: Promise<void> | null = null;
  private memoFor: PolicyDocument | null = null;
  private readonly memos = new Map<string, unknown>();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly refreshMs: number,
    private readonly bus?: ClusterBus,
  ) {}

  /** Reads the stored document once before the first request; listens for other instances' changes. */
  async start(): Promise<void> {
    await this.reload();
    await this.bus?.subscribe(CHANNEL, () => {
      void this.reload();
    });
  }

  /** The document as last read; a stale one is read again in the background. */
  current(): PolicyDocument {
    if (Date.now() - this.readAt > this.refreshMs) void this.reload();
    return this.stored.policy;
  }

  /** The document and when it was stored, fresh from the database (what GET /api/policies shows). */
  async read(): Promise<StoredPolicy> {
    await this.reload();
    return this.stored;
  }

  limitsFor(user: Actor['user']): EffectiveLimit[] {
    const policy = this.current();
    // Every chat asks: with no quotas at all (most services) there is nothing to work out.
    if (policy.quotas.length === 0) return [];
    return this.memo(policy, `limits\n${user.id}\n${user.roles.join(',')}`, () => effectiveLimits(policy, user));
  }

  accessFor(user: Actor['user']): ModelAccess {
    const policy = this.current();
    return this.memo(policy, `access\n${user.roles.join(',')}`, () => modelAccessFor(policy, user.roles));
  }

  /** Worked-out answers per document: a new document starts a new memo, so nothing stale survives it. */
  private memo<T>(policy: PolicyDocument, key: string, work: () => T): T {
    if (this.memoFor !== policy || this.memos.size > 10_000) {
      this.memoFor = policy;
      this.memos.clear();
    }
    let value = this.memos.get(key) as T | undefined;
    if (value === undefined) {
      value = work();
      this.memos.set(key, value);
    }
    return value;
  }

  /** Stores a whole (already validated) document, audits the change and tells the other instances. */
  async replace(actor: Actor, policy: PolicyDocument): Promise<StoredPolicy> {
    const before = (await this.read()).policy;
    const value = policy as unknown as Prisma.InputJsonObject;
    const row = await this.store.db.setting.upsert({ where: { key: POLICY_KEY }, create: { key: POLICY_KEY, value }, update: { value } });
    this.stored = { policy, updatedAt: row.updatedAt.toISOString() };
    this.readAt = Date.now();
    await recordAudit(this.store, {
      type: 'role',
      userId: actor.user.id,
      ip: actor.ip,
      details: {
        action: 'policy_changed',
        quotas: { before: before.quotas.length, after: policy.quotas.length },
        modelAccess: { before: before.modelAccess.length, after: policy.modelAccess.length },
      },
    });
    await this.bus?.publish(CHANNEL, 1).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'telling the other instances about a policy change failed; they read it within seconds');
    });
    return this.stored;
  }

  private reload(): Promise<void> {
    this.reading ??= this.readRow().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async readRow(): Promise<void> {
    try {
      const row = await this.store.db.setting.findUnique({ where: { key: POLICY_KEY } });
      this.readAt = Date.now();
      if (row === null) {
        this.stored = { policy: emptyPolicy, updatedAt: null };
        return;
      }
      const parsed = policyDocumentSchema.safeParse(row.value);
      // Only this service writes the row, validated; a row it cannot read keeps the last good one.
      if (parsed.success) this.stored = { policy: parsed.data, updatedAt: row.updatedAt.toISOString() };
      else this.logger.error('the stored policy document is not valid; the last valid one stays in force');
    } catch (error) {
      this.logger.warn({ err: error }, 'reading the policy document failed; the last one read stays in force');
    }
  }
}
