import type { RemoteCall, RemoteReply } from '../core/cluster/remote-calls.js';
import { AppError } from '../core/errors/app-error.js';
import { createContextInner, type AppDeps } from '../procedures/context.js';
import { appErrorFrom } from '../procedures/error-mapping.js';
import { createCallerFactory } from '../procedures/trpc.js';
import { appRouter } from '../routers/app-router.js';
import { procedureAtPath } from '../routers/procedure-at-path.js';

const createCaller = createCallerFactory(appRouter);

/**
 * Runs a call another instance carried here (CONTRACT §9b) through the same procedure, with the
 * caller that instance verified, and returns what its transport needs to answer as if local.
 */
export function answerCarriedCalls(deps: AppDeps) {
  return async (call: RemoteCall): Promise<RemoteReply> => {
    const ctx = createContextInner(deps, {
      requestId: call.requestId,
      ip: call.ip,
      identify: () => Promise.resolve(call.user),
      carried: true,
    });
    let procedure: (input: unknown) => Promise<unknown>;
    try {
      procedure = procedureAtPath(createCaller(ctx), call.path);
    } catch {
      throw AppError.notFound('Procedure');
    }
    try {
      const data = await procedure(call.input);
      return { data, headers: ctx.response.headers, ...(ctx.response.status === undefined ? {} : { status: ctx.response.status }) };
    } catch (error) {
      throw appErrorFrom(error);
    }
  };
}
