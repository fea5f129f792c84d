import type { ProviderName } from '../config/env-schema.js';
import { AppError } from '../errors/app-error.js';
import { getActiveModel, setActiveModel, type ActiveModel } from './active-model.js';
import { listModels } from './list-models.js';
import { auditModel, type ModelAuditActor } from './model-audit.js';
import { resolveModelReference } from './model-lookup.js';
import { sameModelName } from './model-name.js';
import type { ModelServices } from './model-services.js';

export interface SwitchRequest {
  modelName: string;
  provider?: ProviderName | undefined;
}

/**
 * The provider of a bare model name: the one provider among the listed models that has it.
 * None or several → 400 naming the candidates, so the caller can say which.
 */
async function inferProvider(services: ModelServices, name: string): Promise<ProviderName> {
  const matches = (await listModels(services)).filter((entry) => sameModelName(entry.provider, entry.name, name));
  const providers = [...new Set(matches.map((entry) => entry.provider))];
  const [only] = providers;
  if (only !== undefined && providers.length === 1) return only;
  const candidates = matches.map((entry) => ({ provider: entry.provider, name: entry.name }));
  throw AppError.invalid(
    providers.length === 0
      ? `No provider lists a model named ${name}; give provider or use <provider>/<name>`
      : `Several providers list a model named ${name}; give provider or use <provider>/<name>`,
    { modelName: name, candidates },
  );
}

/**
 * `POST /api/model/switch`: stores the shared active model (CONTRACT §7). With a provider (field
 * or `<provider>/` prefix) the name is taken as given; without, the provider is inferred.
 */
export async function switchModel(services: ModelServices, actor: ModelAuditActor, request: SwitchRequest): Promise<ActiveModel> {
  const reference = resolveModelReference(request.modelName, request.provider);
  if (reference.name.trim() === '') throw AppError.invalid('modelName names no model', { modelName: request.modelName });
  const provider = reference.provider ?? (await inferProvider(services, reference.name));
  const previous = await getActiveModel(services.store, services.config);
  const active = await setActiveModel(services.store, { name: reference.name, provider });
  await auditModel(services.store, actor, 'switch', {
    modelName: active.name,
    provider: active.provider,
    previous: { modelName: previous.name, provider: previous.provider },
  });
  return active;
}
