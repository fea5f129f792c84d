import type { Request, Response } from 'express';
import superjson from 'superjson';
import type { AppError } from '../core/errors/app-error.js';
import { rpcErrorShape } from '../procedures/trpc.js';
import { sendOpenAIError } from '../rest-adapter/openai-compatible/send-openai-error.js';
import { sendError } from './error-response.js';

/** Whose error format a reply made before any transport ran takes. */
export type ErrorFormat = 'envelope' | 'trpc' | 'openai';

/** The format of a path (lower case): OpenAI's under /v1, tRPC's under /trpc, the envelope elsewhere (CONTRACT §2). */
export function errorFormatOf(lowerPath: string): ErrorFormat {
  if (lowerPath === '/v1' || lowerPath.startsWith('/v1/')) return 'openai';
  if (lowerPath === '/trpc' || lowerPath.startsWith('/trpc/')) return 'trpc';
  return 'envelope';
}

/** An error answered before a transport ran, in that transport's format. */
export function sendRefusal(req: Request, res: Response, error: AppError, format: ErrorFormat): void {
  if (format === 'openai') {
    sendOpenAIError(res, error);
    return;
  }
  if (format === 'trpc') {
    if (res.headersSent) {
      res.end();
      return;
    }
    // As tRPC answers an error before any call ran: one error object, or one per call of a batch.
    const shape = { error: superjson.serialize(rpcErrorShape(error)) };
    const calls = req.query.batch === '1' ? req.path.slice(req.path.lastIndexOf('/') + 1).split(',').length : 0;
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.status).json(calls > 0 ? Array.from({ length: Math.min(calls, 1000) }, () => shape) : shape);
    return;
  }
  sendError(res, error);
}
