import { createHash } from 'node:crypto';
import { recordAudit } from '../audit/record-audit.js';
import type { Store } from '../db/store.js';
import type { VerifiedToken } from './verify-access-token.js';

/** How many token ids one instance remembers as already handled; older ones are just handled again (a no-op). */
const rememberedTokens = 10_000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * The `auth` and `role` audit entries a token's first appearance causes (CONTRACT §5): a login
 * when its session (the `sid` claim, else the token's own `jti`) is new, a refresh when a new token
 * arrives in a known session, a `role` entry when the user's roles differ from the last token's.
 * The work runs once per token per instance; the database decides between instances, so two
 * instances seeing the same new session write one login.
 */
export class TokenSessions {
  private readonly handled = new Set<string>();
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(private readonly store: Store) {}

  observe(token: VerifiedToken, raw: string, ip: string): Promise<void> {
    const { jti } = token.claims;
    const tokenId = sha256(typeof jti === 'string' && jti.length > 0 ? `jti:${jti}` : `token:${raw}`);
    if (this.handled.has(tokenId)) return Promise.resolve();
    let running = this.inFlight.get(tokenId);
    if (!running) {
      running = this.record(token, tokenId, ip).then(() => {
        this.remember(tokenId);
      });
      const settled = running.finally(() => this.inFlight.delete(tokenId));
      settled.catch(() => undefined);
      this.inFlight.set(tokenId, running);
    }
    return running;
  }

  private remember(tokenId: string): void {
    this.handled.add(tokenId);
    if (this.handled.size > rememberedTokens) {
      const oldest = this.handled.values().next().value;
      if (oldest !== undefined) this.handled.delete(oldest);
    }
  }

  private async record(token: VerifiedToken, tokenId: string, ip: string): Promise<void> {
    const { sid, exp } = token.claims;
    const userId = token.subject;
    // The session handle itself is never stored: only a hash names the row.
    const sessionId = typeof sid === 'string' && sid.length > 0 ? sha256(`sid:${sid}`) : tokenId;
    const expiresAt = new Date((exp ?? 0) * 1000);
    const created = await this.store.db.authSession
      .create({ data: { id: sessionId, userId, lastTokenId: tokenId, expiresAt } })
      .then(() => true, ignoreDuplicate);
    if (created) {
      await recordAudit(this.store, { type: 'auth', userId, ip, details: { action: 'login', roles: token.roles } });
    } else {
      // Conditional, so of several instances only the first to see the new token records it.
      const { count } = await this.store.db.authSession.updateMany({
        where: { id: sessionId, lastTokenId: { not: tokenId } },
        data: { lastTokenId: tokenId, expiresAt },
      });
      if (count > 0) await recordAudit(this.store, { type: 'auth', userId, ip, details: { action: 'refresh' } });
    }
    await this.compareRoles(token, ip);
  }

  private async compareRoles(token: VerifiedToken, ip: string): Promise<void> {
    const userId = token.subject;
    const roles = token.roles.join(',');
    const known = await this.store.db.authUser.findUnique({ where: { id: userId } });
    if (!known) {
      const created = await this.store.db.authUser.create({ data: { id: userId, roles } }).then(() => true, ignoreDuplicate);
      // Another instance recorded this user a moment ago, perhaps with other roles: compare again.
      if (!created) await this.compareRoles(token, ip);
      return;
    }
    if (known.roles === roles) return;
    const { count } = await this.store.db.authUser.updateMany({ where: { id: userId, roles: known.roles }, data: { roles } });
    if (count === 0) return;
    await recordAudit(this.store, {
      type: 'role',
      userId,
      ip,
      details: { action: 'changed', from: splitRoles(known.roles), to: token.roles },
    });
  }
}

function splitRoles(text: string): string[] {
  return text === '' ? [] : text.split(',');
}

/** A unique-key violation means another request made the row first; anything else is a real failure. */
function ignoreDuplicate(error: unknown): false {
  if (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2002') return false;
  throw error;
}
