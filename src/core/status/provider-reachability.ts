import { providerNames, type ProviderName } from '../config/env-schema.js';
import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { activeModelOrSeed, getDefaultModel, type ActiveModel } from '../models/active-model.js';

/** What the last probe found (CONTRACT §3: `/api/status` lists each provider's reachability). */
export interface ReachabilitySnapshot {
  /** null: not probed, since the server does not use it (see inUse). */
  reachable: Record<ProviderName, boolean | null>;
  /** The service default model when the probe ran: its provider decides `degraded`. */
  defaultModel: ActiveModel;
  /** Epoch milliseconds the probe finished. */
  checkedAt: number;
}

export interface ReachabilityOptions {
  /** How old a snapshot may be before a status request starts a new probe behind it. */
  ttlMs?: number;
  /** How long one provider (and the default model's read) may take. */
  timeoutMs?: number;
}

const DEFAULT_TTL_MS = 30_000;
const DEFAULT_TIMEOUT_MS = 2000;

/**
 * Whether a provider answers. Ollama: `GET /api/version`, 2xx (anything else at that address is
 * not an Ollama). A hosted API: `GET {base}/models` without a key, answered at all below 500 (its
 * 401 means it is there). Neither costs anything, and no key is ever sent.
 */
async function answers(provider: ProviderName, baseUrl: string, timeoutMs: number): Promise<boolean> {
  const url = provider === 'ollama' ? `${baseUrl}/api/version` : `${baseUrl}/models`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    await response.body?.cancel();
    return provider === 'ollama' ? response.ok : response.status < 500;
  } catch {
    return false;
  }
}

function within<T>(promise: Promise<T>, timeoutMs: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => {
      resolve(fallback);
    }, timeoutMs);
  });
  return Promise.race([promise.catch(() => fallback), late]).finally(() => {
    clearTimeout(timer);
  });
}

/**
 * The providers' reachability for `/api/status`, probed off the request path: the first status
 * request waits for one probe (bounded by the timeout); later ones get the last snapshot at once,
 * and one older than the TTL starts a new probe behind them. Probes run only while someone asks,
 * and a burst of status requests shares one.
 */
export class ProviderReachability {
  readonly #config: Config;
  readonly #store: Store;
  readonly #ttlMs: number;
  readonly #timeoutMs: number;
  #snapshot: ReachabilitySnapshot | undefined;
  #probing: Promise<ReachabilitySnapshot> | undefined;

  constructor(config: Config, store: Store, options: ReachabilityOptions = {}) {
    this.#config = config;
    this.#store = store;
    this.#ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** The last snapshot; the very first call waits for the first probe. */
  current(): Promise<ReachabilitySnapshot> {
    const snapshot = this.#snapshot;
    if (snapshot === undefined) return this.refresh();
    if (Date.now() - snapshot.checkedAt >= this.#ttlMs) void this.refresh();
    return Promise.resolve(snapshot);
  }

  /** Probes now (or joins the probe under way); never rejects. */
  refresh(): Promise<ReachabilitySnapshot> {
    this.#probing ??= this.#probe().finally(() => {
      this.#probing = undefined;
    });
    return this.#probing;
  }

  async #probe(): Promise<ReachabilitySnapshot> {
    const config = this.#config;
    const timeoutMs = this.#timeoutMs;
    // An unreadable database keeps the last known default: `down` says the rest.
    const knownDefault = this.#snapshot?.defaultModel ?? activeModelOrSeed(null, config);
    const defaultModel = await within(getDefaultModel(this.#store, config), timeoutMs, knownDefault);
    const probed = providerNames.filter((name) => inUse(config, name, defaultModel));
    const answered = await Promise.all(probed.map((name) => answers(name, config.providers[name].baseUrl, timeoutMs)));
    const reachable = Object.fromEntries(providerNames.map((name) => [name, null])) as Record<ProviderName, boolean | null>;
    probed.forEach((name, index) => {
      reachable[name] = answered[index] ?? false;
    });
    this.#snapshot = { reachable, defaultModel, checkedAt: Date.now() };
    return this.#snapshot;
  }
}

/**
 * Whether the server itself uses a provider: Ollama always (local, keyless), a hosted one when the
 * server holds its key or it serves the default model. The others are not contacted at all: an
 * install that never uses a hosted provider does not call it every half minute.
 */
function inUse(config: Config, name: ProviderName, defaultModel: ActiveModel): boolean {
  return name === 'ollama' || config.providers[name].apiKey !== undefined || name === defaultModel.provider;
}
