import { TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import { AppError, toAppError } from '../core/errors/app-error.js';
import { validationError } from '../core/errors/validation-error.js';

/**
 * The AppError behind whatever a procedure call threw: tRPC wraps thrown AppErrors in a
 * TRPCError, and reports failed input parsing as BAD_REQUEST caused by the ZodError.
 */
export function appErrorFrom(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (!(error instanceof TRPCError)) return toAppError(error);
  const cause = error.cause;
  if (cause instanceof AppError) return cause;
  if (cause instanceof ZodError && error.code === 'BAD_REQUEST') return validationError(cause);
  switch (error.code) {
    case 'PARSE_ERROR':
    case 'BAD_REQUEST':
      return AppError.invalid(error.message);
    case 'NOT_FOUND':
      return AppError.notFound('Procedure');
    case 'PAYLOAD_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large');
    case 'METHOD_NOT_SUPPORTED':
      return new AppError('NOT_FOUND', 'Not found');
    default:
      return toAppError(cause ?? error);
  }
}
