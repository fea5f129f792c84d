import type { User } from '../../core/auth/permissions.js';
import type { ChatAttempt } from '../../core/chat/chat-attempt.js';
import { AppError } from '../../core/errors/app-error.js';
import { claimKey, keepClaimed } from '../../core/idempotency/claim-key.js';
import { checkIdempotencyKey, keyScope, requestFingerprint } from '../../core/idempotency/idempotency-key.js';
import type { KeptAnswer } from '../../core/idempotency/idempotency-store.js';
import type { Context } from '../context.js';
import { appErrorFrom } from '../error-mapping.js';

type Caller = Context & { user: User };

interface ResolverOptions<TInput> {
  ctx: Caller;
  input: TInput;
  path: string;
  signal: AbortSignal | undefined;
}

/** Told to a repeat's client, as other APIs with idempotency keys do. */
const REPLAYED_HEADER = 'Idempotent-Replayed';
/** A stream's answer lasts while it runs (at most this long), then STREAM_RETENTION_MS. */
const RUNNING_STREAM_TTL_MS = 60 * 60 * 1000;

/** The failures a client retries on its own; with nothing left stored they free the key. */
const retried = (error: AppError) => error.status === 429 || error.status === 503;

/**
 * CONTRACT §12's Idempotency-Key for a chat procedure, whatever transport brought it (REST, /v1,
 * /trpc: the header reaches the context). Without the header the procedure just runs. With it,
 * the first request of the caller with that key runs; a repeat with the same operation and input
 * starts nothing and stores nothing, and gets the first one's answer: its stream handle (the
 * transport replays the stream from the start) or its JSON reply, waiting for it while it runs.
 * The first attempt's JSON error is its answer too, unless nothing of it stays stored (it failed
 * before storing, or with a 429 or 503 before the provider's 2xx, its question taken back): then
 * the key is freed and the client's retry runs.
 */
export function oncePerKey<TInput, TOutput>(
  resolver: (opts: ResolverOptions<TInput>) => Promise<TOutput>,
): (opts: ResolverOptions<TInput>) => Promise<TOutput> {
  return async (opts) => {
    const { ctx } = opts;
    if (ctx.idempotencyKey === undefined) return resolver(opts);
    const scope = keyScope(ctx.user.id, checkIdempotencyKey(ctx.idempotencyKey));
    const claim = await claimKey(ctx.idempotency, scope, requestFingerprint(opts.path, opts.input), opts.signal);
    if (claim.kind === 'answered') return replay(ctx, claim.answer) as TOutput;
    return runFirst(opts, resolver, scope, claim.token);
  };
}

async function runFirst<TInput, TOutput>(
  opts: ResolverOptions<TInput>,
  resolver: (opts: ResolverOptions<TInput>) => Promise<TOutput>,
  scope: string,
  token: string,
): Promise<TOutput> {
  const { ctx } = opts;
  const store = ctx.idempotency;
  const retentionMs = ctx.config.STREAM_RETENTION_MS;
  const warn = (error: unknown) => {
    ctx.logger.warn({ err: error }, 'an Idempotency-Key could not be updated; a repeat may run again');
  };
  const stopKeeping = keepClaimed(store, scope, token, warn);
  const headersBefore = { ...ctx.response.headers };
  let forget: (() => Promise<void>) | undefined;
  const attempt: ChatAttempt = {
    stored: (undo) => {
      forget = undo;
    },
  };
  try {
    const data = await resolver({ ...opts, ctx: { ...ctx, attempt } });
    const answer: KeptAnswer = { ok: true, data, headers: addedHeaders(headersBefore, ctx.response.headers) };
    if (ctx.response.status !== undefined) answer.status = ctx.response.status;
    const streamId = streamIdOf(data);
    // The request has its answer whatever happens to the key now.
    await store.answer(scope, token, answer, streamId && ctx.streams.has(streamId) ? RUNNING_STREAM_TTL_MS : retentionMs).catch(warn);
    if (streamId) {
      void ctx.streams
        .untilFinished(streamId)
        .then(() => store.expireAnswer(scope, token, retentionMs))
        .catch(warn);
    }
    return data;
  } catch (error) {
    const appError = appErrorFrom(error);
    if (forget !== undefined && !retried(appError)) {
      const { code, message, details } = appError;
      await store.answer(scope, token, { ok: false, error: { code, message, details } }, retentionMs).catch(warn);
    } else {
      if (forget !== undefined) await forget().catch(warn);
      await store.release(scope, token).catch(warn);
    }
    throw error;
  } finally {
    stopKeeping();
  }
}

function replay(ctx: Caller, answer: KeptAnswer): unknown {
  if (!answer.ok) throw new AppError(answer.error.code, answer.error.message, { details: answer.error.details });
  Object.assign(ctx.response.headers, answer.headers, { [REPLAYED_HEADER]: 'true' });
  if (answer.status !== undefined) ctx.response.status = answer.status;
  return answer.data;
}

/** The headers the operation set itself (X-Conversation-Id), not those of the rate limit. */
function addedHeaders(before: Record<string, string>, after: Record<string, string>): Record<string, string> {
  const added: Record<string, string> = {};
  for (const [name, value] of Object.entries(after)) if (before[name] !== value) added[name] = value;
  return added;
}

function streamIdOf(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || !('streamId' in data)) return undefined;
  return typeof data.streamId === 'string' ? data.streamId : undefined;
}
