import type { Response } from 'express';
import type { AppError } from '../core/errors/app-error.js';

/**
 * Writes the contract's error envelope; the one place HTTP error bodies are made. `headers` are
 * what the procedure chain set before it failed (the rate group's headers), sent under the error's own.
 */
export function sendError(res: Response, error: AppError, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [name, value] of Object.entries({ ...headers, ...error.headers })) res.setHeader(name, value);
  res.status(error.status).json(error.toEnvelope());
}
