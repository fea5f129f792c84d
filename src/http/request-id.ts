import type { NextFunction, Request, Response } from 'express';
import { newId } from '../core/ids.js';
import { redactUrl, type Logger } from '../core/logger.js';

const acceptableRequestId = /^[\w.:-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Locals {
    requestId: string;
  }
}

/**
 * Gives every request an id (a sane incoming X-Request-Id is kept, so a proxy's id carries
 * through), echoes it, and logs one line when the reply is finished, with secrets redacted.
 */
export function requestLogging(logger: Logger) {
  return function logRequest(req: Request, res: Response, next: NextFunction): void {
    const incoming = req.get('x-request-id');
    const requestId = incoming && acceptableRequestId.test(incoming) ? incoming : newId();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const level = res.statusCode >= 500 ? 'error' : 'info';
      logger[level](
        { requestId, method: req.method, url: redactUrl(req.originalUrl), status: res.statusCode, durationMs: Math.round(durationMs * 10) / 10 },
        'request',
      );
    });
    next();
  };
}
