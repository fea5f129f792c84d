import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError } from '../core/errors/app-error.js';
import type { Logger } from '../core/logger.js';

/**
 * Node's HTTP parser answers a request it cannot parse (headers or URL over 16 KB, broken framing)
 * by itself, before Express sees it: a bare 431 or 400 with an empty body. CONTRACT §2 wants the
 * envelope on every error, so this writes it instead; the connection is closed, as Node would.
 */
export const answerClientError = (logger: Logger) => (error: Error & { code?: string }, socket: Duplex & { _httpMessage?: { headersSent?: boolean } | null }): void => {
  // A reply already under way on this connection (a pipelined request broke behind it) cannot be
  // followed by another one: the connection just ends, as Node's own handler does.
  if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent === true) {
    socket.destroy();
    return;
  }
  const message =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'Request headers or URL too large'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'Request not received in time'
        : 'Malformed HTTP request';
  const appError = AppError.invalid(message);
  const body = JSON.stringify(appError.toEnvelope());
  socket.end(
    `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status] ?? ''}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
  // Express never saw it, so this is its only trace in the request log (no method or URL: the
  // parser gave up before them, or they were too large to keep).
  logger.info({ status: appError.status, reason: error.code ?? 'unknown' }, 'unparsable request');
};
