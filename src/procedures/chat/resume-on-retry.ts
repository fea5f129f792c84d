import type { User } from '../../core/auth/permissions.js';
import { AppError } from '../../core/errors/app-error.js';
import type { Context } from '../context.js';
import { requirePermissionFor } from '../guards.js';

interface ResolverOptions<TInput> {
  ctx: Context & { user: User };
  input: TInput;
  path: string;
  signal: AbortSignal | undefined;
}

type StreamHandle = { streamId: string; after: number };

/** `<streamId>:<seq>`, as every event of a stream is named (CONTRACT §6). */
const streamPosition = /^([0-9a-f-]{36}):(\d{1,9})$/i;

/**
 * CONTRACT §12's resume on the same POST: a streaming chat request that carries `Last-Event-ID`
 * is a client reconnecting (fetch-event-source and browsers re-send the POST with the id of the
 * last event they had). It starts nothing and stores nothing: the transport replays the caller's
 * stream after that event and follows it live. Any id that does not name a retained stream of
 * the caller (unknown, expired, another user's, malformed) → 404, never a second generation.
 */
export function resumeOnRetry<TInput>(
  resolver: (opts: ResolverOptions<TInput>) => Promise<StreamHandle>,
): (opts: ResolverOptions<TInput>) => Promise<StreamHandle> {
  return async (opts) => {
    const { ctx } = opts;
    const header = ctx.lastEventId?.trim();
    if (header === undefined || header === '') return resolver(opts);
    const [, streamId, seq] = streamPosition.exec(header) ?? [];
    if (streamId === undefined || seq === undefined) throw AppError.notFound('Stream');
    const stream = await ctx.streams.locate(ctx.user.id, streamId.toLowerCase());
    await requirePermissionFor(ctx, `providers:${stream.provider}`);
    return { streamId: stream.id, after: Number(seq) };
  };
}
