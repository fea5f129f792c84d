import type { ProviderName } from '../config/env-schema.js';
import { AppError } from '../errors/app-error.js';
import type { StreamJob } from '../streams/stream-job.js';
import type { ChatDeps } from './chat-deps.js';
import { runExchange, type PreparedExchange, type ReadyGate } from './run-exchange.js';
import { exchangeStarts } from './start-gate.js';

function readyGate(): ReadyGate & { promise: Promise<void> } {
  let settled = false;
  let resolve!: () => void;
  let reject!: (error: AppError) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return {
    promise,
    get settled() {
      return settled;
    },
    resolve() {
      if (settled) return;
      settled = true;
      resolve();
    },
    reject(error) {
      if (settled) return;
      settled = true;
      reject(error);
    },
  };
}

/**
 * Opens a job for `owner` (counted against the stream cap), prepares the exchange (which stores
 * the question) and runs it in the background. Resolves with the job once the provider has
 * answered 2xx, so every earlier failure is still a plain error for the caller; the job is then
 * dropped, never left half-open.
 */
export async function launchExchange(
  deps: ChatDeps,
  owner: { userId: string; provider: ProviderName },
  prepare: () => Promise<PreparedExchange>,
): Promise<StreamJob> {
  const job = deps.streams.open(owner.userId, owner.provider);
  const gate = readyGate();
  try {
    // A few at a time (start-gate.ts), so a burst of starts leaves the running streams' events room.
    const exchange = await exchangeStarts.run(prepare);
    void runExchange(deps, exchange, job, gate).catch((error: unknown) => {
      deps.logger.error({ err: error, streamId: job.id }, 'a generation failed unexpectedly');
      gate.reject(new AppError('STREAMING_ERROR', 'The answer could not be generated'));
      job.discard();
    });
    await gate.promise;
    return job;
  } catch (error) {
    deps.streams.drop(job);
    throw error;
  }
}
