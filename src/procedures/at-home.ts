import type { User } from '../core/auth/permissions.js';
import { ENDED } from '../core/cluster/cluster-directory.js';
import { isId } from '../core/ids.js';
import type { Context } from './context.js';

type Caller = Context & { user: User };

interface ResolverOptions<TInput> {
  ctx: Caller;
  input: TInput;
  path: string;
  signal: AbortSignal | undefined;
}

/**
 * Which instance holds what the call is about, or null (or ENDED) to run it here: it is here,
 * it is nowhere, it has ended.
 */
export type HomeLocator<TInput> = (ctx: Caller & { cluster: NonNullable<Context['cluster']> }, input: TInput) => Promise<string | null>;

/**
 * A procedure about something that lives in one instance (a shell, a running generation): when
 * it lives in another, the call is carried there and its reply (data, status, headers) answered
 * as if local (CONTRACT §9b). The guards have already run here; the owner runs them again with
 * the same caller, and never carries a carried call further.
 */
export function atHome<TInput, TOutput>(
  locate: HomeLocator<NoInfer<TInput>>,
  resolver: (opts: ResolverOptions<TInput>) => Promise<TOutput> | TOutput,
): (opts: ResolverOptions<TInput>) => Promise<TOutput> {
  return async (opts) => {
    const { ctx } = opts;
    const { cluster } = ctx;
    if (!cluster || ctx.carried) return resolver(opts);
    const home = await locate({ ...ctx, cluster }, opts.input);
    if (home === null || home === ENDED || home === cluster.instanceId) return resolver(opts);
    const reply = await cluster.calls.call(home, { path: opts.path, input: opts.input, user: ctx.user, ip: ctx.ip, requestId: ctx.requestId });
    if (reply.status !== undefined) ctx.response.status = reply.status;
    Object.assign(ctx.response.headers, reply.headers);
    // The procedure's output validator checks it like a local result.
    return reply.data as TOutput;
  };
}

/** A terminal that is not here may be another instance's. */
export const terminalHome =
  <TInput extends { terminalId: string }>(): HomeLocator<TInput> =>
  async (ctx, input) =>
    // A malformed id is nobody's: 404 here, whatever Redis says or whether it answers.
    !isId(input.terminalId) || ctx.terminals.find(input.terminalId) ? null : ctx.cluster.directory.homeOf('terminal', input.terminalId);

/** A generation that is not here may run on another instance. */
export const streamHome =
  <TInput extends { streamId: string }>(): HomeLocator<TInput> =>
  async (ctx, input) => {
    if (!isId(input.streamId) || ctx.streams.has(input.streamId)) return null;
    const info = await ctx.cluster.remoteStreams.info(input.streamId);
    // Another user's stream is answered here, as the 404 it is, even while its owner is gone.
    return info?.ownerId === ctx.user.id ? info.instance : null;
  };
