import type { ProviderName } from '../config/env-schema.js';
import type { AppError } from '../errors/app-error.js';
import { listHostedModelNames, type HostedProvider } from '../providers/hosted-model-lists.js';
import { upstreamError } from '../providers/upstream-error.js';
import { getActiveModel, getDefaultModel, type ActiveModel } from './active-model.js';
import { modelEntry, type ModelEntry } from './model-entry.js';
import { canonicalOllamaName, sameModelName } from './model-name.js';
import type { ModelServices } from './model-services.js';
import { listingTimeoutMs, ollamaClient } from './ollama-client.js';

/**
 * What one provider said: `listed` (it answered with its models), `assumed` (a hosted provider
 * without a server key: only its configured default model, unchecked, usable with a caller's
 * key) or `unreachable`.
 */
export type ProviderListing =
  | { provider: ProviderName; outcome: 'listed' | 'assumed'; entries: ModelEntry[] }
  | { provider: ProviderName; outcome: 'unreachable'; entries: ModelEntry[]; error: AppError };

/** Ollama's installed models (`/api/tags`); failures are the contract's errors. */
export async function listInstalledOllamaModels(services: ModelServices): Promise<string[]> {
  try {
    const { models } = await ollamaClient(services.config, listingTimeoutMs(services.config)).list();
    return models.map((model) => model.name);
  } catch (error) {
    throw upstreamError(error, 'ollama', { operation: 'listing models' });
  }
}

/** Installed models as `available`, then downloads of models not installed yet (or that failed). */
function ollamaEntries(services: ModelServices, installed: readonly string[]): ModelEntry[] {
  const entries = installed.map((name) => modelEntry('ollama', name, 'available'));
  const installedNames = new Set(installed.map(canonicalOllamaName));
  for (const download of services.modelDownloads.list()) {
    if (installedNames.has(canonicalOllamaName(download.modelName))) continue;
    entries.push(
      download.status === 'downloading'
        ? modelEntry('ollama', download.modelName, 'downloading', { progress: download.progress })
        : modelEntry('ollama', download.modelName, 'not_downloaded', download.error ? { error: download.error } : {}),
    );
  }
  return entries;
}

/** Ollama's models with the downloads in progress; unreachable → MODEL_UNAVAILABLE. */
export async function listOllamaModels(services: ModelServices): Promise<ModelEntry[]> {
  return ollamaEntries(services, await listInstalledOllamaModels(services));
}

/** A hosted provider's models as offered to `apiKey`; every failure is the contract's error. */
export async function listHostedModels(services: ModelServices, provider: HostedProvider, apiKey: string): Promise<ModelEntry[]> {
  const names = await listHostedModelNames(provider, services.config.providers[provider], apiKey, listingTimeoutMs(services.config));
  return names.map((name) => modelEntry(provider, name, 'available'));
}

/**
 * A hosted model the server has no key for: not `available` (a chat without apiKey is refused),
 * but listed, since a caller that sends its own key can use it.
 */
function needsApiKey(provider: ProviderName, name: string): ModelEntry {
  return modelEntry(provider, name, 'unavailable', { reason: 'needs apiKey' });
}

async function providerListing(services: ModelServices, provider: ProviderName): Promise<ProviderListing> {
  const { apiKey, defaultModel } = services.config.providers[provider];
  try {
    if (provider === 'ollama') return { provider, outcome: 'listed', entries: await listOllamaModels(services) };
    if (apiKey === undefined) return { provider, outcome: 'assumed', entries: [needsApiKey(provider, defaultModel)] };
    return { provider, outcome: 'listed', entries: await listHostedModels(services, provider, apiKey) };
  } catch (error) {
    const appError = upstreamError(error, provider, { operation: 'listing models' });
    services.logger.warn({ provider, code: appError.code, reason: appError.message }, 'model provider left out of the model list');
    // Downloads are this instance's own knowledge and stay visible while Ollama is away.
    const entries = provider === 'ollama' ? ollamaEntries(services, []) : [];
    return { provider, outcome: 'unreachable', entries, error: appError };
  }
}

/** Every provider asked in parallel, each within the listing timeout. */
export async function listProviders(services: ModelServices): Promise<ProviderListing[]> {
  return Promise.all((['ollama', 'openai', 'anthropic'] as const).map((provider) => providerListing(services, provider)));
}

/**
 * The active model's entry when no provider listed it: `unavailable` when its provider could not
 * be asked or answered without it (a hosted model it does not offer), `not_downloaded` for an
 * Ollama model that is not installed, `needs apiKey` when nothing could be checked (no server key).
 */
function activeModelEntry(listing: ProviderListing, active: ActiveModel): ModelEntry {
  switch (listing.outcome) {
    case 'unreachable':
      return modelEntry(active.provider, active.name, 'unavailable');
    case 'assumed':
      return needsApiKey(active.provider, active.name);
    case 'listed':
      return modelEntry(active.provider, active.name, active.provider === 'ollama' ? 'not_downloaded' : 'unavailable');
  }
}

/**
 * `GET /api/models`: every provider's models; an unreachable provider is left out, but the
 * active model is always listed (CONTRACT §3): the caller's, or without one the service default.
 */
export async function listModels(services: ModelServices, userId?: string): Promise<ModelEntry[]> {
  const active = userId === undefined ? getDefaultModel(services.store, services.config) : getActiveModel(services.store, services.config, userId);
  const [listings, shown] = await Promise.all([listProviders(services), active]);
  return withActiveModel(listings, shown);
}

function withActiveModel(listings: ProviderListing[], active: ActiveModel): ModelEntry[] {
  return listings.flatMap((listing) => {
    if (listing.provider !== active.provider) return listing.entries;
    const listed = listing.entries.some((entry) => sameModelName(entry.provider, entry.name, active.name));
    return listed ? listing.entries : [activeModelEntry(listing, active), ...listing.entries];
  });
}
