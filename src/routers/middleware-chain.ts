import { getTRPCErrorFromUnknown, TRPCError } from '@trpc/server';
import type { Context } from '../procedures/context.js';

/** One call's fixed part, as a caller passes it to a procedure. */
export interface ChainCall {
  path: string;
  type: 'query' | 'mutation' | 'subscription';
  ctx: Context;
  getRawInput: () => Promise<unknown>;
  signal: AbortSignal | undefined;
  batchIndex: number;
}

/** What tRPC's middlewares return: the resolver's data, or the error a step ended with. */
type StepResult = { ok: true; data: unknown } | { ok: false; error: TRPCError };

/** What a middleware may pass to `next`: another context (merged in), another input, another raw input. */
interface NextOptions {
  ctx?: Record<string, unknown>;
  input?: unknown;
  getRawInput?: () => Promise<unknown>;
}

type Middleware = (opts: Record<string, unknown>) => Promise<StepResult | undefined>;

/** The parts of a built procedure the chain reads (tRPC's `_def`). */
interface ProcedureDef {
  middlewares?: unknown;
  meta?: unknown;
  caller?: unknown;
  experimental_caller?: unknown;
}

/** What one step may change for the steps after it. */
interface Carried {
  ctx: unknown;
  input: unknown;
  getRawInput: () => Promise<unknown>;
}

/**
 * A procedure's middleware chain (its gate, input validation, output validation, resolver), run
 * as tRPC's own procedure call runs it: each middleware gets the call's options with `meta`, the
 * input so far and `next`; `next(options)` goes on with the context merged with `options.ctx`, the
 * input and the raw input it names; whatever a step throws becomes that step's result as
 * `getTRPCErrorFromUnknown` makes it, which the step before sees from its `next()`; the call then
 * throws the error or returns the data. What differs is the cost: tRPC copies the options twice per
 * step with a property-by-property helper (`Object.defineProperty` for each key): a four-step
 * chain like a chat procedure's took about 20 µs through tRPC's call and 4 µs here, measured alone
 * in a loop (BENCHMARKS.md, issue 24).
 *
 * Null when the procedure is not one this knows how to run (no middleware list, or a custom
 * `experimental_caller`): the caller then calls the procedure itself.
 */
export function middlewareChain(def: ProcedureDef): ((call: ChainCall) => Promise<unknown>) | null {
  const { middlewares, meta } = def;
  if (!Array.isArray(middlewares) || !middlewares.every((middleware) => typeof middleware === 'function')) return null;
  if (def.caller !== undefined || def.experimental_caller === true) return null;
  const steps = middlewares as Middleware[];

  const step = async (index: number, call: ChainCall, carried: Carried): Promise<StepResult | undefined> => {
    try {
      const middleware = steps[index];
      if (middleware === undefined) throw new TypeError('The chain ended without a resolver');
      return await middleware({
        path: call.path,
        type: call.type,
        ctx: carried.ctx,
        input: carried.input,
        getRawInput: carried.getRawInput,
        meta,
        signal: call.signal,
        batchIndex: call.batchIndex,
        next: (options?: NextOptions) =>
          step(index + 1, call, {
            ctx: options?.ctx ? { ...(carried.ctx as Record<string, unknown>), ...options.ctx } : carried.ctx,
            input: options && 'input' in options ? options.input : carried.input,
            getRawInput: options?.getRawInput ?? carried.getRawInput,
          }),
      });
    } catch (cause) {
      return { ok: false, error: getTRPCErrorFromUnknown(cause) };
    }
  };

  return async (call) => {
    const result = await step(0, call, { ctx: call.ctx, input: undefined, getRawInput: call.getRawInput });
    if (!result) throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'A middleware ended the call without a result' });
    if (!result.ok) throw result.error;
    return result.data;
  };
}
