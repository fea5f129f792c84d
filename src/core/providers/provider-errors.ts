// How a provider call fails, before the contract's mapping (upstream-error.ts, chat-error.ts)
// turns it into an AppError. None of these carries the provider's own error text: hosted
// providers quote part of a rejected API key back.

/** The provider answered with a status other than 2xx. */
export class ProviderHttpError extends Error {
  override name = 'ProviderHttpError';
  constructor(
    readonly status: number,
    readonly responseHeaders: Record<string, string>,
  ) {
    super(`The provider answered HTTP ${status}`);
  }
}

/** No response headers within PROVIDER_TIMEOUT_MS, or a stream that went quiet for as long. */
export class ProviderTimeoutError extends Error {
  override name = 'ProviderTimeoutError';
  constructor(
    readonly timeoutMs: number,
    readonly phase: 'first-byte' | 'idle',
  ) {
    super(phase === 'first-byte' ? `The provider did not answer within ${timeoutMs} ms` : `The provider sent nothing for ${timeoutMs} ms`);
  }
}

/** The answer could not be read: not the wire format, or it ended before its proper end. */
export class ProviderProtocolError extends Error {
  override name = 'ProviderProtocolError';
  constructor(
    message: string,
    readonly reason: 'malformed' | 'cut',
  ) {
    super(message);
  }
}

/**
 * The provider reported a failure inside a stream it had started with 2xx (OpenAI's `error`
 * chunk, Anthropic's `error` event, an Ollama line with `error`). `status` is the HTTP status
 * the same failure has when it comes before the stream (Anthropic's overloaded_error is 529).
 */
export class ProviderStreamError extends Error {
  override name = 'ProviderStreamError';
  constructor(readonly status: number) {
    super(`The provider reported an error inside its answer (as HTTP ${status})`);
  }
}

/**
 * No connection to the provider could be made, or it broke before any answer came (refused,
 * reset, no route, a name that does not resolve). `address` is the configured base URL as
 * shownAddress() shows it, `setting` the variable that sets it; `cause` is the socket error.
 */
export class ProviderUnreachableError extends Error {
  override name = 'ProviderUnreachableError';
  constructor(
    readonly address: string,
    readonly setting: string,
    cause: unknown,
  ) {
    super(`The provider at ${address} could not be reached`, { cause });
  }
}
