import { initTRPC } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import superjson from 'superjson';
import type { AppError } from '../core/errors/app-error.js';
import type { Context } from './context.js';
import { appErrorFrom } from './error-mapping.js';
import type { ProcedureMeta } from './meta.js';

const rpcCodeForStatus: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

/**
 * What a typed RPC client reads of an error: the contract's code, status and details, never a
 * stack trace. The JSON-RPC code follows the contract's status: tRPC's clients decide on it
 * whether to retry (a subscription refused with 404 or 401 must not reconnect for ever). Also
 * used for refusals made before tRPC runs (a foreign Origin, a body that is not JSON).
 */
export function rpcErrorShape(appError: AppError) {
  const rpcKey = rpcCodeForStatus[appError.status] ?? 'INTERNAL_SERVER_ERROR';
  return {
    code: TRPC_ERROR_CODES_BY_KEY[rpcKey],
    message: appError.message,
    data: { code: rpcKey, httpStatus: appError.status, appCode: appError.toEnvelope().error.code, details: appError.details },
  };
}

// initTRPC once: this module exports the router factory, the caller factory and the root
// procedure builder. Guards and the procedures that use them live beside it.
const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
  .create({
    transformer: superjson,
    // Subscriptions over SSE (/trpc): a comment now and then keeps proxies from closing a quiet
    // stream, like the REST SSE replies' `: ping` (CONTRACT §6).
    sse: { ping: { enabled: true, intervalMs: 15_000 } },
    // Typed RPC clients get the contract's code, status and details; never a stack trace.
    errorFormatter({ shape, error }) {
      const { stack: _stack, ...data } = shape.data;
      const own = rpcErrorShape(appErrorFrom(error));
      return { ...shape, ...own, data: { ...data, ...own.data } };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const middleware = t.middleware;
export const rootProcedure = t.procedure;
