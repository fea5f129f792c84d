import { initTRPC } from '@trpc/server';
import superjson from 'superjson';
import type { Context } from './context.js';
import { appErrorFrom } from './error-mapping.js';
import type { ProcedureMeta } from './meta.js';

// initTRPC once: this module exports the router factory, the caller factory and the root
// procedure builder. Guards and the procedures that use them live beside it.
const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
  .create({
    transformer: superjson,
    // Typed RPC clients get the contract's code, status and details; never a stack trace.
    errorFormatter({ shape, error }) {
      const appError = appErrorFrom(error);
      const { stack: _stack, ...data } = shape.data;
      return {
        ...shape,
        message: appError.message,
        data: { ...data, httpStatus: appError.status, appCode: appError.toEnvelope().error.code, details: appError.details },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const middleware = t.middleware;
export const rootProcedure = t.procedure;
