import type { NextFunction, Request, Response } from 'express';
import { AppError, toAppError } from '../core/errors/app-error.js';
import type { Logger } from '../core/logger.js';
import { sendError } from './error-response.js';

/** Unknown path or wrong method: 404 in the envelope, decided before authentication (CONTRACT §2). */
export function notFound(_req: Request, res: Response): void {
  sendError(res, new AppError('NOT_FOUND', 'Not found'));
}

/** The last resort: whatever reached Express's error path leaves as an envelope, never a stack trace. */
export function errorHandler(logger: Logger) {
  return function handleError(error: unknown, _req: Request, res: Response, _next: NextFunction): void {
    const appError = fromExpressError(error);
    if (appError.status >= 500) logger.error({ err: error, requestId: res.locals.requestId }, 'unhandled error');
    sendError(res, appError);
  };
}

/** Express and its body parsers signal client errors with `status`/`type`; keep those 4xx. */
function fromExpressError(error: unknown): AppError {
  const status = (error as { status?: unknown } | null)?.status;
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large');
  if (typeof status === 'number' && status >= 400 && status < 500) return AppError.invalid('Bad request');
  return toAppError(error);
}
