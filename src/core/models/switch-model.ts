import type { ProviderName } from '../config/env-schema.js';
import { AppError } from '../errors/app-error.js';
import type { ModelAccess } from '../usage/model-access.js';
import { getActiveModel, getDefaultModel, setActiveModel, setDefaultModel, type ActiveModel } from './active-model.js';
import { listModels } from './list-models.js';
import { auditModel, type ModelAuditActor } from './model-audit.js';
import { resolveModelReference } from './model-lookup.js';
import { sameModelName } from './model-name.js';
import type { ModelServices } from './model-services.js';
import { checkOllamaRegistry } from './ollama-registry.js';

export interface SwitchRequest {
  modelName: string;
  provider?: ProviderName | undefined;
}

/**
 * The provider of a bare model name: the one provider among the listed models that has it,
 * looking first at those the caller may use (CONTRACT §13), so `llama3.2` listed by Ollama and
 * by a forbidden hosted provider is the caller's Ollama model rather than ambiguous. Only
 * forbidden providers list it: the one that does, which the caller's access check then refuses
 * naming it. None or several → 400 naming the candidates, so the caller can say which.
 */
async function inferProvider(services: ModelServices, name: string, access: ModelAccess): Promise<ProviderName> {
  const listed = (await listModels(services)).filter((entry) => sameModelName(entry.provider, entry.name, name));
  const permitted = listed.filter((entry) => access.allows(entry.provider, entry.name));
  const matches = permitted.length > 0 ? permitted : listed;
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
 * The model a switch names (CONTRACT §7). With a provider (field or `<provider>/` prefix) the name
 * is taken as given; without, the provider is inferred, preferring models within `access`. The
 * caller checks the provider's permission and the model access (§13) before storing it.
 */
export async function resolveModelChoice(services: ModelServices, request: SwitchRequest, access: ModelAccess): Promise<ActiveModel> {
  const reference = resolveModelReference(request.modelName, request.provider);
  if (reference.name.trim() === '') throw AppError.invalid('modelName names no model', { modelName: request.modelName });
  const provider = reference.provider ?? (await inferProvider(services, reference.name, access));
  if (provider === 'ollama') checkOllamaRegistry(reference.name, services.config.OLLAMA_ALLOWED_REGISTRIES);
  return { name: reference.name, provider };
}

/** `POST /api/model/switch`: stores the caller's own active model; nobody else's changes (CONTRACT §12). */
export async function switchModel(services: ModelServices, actor: ModelAuditActor, chosen: ActiveModel): Promise<ActiveModel> {
  const previous = await getActiveModel(services.store, services.config, actor.userId);
  const active = await setActiveModel(services.store, actor.userId, chosen);
  await auditModel(services.store, actor, 'switch', {
    modelName: active.name,
    provider: active.provider,
    previous: { modelName: previous.name, provider: previous.provider },
  });
  return active;
}

/** `POST /api/model/default`: the model of every user who never switched (CONTRACT §12). */
export async function changeDefaultModel(services: ModelServices, actor: ModelAuditActor, chosen: ActiveModel): Promise<ActiveModel> {
  const previous = await getDefaultModel(services.store, services.config);
  const model = await setDefaultModel(services.store, chosen);
  await auditModel(services.store, actor, 'default', {
    modelName: model.name,
    provider: model.provider,
    previous: { modelName: previous.name, provider: previous.provider },
  });
  return model;
}
