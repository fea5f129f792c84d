import type { PolicyBook } from '../core/usage/policy-book.js';
import type { UsageMeter } from '../core/usage/usage-meter.js';
import type { Authenticator } from '../core/auth/authenticator.js';
import type { User } from '../core/auth/permissions.js';
import type { Cluster } from '../core/cluster/cluster.js';
import type { RedisConnection } from '../core/redis/redis-connection.js';
import type { UserEvents } from '../core/events/user-events.js';
import type { RateLimits } from '../core/rate-limits/rate-limits.js';
import type { Config } from '../core/config/load-config.js';
import type { Store } from '../core/db/store.js';
import type { Logger } from '../core/logger.js';
import type { ModelDownloads } from '../core/models/model-downloads.js';
import type { ServiceMetrics } from '../core/metrics/service-metrics.js';
import type { SandboxState } from '../core/sandbox/sandbox-state.js';
import type { StreamRegistry } from '../core/streams/stream-registry.js';
import type { TerminalManager } from '../core/terminals/terminal-manager.js';
import type { EgressPolicy } from '../core/sandbox/egress-policy.js';
import type { WorkspaceFiles } from '../core/workspaces/workspace-files.js';
import type { CommandJudge } from '../core/security/command-judge.js';
import type { IdempotencyStore } from '../core/idempotency/idempotency-store.js';
import type { ChatAttempt } from '../core/chat/chat-attempt.js';
import type { CommandDecisions } from '../core/commands/command-decisions.js';
import type { ProviderReachability } from '../core/status/provider-reachability.js';
import { lazyChildLogger } from './lazy-logger.js';

/** What every transport shares: built once at start-up. */
export interface AppDeps {
  config: Config;
  store: Store;
  logger: Logger;
  /** The shared Redis of REDIS_URL (rate-limit counters), when configured. */
  redis?: RedisConnection;
  /** With REDIS_URL: the other instances, and how to reach what they hold (CONTRACT §9b). */
  cluster?: Cluster;
  /** CONTRACT §9's counters, null while RATE_LIMIT_ENABLED=false. */
  rateLimits: RateLimits | null;
  /** Live pushes to each user's sockets (CONTRACT §8's `context_update` frames). */
  events: UserEvents;
  /** Who calls: the OIDC token verifier, or everyone is `local` with AUTH_ENABLED=false. */
  auth: Authenticator;
  /** This instance's live terminal sessions. */
  terminals: TerminalManager;
  /** The sandbox terminal shells run in, decided at start-up. */
  sandbox: SandboxState;
  /** The model's file tools, run by each workspace's confined helper. */
  files: WorkspaceFiles;
  /** The risk analysis, on a thread of its own. */
  judge: CommandJudge;
  /** What commands may reach through their terminal's egress proxy (SANDBOX_NETWORK=proxy). */
  egressPolicy?: EgressPolicy;
  /** Where this instance's paused agents wait for the decision on their held commands. */
  decisions: CommandDecisions;
  /** This instance's Ollama pulls and their progress. */
  modelDownloads: ModelDownloads;
  /** This instance's chat generations, running and recently finished (resumable streams). */
  streams: StreamRegistry;
  /** Epoch milliseconds of the start, for `uptime`. */
  startedAt: number;
  /** This instance's Prometheus metrics (`GET /metrics`). */
  metrics: ServiceMetrics;
  /** Chat requests' Idempotency-Keys (CONTRACT §12): in Redis with REDIS_URL, else in memory. */
  idempotency: IdempotencyStore;
  /** Which model providers answer, probed behind `/api/status` (CONTRACT §3). */
  providerReachability: ProviderReachability;
  /** CONTRACT §13's policy document: quotas and model access. */
  policies: PolicyBook;
  /** Quotas checked and usage recorded around every provider call (CONTRACT §13). */
  usage: UsageMeter;
}

/** What one request adds. */
export interface RequestInfo {
  requestId: string;
  ip: string;
  /**
   * The caller, resolved on first need (by a guard, after the rate limit), so public procedures
   * never check a token. Memoised per request; rejects with the 401 or 503 to answer.
   */
  identify: () => Promise<User>;
  /** Carried here by another instance: run here whatever happens (never carried further). */
  carried?: boolean;
  /** The request's Idempotency-Key header, unchecked: the chat procedures check and honour it. */
  idempotencyKey?: string | undefined;
  /** The request's Last-Event-ID header: a streaming chat POST resumes that stream (CONTRACT §12). */
  lastEventId?: string | undefined;
}

/**
 * A procedure's say over the HTTP reply beyond its data (a 503 `down` status, a 202 hold,
 * Retry-After); the REST bridge applies it, typed RPC clients read the data alone.
 */
export interface ResponseControl {
  status?: number;
  headers: Record<string, string>;
}

export interface Context extends AppDeps, RequestInfo {
  logger: Logger;
  response: ResponseControl;
  /** Set by the Idempotency-Key wrapper for the generation it runs (procedures/chat/once-per-key.ts). */
  attempt?: ChatAttempt | undefined;
}

/**
 * Each AppDeps's fields with a place for each request's, copied for every context: a copy of one
 * object with a single spread is one step for V8 (its shape and values copied whole), where
 * spreading the dependencies and the request's fields into a new literal added them one by one
 * (about 8 µs against 3 µs, measured alone; BENCHMARKS.md, issue 24). The
 * dependencies are built once at start-up and never assigned to, so their copy stays theirs.
 */
const templates = new WeakMap<AppDeps, Context>();

function templateFor(deps: AppDeps): Context {
  let template = templates.get(deps);
  if (template === undefined) {
    // Every field of RequestInfo (a new one fails to compile here): createContextInner copies each.
    const request = {
      requestId: '',
      ip: '',
      identify: () => Promise.reject(new Error('no caller on a template context')),
      carried: undefined,
      idempotencyKey: undefined,
      lastEventId: undefined,
    } satisfies Record<keyof RequestInfo, unknown>;
    template = { ...deps, ...request, response: { headers: {} } };
    templates.set(deps, template);
  }
  return template;
}

/** The context without any transport, so procedures can be called from tests and other bridges. */
export function createContextInner(deps: AppDeps, request: RequestInfo): Context {
  const ctx = { ...templateFor(deps) };
  ctx.requestId = request.requestId;
  ctx.ip = request.ip;
  ctx.identify = request.identify;
  ctx.carried = request.carried;
  ctx.idempotencyKey = request.idempotencyKey;
  ctx.lastEventId = request.lastEventId;
  // Made on first use (lazy-logger.ts).
  ctx.logger = lazyChildLogger(deps.logger, { requestId: request.requestId });
  ctx.response = { headers: {} };
  return ctx;
}
