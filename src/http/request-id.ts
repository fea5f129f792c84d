import type { IncomingMessage } from 'node:http';
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
    const logLine = requestLine(logger, req);
    res.locals.requestId = logLine.requestId;
    res.setHeader('X-Request-Id', logLine.requestId);
    res.on('finish', () => {
      logLine(res.statusCode);
    });
    next();
  };
}

/**
 * The one log line of a request, HTTP or WebSocket upgrade, timed from now: call it with the
 * status once answered. Its `requestId` is the one the line will carry.
 */
export function requestLine(logger: Logger, req: IncomingMessage): ((status: number) => void) & { requestId: string } {
  const incoming = req.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && acceptableRequestId.test(incoming) ? incoming : newId();
  const started = process.hrtime.bigint();
  const url = redactUrl((req as Partial<Request>).originalUrl ?? req.url ?? '/');
  return Object.assign(
    (status: number) => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      logger[status >= 500 ? 'error' : 'info']({ requestId, method: req.method, url, status, durationMs: Math.round(durationMs * 10) / 10 }, 'request');
    },
    { requestId },
  );
}
