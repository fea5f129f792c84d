import { tokenRejected } from '../core/auth/verify-access-token.js';

/** The longest a timer may be set for in Node (about 24.8 days). */
const maxTimerMs = 2 ** 31 - 1;

/**
 * A subscription's events until the caller's token expires, then the 401 a new request with that
 * token would get (CONTRACT §5: as a socket closes with 4401). tRPC sends it as the stream's error
 * event, with the 401 code on which its clients stop reconnecting; a client with a fresh token
 * subscribes again and catches up from its last event id.
 */
export async function* untilTokenExpiry<T>(source: AsyncIterable<T>, expiresAt: number): AsyncGenerator<T, unknown> {
  const iterator: AsyncIterator<T, unknown> = source[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(
      () => {
        resolve('expired');
      },
      Math.min(Math.max(0, expiresAt - Date.now()), maxTimerMs),
    );
  });
  try {
    for (;;) {
      const step = await Promise.race([iterator.next(), expired]);
      if (step === 'expired') throw tokenRejected('expired');
      if (step.done === true) return step.value;
      yield step.value;
    }
  } finally {
    clearTimeout(timer);
    // The source may be waiting for its next event; it ends once tRPC's abort signal reaches it.
    void iterator.return?.(undefined);
  }
}

/** Whether a subscription's result can be wrapped: tRPC v11 subscriptions are async iterables. */
export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
