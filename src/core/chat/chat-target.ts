import { providerNames, type ProviderName } from '../config/env-schema.js';
import type { Config } from '../config/load-config.js';
import { AppError } from '../errors/app-error.js';
import type { ActiveModel } from '../models/active-model.js';
import { checkOllamaRegistry } from '../models/ollama-registry.js';

/** Which family of chat paths a request came through; it decides the provider and key rules (CONTRACT §1, §6). */
export type ChatRoute =
  | { kind: 'plain' }
  | { kind: 'unified'; provider: ProviderName }
  | { kind: 'provider'; provider: ProviderName };

export interface ChatTarget {
  provider: ProviderName;
  model: string;
  /** The key sent upstream; undefined for Ollama. Never logged, stored or echoed. */
  apiKey: string | undefined;
}

const hostedProviders: ReadonlySet<ProviderName> = new Set(['openai', 'anthropic']);

/** `<provider>/<name>` names both; anything else (including other slashes) is a bare name. */
function splitModel(model: string): { provider?: ProviderName; name: string } {
  const slash = model.indexOf('/');
  const prefix = slash > 0 ? model.slice(0, slash) : '';
  if (providerNames.includes(prefix as ProviderName)) return { provider: prefix as ProviderName, name: model.slice(slash + 1) };
  return { name: model };
}

function chooseModel(route: ChatRoute, model: string | undefined, active: ActiveModel, config: Config) {
  const routeProvider = route.kind === 'plain' ? undefined : route.provider;
  if (model === undefined) {
    if (routeProvider === undefined || routeProvider === active.provider) return { provider: active.provider, name: active.name };
    return { provider: routeProvider, name: config.providers[routeProvider].defaultModel };
  }
  const named = splitModel(model);
  if (named.provider && routeProvider && named.provider !== routeProvider) {
    throw AppError.invalid(`model ${model} belongs to ${named.provider}, not ${routeProvider}`, { model });
  }
  if (named.name.trim() === '') throw AppError.invalid('model must name a model', { model });
  return { provider: named.provider ?? routeProvider ?? active.provider, name: named.name };
}

/**
 * The provider and model a chat request names (CONTRACT §6): `<provider>/<name>`, a bare name of
 * the path's provider (or the active model's), or nothing: the active model, or on a provider's
 * path its default model when the active model is another provider's.
 */
export function chooseChatModel(
  config: Config,
  route: ChatRoute,
  model: string | undefined,
  active: ActiveModel,
): { provider: ProviderName; model: string } {
  const { provider, name } = chooseModel(route, model, active, config);
  // Whatever named it (the request, the active model, a default), Ollama must not be sent to
  // another registry (a chat with a model it lacks can make it pull).
  if (provider === 'ollama') checkOllamaRegistry(name, config.OLLAMA_ALLOWED_REGISTRIES);
  return { provider, model: name };
}

/**
 * The key for the chosen provider. On /api/openai/* and /api/anthropic/* the caller's key is
 * required; elsewhere (/v1 included, CONTRACT §12) the server's key stands in when none is given;
 * no key at all → 400.
 */
export function chooseApiKey(
  config: Config,
  route: ChatRoute,
  chosen: { provider: ProviderName; model: string },
  givenKey: string | undefined,
  keyRequired = `apiKey is required on /api/${chosen.provider}/*`,
): ChatTarget {
  const { provider, model: name } = chosen;
  if (!hostedProviders.has(provider)) return { provider, model: name, apiKey: undefined };
  const callerKey = givenKey?.trim() || undefined;
  if (route.kind === 'provider' && callerKey === undefined) {
    throw AppError.invalid(keyRequired, { field: 'apiKey' });
  }
  const apiKey = callerKey ?? config.providers[provider].apiKey;
  if (apiKey === undefined) {
    throw AppError.invalid(`No API key for ${provider}: send apiKey, or set ${provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY'} on the server`, { field: 'apiKey' });
  }
  return { provider, model: name, apiKey };
}
