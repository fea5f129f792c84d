import type { ProviderName } from '../config/env-schema.js';
import { AppError } from '../errors/app-error.js';
import type { ModelAccess } from '../usage/model-access.js';
import { classifyUpstreamFailure, upstreamError } from '../providers/upstream-error.js';
import { auditModel, type ModelAuditActor } from './model-audit.js';
import type { ActiveDownload } from './model-downloads.js';
import { hostedProviderOffering, resolveModelReference } from './model-lookup.js';
import { canonicalOllamaName, isValidOllamaName } from './model-name.js';
import type { ModelServices } from './model-services.js';
import { checkOllamaRegistry } from './ollama-registry.js';
import { requireModelAccess } from './require-model-access.js';
import { listInstalledOllamaModels } from './list-models.js';
import { ollamaStreamingClient } from './ollama-client.js';

export interface DownloadRequest {
  modelName: string;
  provider?: ProviderName | undefined;
}

function hostedModelRefusal(provider: ProviderName, name: string): AppError {
  return AppError.invalid(`${provider} models are hosted and need no download`, { provider, modelName: name });
}

/**
 * `POST /api/model/download`: an Ollama model already installed is `available`; otherwise its
 * pull starts in the background (one per model at a time) and the answer is `downloading` at
 * once. Hosted models need no download: 400 (CONTRACT §7). A model outside the caller's
 * model access (§13) → 403 naming it, installed or not: a download is a choice of the model.
 */
export async function downloadModel(
  services: ModelServices,
  actor: ModelAuditActor,
  request: DownloadRequest,
  access: ModelAccess,
): Promise<'available' | 'downloading'> {
  const { provider, name } = resolveModelReference(request.modelName, request.provider);
  if (provider !== undefined && provider !== 'ollama') throw hostedModelRefusal(provider, name);
  if (!isValidOllamaName(name)) throw AppError.invalid(`modelName ${name} is not a valid Ollama model name`, { modelName: name });
  checkOllamaRegistry(name, services.config.OLLAMA_ALLOWED_REGISTRIES);
  const chosen = { provider: 'ollama' as const, model: name };
  // Named as Ollama's: refused before Ollama is asked anything.
  if (provider === 'ollama') await requireModelAccess(services.store, actor, access, chosen);

  // A bare name may be a hosted model's: it is refused when a hosted provider offers it and
  // Ollama has no model of that name.
  const [installed, hosted] = await Promise.all([
    listInstalledOllamaModels(services).then(
      (names) => ({ ok: true as const, names }),
      (error: unknown) => ({ ok: false as const, error }),
    ),
    provider === undefined ? hostedProviderOffering(services, name) : Promise.resolve(undefined),
  ]);
  const isInstalled = installed.ok && installed.names.some((installedName) => canonicalOllamaName(installedName) === canonicalOllamaName(name));
  if (!isInstalled && hosted !== undefined) throw hostedModelRefusal(hosted, name);
  // A bare name is Ollama's only now that no hosted provider claims it.
  if (provider === undefined) await requireModelAccess(services.store, actor, access, chosen);
  if (!installed.ok) throw upstreamError(installed.error, 'ollama', { operation: 'listing models' });
  if (isInstalled) return 'available';
  if (services.modelDownloads.isDownloading(name)) return 'downloading';

  await auditModel(services.store, actor, 'download', { modelName: name, provider: 'ollama' });
  const started = services.modelDownloads.start(name, (download) => pullModel(services, actor, download));
  if (!started && !services.modelDownloads.isDownloading(name)) {
    throw new AppError('SERVICE_UNAVAILABLE', 'The service is stopping; try the download again after it restarts');
  }
  return 'downloading';
}

/**
 * Runs Ollama's pull for a registered download, feeding its progress to the registry. A stream
 * that goes quiet for PROVIDER_TIMEOUT_MS is given up, so a stuck pull cannot block the model
 * forever.
 */
async function pullModel(services: ModelServices, actor: ModelAuditActor, download: ActiveDownload): Promise<void> {
  const { config, logger, store } = services;
  const modelName = download.modelName;
  const idle = new AbortController();
  let idleTimer: NodeJS.Timeout | undefined;
  const armIdleTimer = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      idle.abort(new DOMException('Ollama stopped reporting progress', 'TimeoutError'));
    }, config.PROVIDER_TIMEOUT_MS);
  };
  const abortSignal = AbortSignal.any([download.signal, idle.signal]);
  try {
    armIdleTimer();
    await streamPull(services, download, abortSignal, armIdleTimer);
  } catch (error) {
    if (download.signal.aborted) {
      // The service is stopping: the database may be closing, so only the log hears of it.
      download.fail('the service stopped during the download');
      logger.info({ modelName }, 'model download stopped with the service');
      return;
    }
    const reason = failureReason(idle.signal.aborted ? idle.signal.reason : error);
    download.fail(reason);
    logger.warn({ modelName, reason }, 'model download failed');
    await auditModel(store, actor, 'download_failed', { modelName, provider: 'ollama', reason }).catch((auditError: unknown) => {
      logger.warn({ err: auditError, modelName }, 'audit of a failed model download failed');
    });
    return;
  } finally {
    clearTimeout(idleTimer);
  }
  download.succeed();
  logger.info({ modelName }, 'model downloaded');
  await auditModel(store, actor, 'downloaded', { modelName, provider: 'ollama' }).catch((auditError: unknown) => {
    logger.warn({ err: auditError, modelName }, 'audit of a model download failed');
  });
}

async function streamPull(
  services: ModelServices,
  download: ActiveDownload,
  abortSignal: AbortSignal,
  onLine: () => void,
): Promise<void> {
  const { config } = services;
  const stream = await ollamaStreamingClient(config, config.PROVIDER_TIMEOUT_MS, abortSignal).pull({ model: download.modelName, stream: true });
  const abortStream = () => {
    stream.abort();
  };
  abortSignal.addEventListener('abort', abortStream, { once: true });
  try {
    // The client throws on an `error` line and on a stream that ends short of `success`.
    for await (const line of stream) {
      onLine();
      download.report(line);
    }
  } finally {
    abortSignal.removeEventListener('abort', abortStream);
  }
  if (abortSignal.aborted) throw abortSignal.reason;
}

/**
 * A failure in words a user can act on: Ollama's own message for what it refused ("pull model
 * manifest: file does not exist"; Ollama is local and quotes no secrets), the contract's
 * wording for an unreachable or silent Ollama.
 */
function failureReason(error: unknown): string {
  const kind = classifyUpstreamFailure(error);
  if ((kind === null || kind.kind === 'status') && error instanceof Error && error.message) return error.message;
  return upstreamError(error, 'ollama', { operation: 'pulling the model' }).message;
}
