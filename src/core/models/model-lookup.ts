import type { ProviderName } from '../config/env-schema.js';
import { AppError } from '../errors/app-error.js';
import type { HostedProvider } from '../providers/hosted-model-lists.js';
import { listHostedModels } from './list-models.js';
import { parseModelReference, type ModelReference } from './model-name.js';
import type { ModelServices } from './model-services.js';

/**
 * The model a request names: `provider` and a `<provider>/<name>` prefix must agree when both
 * are given (400 otherwise); a bare name without `provider` leaves the provider open.
 */
export function resolveModelReference(modelName: string, provider: ProviderName | undefined): ModelReference {
  const reference = parseModelReference(modelName);
  if (provider === undefined || reference.provider === undefined) {
    return { provider: provider ?? reference.provider, name: reference.name };
  }
  if (reference.provider !== provider) {
    throw AppError.invalid(`modelName names provider ${reference.provider} but provider is ${provider}`, {
      modelName,
      provider,
    });
  }
  return reference;
}

/**
 * The hosted provider that offers a model of this name, if any: with a server key, from the
 * provider's own list; without one, its configured default model. A provider that cannot be
 * asked counts as not offering it.
 */
export async function hostedProviderOffering(services: ModelServices, name: string): Promise<HostedProvider | undefined> {
  const offers = await Promise.all(
    (['openai', 'anthropic'] as const).map(async (provider) => {
      const { apiKey, defaultModel } = services.config.providers[provider];
      if (apiKey === undefined) return defaultModel === name;
      const models = await listHostedModels(services, provider, apiKey).catch(() => []);
      return models.some((model) => model.name === name);
    }),
  );
  if (offers[0]) return 'openai';
  if (offers[1]) return 'anthropic';
  return undefined;
}
