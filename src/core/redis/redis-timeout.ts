/** Past this a Redis command counts as failed: a stalled Redis must not hold a request. */
const defaultTimeoutMs = 2000;

/** A Redis command that does not answer in time fails, so callers can answer 503 instead of hanging. */
export async function withTimeout<T>(command: Promise<T>, timeoutMs = defaultTimeoutMs): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`Redis did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([command, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
