import type { Response } from 'express';

/** The longest a timer may be set for in Node (about 24.8 days). */
const maxTimerMs = 2 ** 31 - 1;

/**
 * An SSE reply ends when the token it was opened with expires, as sockets close with 4401
 * (CONTRACT §5). It is cut rather than ended, so no event can be written after the end. Returns
 * what clears the timer.
 */
export function endAtTokenExpiry(res: Response, expiresAt: number | undefined): () => void {
  if (expiresAt === undefined) return () => undefined;
  const timer = setTimeout(
    () => {
      res.destroy();
    },
    Math.min(Math.max(0, expiresAt - Date.now()), maxTimerMs),
  );
  return () => {
    clearTimeout(timer);
  };
}
