import { providerNames, type ProviderName } from '../config/env-schema.js';
import type { Config, DatabaseKind } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import type { RedisConnection } from '../redis/redis-connection.js';
import type { NetworkMode } from '../sandbox/bwrap-arguments.js';
import type { LimitsMode, SandboxMode, SandboxState } from '../sandbox/sandbox-state.js';
import { providerSettingNames } from '../providers/provider-settings.js';
import { serviceVersion } from '../version.js';
import type { ProviderReachability } from './provider-reachability.js';

export interface ServiceStatus {
  status: 'ok' | 'degraded' | 'down';
  assistant: boolean;
  timestamp: string;
  uptime: number;
  version: string;
  database: DatabaseKind;
  /**
   * `reachable`: the last probe's answer (provider-reachability.ts), at most about 30 s old; null
   * for a hosted provider the server does not use (no server key, not the default model's).
   */
  providers: Record<ProviderName, { configured: boolean; defaultModel: string; reachable: boolean | null }>;
  /** The service default model; its provider being unreachable makes the status degraded. */
  serviceDefaultModel: { name: string; provider: ProviderName };
  /** For a person: why the status is not `ok`, naming the setting to look at. Never an address. */
  problems: string[];
  /** The sandbox terminal shells run in (CONTRACT §4); `unavailable` means commands are refused. */
  sandbox: SandboxMode;
  /** How commands reach the network (CONTRACT §11). */
  sandboxNetwork: NetworkMode;
  /** A cgroup per terminal, or rlimits per process where no cgroup can be made (CONTRACT §11). */
  limits: LimitsMode;
  /** Why commands are refused, when the sandbox is unavailable. */
  sandboxProblem?: string;
  systemCommands: boolean;
  /** REDIS_URL's Redis: `unused` when none is configured; `unreachable` makes the status degraded. */
  redis: 'unused' | 'ok' | 'unreachable';
}

const DATABASE_CHECK_TIMEOUT_MS = 2000;

/**
 * Probes in flight, by store: status requests that arrive while one is under way share its answer
 * (a load balancer's checks, a dashboard polling), so a burst of them costs the database one query,
 * not one each. Every answer comes from a probe that was still running when its request arrived.
 */
const probing = new WeakMap<Store, Promise<boolean>>();

function databaseReachable(store: Store): Promise<boolean> {
  let probe = probing.get(store);
  if (!probe) {
    probe = probeDatabase(store).finally(() => probing.delete(store));
    probing.set(store, probe);
  }
  return probe;
}

/** Whether the database answers a trivial query in time; a health check must never hang. */
async function probeDatabase(store: Store): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, DATABASE_CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([store.reads.ping().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * CONTRACT §3: `down` when the database is unreachable, `degraded` when the service default
 * model's provider or the configured Redis is, else `ok`. The database is asked on each call
 * (shared among concurrent calls); the providers' reachability comes from the last background
 * probe, so a status request never waits on a provider after the first.
 */
export async function getServiceStatus(
  store: Store,
  config: Config,
  startedAt: number,
  sandbox: SandboxState,
  redis: RedisConnection | undefined,
  providerReachability: ProviderReachability,
): Promise<ServiceStatus> {
  const [reachable, probed] = await Promise.all([databaseReachable(store), providerReachability.current()]);
  const redisState = redis === undefined ? 'unused' : redis.ready() ? 'ok' : 'unreachable';
  const providers = Object.fromEntries(
    providerNames.map((name) => {
      const settings = config.providers[name];
      // Ollama runs locally and needs no key; the hosted ones count as configured when the
      // server holds a key (callers may still bring their own).
      const configured = name === 'ollama' || settings.apiKey !== undefined;
      return [name, { configured, defaultModel: settings.defaultModel, reachable: probed.reachable[name] }];
    }),
  ) as ServiceStatus['providers'];
  const defaultModel = probed.defaultModel;
  const problems: string[] = [];
  if (!reachable) problems.push('the database is unreachable (DATABASE_URL)');
  if (probed.reachable[defaultModel.provider] === false) {
    problems.push(
      `${defaultModel.provider}, the provider of the service default model ${defaultModel.name}, is unreachable (${providerSettingNames[defaultModel.provider].address})`,
    );
  }
  if (redisState === 'unreachable') problems.push('Redis is unreachable (REDIS_URL)');
  return {
    status: !reachable ? 'down' : problems.length > 0 ? 'degraded' : 'ok',
    assistant: true,
    timestamp: new Date().toISOString(),
    uptime: Math.floor((Date.now() - startedAt) / 1000),
    version: serviceVersion,
    database: store.kind,
    providers,
    serviceDefaultModel: { name: defaultModel.name, provider: defaultModel.provider },
    problems,
    sandbox: sandbox.mode,
    sandboxNetwork: sandbox.network,
    limits: sandbox.limits,
    ...(sandbox.problem === undefined ? {} : { sandboxProblem: sandbox.problem }),
    systemCommands: config.ENABLE_SYSTEM_COMMANDS,
    redis: redisState,
  };
}
