import type { AnyRouter } from '@trpc/server';
import type { ProcedureCallOptions } from '@trpc/server/unstable-core-do-not-import';
import type { Context } from '../procedures/context.js';
import { middlewareChain } from './middleware-chain.js';

/** A caller's procedure by its dotted path (`terminals.execute`), as the route table and other instances name it. */
export function procedureAtPath(caller: object, dottedPath: string): (input: unknown) => Promise<unknown> {
  let target: unknown = caller;
  for (const segment of dottedPath.split('.')) {
    target = typeof target === 'object' || typeof target === 'function' ? (target as Record<string, unknown> | null)?.[segment] : undefined;
  }
  if (typeof target !== 'function') throw new TypeError(`no procedure at ${dottedPath}`);
  return target as (input: unknown) => Promise<unknown>;
}

type CallProcedure = (opts: ProcedureCallOptions<Context>) => Promise<unknown>;

/**
 * One procedure's call with a context, found once: what `createCaller(ctx).a.b(input)` does
 * (tRPC's own caller makes the same single call, with the same options), without the two
 * proxies and the path walk that the caller builds anew for every request. The procedure's
 * middleware chain (gate, input and output validation) runs whole, as through any caller, by
 * middleware-chain.ts, which runs it as tRPC does at a fifth of the cost.
 */
export function procedureCall(router: AnyRouter, dottedPath: string): (ctx: Context, input: unknown) => Promise<unknown> {
  const procedure = (router._def.procedures as Record<string, unknown>)[dottedPath] as
    | (CallProcedure & { _def: { type: ProcedureCallOptions<Context>['type'] } & Parameters<typeof middlewareChain>[0] })
    | undefined;
  if (typeof procedure !== 'function') throw new TypeError(`no procedure at ${dottedPath}`);
  const type = procedure._def.type;
  const chain = middlewareChain(procedure._def);
  if (chain === null) {
    return (ctx, input) => procedure({ path: dottedPath, getRawInput: () => Promise.resolve(input), ctx, type, signal: undefined, batchIndex: 0 });
  }
  return (ctx, input) => chain({ path: dottedPath, getRawInput: () => Promise.resolve(input), ctx, type, signal: undefined, batchIndex: 0 });
}
