import type { Request } from 'express';
import { AppError } from '../core/errors/app-error.js';

export type BodyResult =
  | { ok: true; value: Record<string, unknown> | undefined }
  /** The body could not be used; reported as a validation error, after the guards (CONTRACT §2). */
  | { ok: false; error: AppError };

const jsonContentType = /^application\/([\w.+-]*\+)?json\s*(;|$)/i;

/**
 * Reads a request body as a JSON object. An empty body is no body, whatever its Content-Type
 * (`curl -X POST` works). Over `limit` bytes: 413 at once, without buffering the rest.
 */
export async function readJsonBody(req: Request, limit: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { ok: true, value: undefined };
  if (!jsonContentType.test(req.headers['content-type'] ?? '')) {
    // Refused up front by the write guards; here for any caller that reads a body itself.
    return { ok: false, error: new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json') };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: AppError.invalid('Malformed JSON body') };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: AppError.invalid('Request body must be a JSON object') };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

function tooLarge(): AppError {
  // The rest of the body is not read, so the connection cannot be reused.
  return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large', { headers: { Connection: 'close' } });
}
