import type { Response } from 'express';
import type { AppError } from '../../core/errors/app-error.js';
import { isQuotaRefusal, openAIErrorObject } from '../../core/openai-compatible/openai-error-object.js';

/**
 * The /v1 paths' error reply: OpenAI's error object with the contract's status and headers
 * (Retry-After on a 429 or 503, WWW-Authenticate on a 401), never the contract's envelope
 * (CONTRACT §0, §2).
 */
export function sendOpenAIError(res: Response, error: AppError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  // The openai SDKs obey this header over the status: a spent quota is not retried.
  if (isQuotaRefusal(error)) res.setHeader('x-should-retry', 'false');
  res.status(error.status).json(openAIErrorObject(error));
}
