import type { Response } from 'express';
import type { AppError } from '../core/errors/app-error.js';

/** Writes the contract's error envelope; the one place HTTP error bodies are made. */
export function sendError(res: Response, error: AppError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(error.toEnvelope());
}
