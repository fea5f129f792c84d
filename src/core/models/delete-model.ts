import { AppError } from '../errors/app-error.js';
import { upstreamError } from '../providers/upstream-error.js';
import { listInstalledOllamaModels } from './list-models.js';
import { auditModel, type ModelAuditActor } from './model-audit.js';
import { hostedProviderOffering } from './model-lookup.js';
import { canonicalOllamaName, isValidOllamaName, parseModelReference } from './model-name.js';
import type { ModelServices } from './model-services.js';
import { ollamaClient } from './ollama-client.js';

function hostedModelRefusal(provider: string, name: string): AppError {
  return AppError.invalid(`${provider} models are hosted and cannot be deleted here`, { provider, modelName: name });
}

/**
 * `DELETE /api/models/:name`: removes an installed Ollama model. A hosted model (`openai/…`,
 * `anthropic/…`, or a name only a hosted provider offers) → 400; a model Ollama does not have →
 * 404; Ollama unreachable → 503 (CONTRACT §7).
 */
export async function deleteModel(services: ModelServices, actor: ModelAuditActor, modelName: string): Promise<string> {
  const reference = parseModelReference(modelName);
  if (reference.provider !== undefined && reference.provider !== 'ollama') throw hostedModelRefusal(reference.provider, reference.name);
  const name = reference.name;
  if (!isValidOllamaName(name)) throw AppError.notFound(`Model ${name}`);

  const [installed, hosted] = await Promise.all([
    listInstalledOllamaModels(services).then(
      (names) => ({ ok: true as const, names }),
      (error: unknown) => ({ ok: false as const, error }),
    ),
    reference.provider === undefined ? hostedProviderOffering(services, name) : Promise.resolve(undefined),
  ]);
  const stored = installed.ok ? installed.names.find((candidate) => canonicalOllamaName(candidate) === canonicalOllamaName(name)) : undefined;
  if (stored === undefined && hosted !== undefined) throw hostedModelRefusal(hosted, name);
  if (!installed.ok) throw upstreamError(installed.error, 'ollama', { operation: 'listing models' });
  if (stored === undefined) throw AppError.notFound(`Model ${name}`);

  try {
    await ollamaClient(services.config, services.config.PROVIDER_TIMEOUT_MS).delete({ model: stored });
  } catch (error) {
    const appError = upstreamError(error, 'ollama', { operation: `deleting ${stored}` });
    // Removed by someone else between the list and the delete.
    if (appError.details.status === 404) throw AppError.notFound(`Model ${name}`);
    throw appError;
  }
  await auditModel(services.store, actor, 'delete', { modelName: stored, provider: 'ollama' });
  return `Model ${stored} deleted`;
}
