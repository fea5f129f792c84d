/** The provider sent no response headers within PROVIDER_TIMEOUT_MS: MODEL_UNAVAILABLE (CONTRACT §1). */
export class ProviderTimeoutError extends Error {
  override name = 'ProviderTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`The provider did not answer within ${timeoutMs} ms`);
  }
}

export interface ProviderFetchOptions {
  /** PROVIDER_TIMEOUT_MS, for the first byte of each provider request. */
  timeoutMs: number;
  /** Told once per request whose response status is 2xx: the stream's headers may go out then. */
  onSuccessResponse: () => void;
}

/**
 * The fetch the AI SDK providers use: each request must answer within the timeout (its headers
 * count as the first byte), and a 2xx answer is reported, so the engine knows when a failure is
 * still an ordinary JSON error reply and when it has become an in-stream `error` event (CONTRACT §6).
 */
export function createProviderFetch(options: ProviderFetchOptions): typeof fetch {
  return async function providerFetch(input, init) {
    const timeout = new AbortController();
    const timer = setTimeout(() => {
      timeout.abort(new ProviderTimeoutError(options.timeoutMs));
    }, options.timeoutMs);
    // One controller carries both the caller's abort and the timeout into fetch. (Node 20's
    // AbortSignal.any() did not reliably reach undici here: an abort left the socket open.)
    const caller = init?.signal;
    const onCallerAbort = () => {
      timeout.abort(caller?.reason);
    };
    if (caller?.aborted) onCallerAbort();
    else caller?.addEventListener('abort', onCallerAbort, { once: true });
    const signal = timeout.signal;
    try {
      const response = await fetch(input, { ...init, signal });
      if (response.ok) options.onSuccessResponse();
      return response;
    } catch (error) {
      if (timeout.signal.aborted && !caller?.aborted) throw new ProviderTimeoutError(options.timeoutMs);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
}
