import { createHash } from 'node:crypto';
import { recordAudit } from '../audit/record-audit.js';
import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../logger.js';
import { IssuerKeys } from './issuer-keys.js';
import { localUser, permissionsOf, type User } from './permissions.js';
import { parseRoleClaimPaths } from './roles-from-claims.js';
import { TokenSessions } from './token-sessions.js';
import {
  clockToleranceSeconds,
  tokenRejected,
  verifyAccessToken,
  type RejectionReason,
  type TokenRules,
  type VerifiedToken,
} from './verify-access-token.js';

/** Who a request's caller is: one verifier for every transport (REST, SSE, /trpc, WebSocket upgrades). */
export interface Authenticator {
  readonly enabled: boolean;
  /**
   * The user behind `token` (null: none came), calling from `ip`. Rejects with 401 UNAUTHORIZED
   * for a missing or bad token, 503 SERVICE_UNAVAILABLE while the identity provider is unreachable.
   */
  identify(token: string | null, ip: string): Promise<User>;
  /** Starts fetching what verification needs, without waiting for it. */
  warmUp(): void;
}

/** AUTH_ENABLED=false: every caller is `local` (CONTRACT §5). */
const everyoneIsLocal: Authenticator = {
  enabled: false,
  identify: () => Promise.resolve(localUser),
  warmUp: () => undefined,
};

export function createAuthenticator(config: Config, store: Store, logger: Logger): Authenticator {
  if (!config.AUTH_ENABLED) return everyoneIsLocal;
  const { OIDC_ISSUER_BASE_URL: issuerUrl, OIDC_CLIENT_ID: clientId } = config;
  // load-config refuses AUTH_ENABLED=true without these; this only tells the compiler.
  if (!issuerUrl || !clientId) throw new Error('OIDC_ISSUER_BASE_URL and OIDC_CLIENT_ID are required when AUTH_ENABLED=true');
  const keys = new IssuerKeys({ issuerUrl, timeoutMs: config.OIDC_HTTP_TIMEOUT_MS, logger });
  const rules: TokenRules = {
    audience: config.OIDC_AUDIENCE ?? clientId,
    clientId,
    roleClaimPaths: parseRoleClaimPaths(config.OIDC_ROLES_CLAIM, clientId),
  };
  return new OidcAuthenticator(keys, rules, new TokenSessions(store), new FailureAudit(store, logger));
}

interface Accepted {
  user: User;
  verified: VerifiedToken;
  /** When the token stops being acceptable: its `exp` plus the allowed skew. */
  until: number;
  /** The issuer's key set it was verified under. */
  generation: number;
}

/** How many accepted tokens are remembered; a client keeps its token for minutes, so this is per active client. */
const rememberedAccepted = 10_000;

/**
 * Checks each request's token. A token once accepted is remembered (by its hash) until it expires
 * or the issuer's key set changes, so a client sending the same token again costs a map lookup,
 * not a signature check (0.1 ms for RS256, measured in bench/auth.ts).
 */
class OidcAuthenticator implements Authenticator {
  readonly enabled = true;
  private readonly accepted = new Map<string, Accepted>();

  constructor(
    private readonly keys: IssuerKeys,
    private readonly rules: TokenRules,
    private readonly sessions: TokenSessions,
    private readonly failures: FailureAudit,
  ) {}

  async identify(token: string | null, ip: string): Promise<User> {
    if (token === null || token === '') {
      this.failures.record('missing', null, ip);
      throw tokenRejected('missing');
    }
    const key = createHash('sha256').update(token).digest('base64url');
    const known = this.accepted.get(key);
    if (known && known.until > Date.now() && known.generation === this.keys.generation) {
      await this.sessions.observe(known.verified, token, ip);
      return known.user;
    }
    // The key set this verdict is reached under, read before the awaits: were it read after, a
    // refresh that removed the signing key meanwhile would vouch for the token under the new set.
    const generation = this.keys.generation;
    let verified: VerifiedToken;
    try {
      verified = await verifyAccessToken(token, this.keys, this.rules);
    } catch (error) {
      this.accepted.delete(key);
      if (error instanceof AppError && error.code === 'UNAUTHORIZED') this.failures.record(error.details.reason as RejectionReason, token, ip);
      throw error;
    }
    await this.sessions.observe(verified, token, ip);
    const user: User = {
      id: verified.subject,
      roles: verified.roles,
      permissions: new Set(permissionsOf(verified.roles)),
      tokenExpiresAt: (verified.claims.exp ?? 0) * 1000,
    };
    const until = ((verified.claims.exp ?? 0) + clockToleranceSeconds) * 1000;
    this.remember(key, { user, verified, until, generation });
    return user;
  }

  private remember(key: string, entry: Accepted): void {
    this.accepted.delete(key);
    this.accepted.set(key, entry);
    if (this.accepted.size > rememberedAccepted) {
      const oldest = this.accepted.keys().next().value;
      if (oldest !== undefined) this.accepted.delete(oldest);
    }
  }

  warmUp(): void {
    this.keys.warmUp();
  }
}

/**
 * Audits refused tokens (`auth`, action `failure`, with the reason). At most one entry per client
 * address and reason per minute, counting the refusals it stands for: nobody can fill the audit
 * log by sending junk tokens, however many distinct ones. The user is `anonymous`, since a refused
 * token proves nobody's identity; the subject it claims goes into the details, and the token never.
 */
class FailureAudit {
  private readonly recent = new Map<string, { at: number; suppressed: number }>();
  private static readonly windowMs = 60_000;
  private static readonly maxRemembered = 10_000;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  record(reason: RejectionReason, token: string | null, ip: string): void {
    const now = Date.now();
    const key = `${ip} ${reason}`;
    const last = this.recent.get(key);
    if (last && now - last.at < FailureAudit.windowMs) {
      last.suppressed += 1;
      return;
    }
    this.recent.delete(key);
    this.recent.set(key, { at: now, suppressed: 0 });
    if (this.recent.size > FailureAudit.maxRemembered) {
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
    const claimed = token === null ? null : claimedSubject(token);
    recordAudit(this.store, {
      type: 'auth',
      userId: 'anonymous',
      ip,
      details: {
        action: 'failure',
        reason,
        ...(claimed === null ? {} : { claimedSubject: claimed }),
        // Refusals of this kind from this address in the minute before, not audited one by one.
        ...(last && last.suppressed > 0 ? { suppressedBefore: last.suppressed } : {}),
      },
    }).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'audit of a refused token failed');
    });
  }
}

/** The `sub` a token claims, read without verification: only for the audit of its refusal. */
function claimedSubject(token: string): string | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const { sub } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof sub === 'string' && sub.length > 0 ? sub.slice(0, 255) : null;
  } catch {
    return null;
  }
}
