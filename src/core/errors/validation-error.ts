import type { z } from 'zod';
import { AppError } from './app-error.js';

/** A zod failure as the contract's 400: `details.issues` = [{path, message}] as zod reports them. */
export function validationError(error: z.ZodError, message = 'Invalid request'): AppError {
  return AppError.invalid(message, {
    issues: error.issues.map((issue) => ({ path: issue.path.map(pathKey), message: issue.message })),
  });
}

function pathKey(key: PropertyKey): string | number {
  return typeof key === 'number' ? key : String(key);
}
