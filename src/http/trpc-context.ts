import type { CreateExpressContextOptions } from '@trpc/server/adapters/express';
import type { TRPCError } from '@trpc/server';
import type { Logger } from '../core/logger.js';
import type { AppDeps, Context } from '../procedures/context.js';
import { appErrorFrom } from '../procedures/error-mapping.js';
import { createRequestContext } from './request-context.js';

/**
 * The /trpc request context. A token in tRPC's connection parameters (in the URL, where
 * `httpSubscriptionLink` puts it because EventSource cannot send headers) counts only for
 * subscriptions: a token in a URL ends up in proxies' and browsers' logs, so it may open a
 * read-only stream but never run a query or a mutation (issue 20).
 */
export function trpcContext(deps: AppDeps) {
  return ({ req, res, info }: CreateExpressContextOptions): Context => {
    const connectionToken = info.connectionParams?.token;
    const subscriptionsOnly = info.calls.length > 0 && info.calls.every((call) => call.procedure?._def.type === 'subscription');
    return createRequestContext(deps, req, res, connectionToken && subscriptionsOnly ? { connectionToken } : {});
  };
}

/**
 * What /trpc logs of a failed call: a fault of the service (5xx) at error level with its stack;
 * a refusal the client earned (401, 403, 404, 429, bad input) at info, without a stack, as the
 * REST bridge does. tRPC reports an AppError thrown in a procedure as INTERNAL_SERVER_ERROR with
 * the AppError as its cause, so the level comes from the contract's status, not tRPC's code.
 */
export function trpcErrorLog(logger: Logger) {
  return ({ error, path }: { error: TRPCError; path: string | undefined }): void => {
    const appError = appErrorFrom(error);
    if (appError.status >= 500) logger.error({ err: error, path }, 'procedure failed');
    else logger.info({ path, status: appError.status, code: appError.code, reason: appError.details.reason }, 'procedure refused');
  };
}
