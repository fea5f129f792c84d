import { Ollama } from 'ollama';
import type { Config } from '../config/load-config.js';

function combine(signal: AbortSignal | null | undefined, own: AbortSignal): AbortSignal {
  return signal ? AbortSignal.any([signal, own]) : own;
}

/**
 * An `ollama` client for quick calls (tags, show, delete): the whole exchange, body included,
 * must finish within `timeoutMs`, so an Ollama that hangs cannot hold a request.
 */
export function ollamaClient(config: Config, timeoutMs: number): Ollama {
  const timedFetch: typeof fetch = (input, init) =>
    fetch(input, { ...init, signal: combine(init?.signal, AbortSignal.timeout(timeoutMs)) });
  return new Ollama({ host: config.providers.ollama.baseUrl, fetch: timedFetch });
}

/**
 * An `ollama` client for a pull, which may stream for hours: only the reply's headers must come
 * within `timeoutMs`; the stream's own idle watchdog lives with the pull. `signal` ends it
 * early (the service stopping).
 */
export function ollamaStreamingClient(config: Config, timeoutMs: number, signal?: AbortSignal): Ollama {
  const firstByteFetch: typeof fetch = async (input, init) => {
    const controller = new AbortController();
    const timer = setTimeout(() => {
      controller.abort(new DOMException('Ollama did not answer in time', 'TimeoutError'));
    }, timeoutMs);
    try {
      const own = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
      return await fetch(input, { ...init, signal: combine(init?.signal, own) });
    } finally {
      clearTimeout(timer);
    }
  };
  return new Ollama({ host: config.providers.ollama.baseUrl, fetch: firstByteFetch });
}

/** How long a model list may take: short, so one slow provider cannot stall `GET /api/models`. */
export function listingTimeoutMs(config: Config): number {
  return Math.min(config.PROVIDER_TIMEOUT_MS, 5000);
}
