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
  // A body of declared length cannot outgrow it (Node's parser ends the body there), and the
  // declared length is within the limit: plain listeners read it. A chunked body may grow past the
  // limit, so it is read as before, by `for await`, whose early exit destroys the request but
  // leaves its socket, so the 413 still goes out (on a closing connection).
  const declaredOnly = req.headers['content-length'] !== undefined && req.headers['transfer-encoding'] === undefined;
  const text = (declaredOnly ? await readDeclared(req) : await readStepped(req, limit)).toString('utf8');
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

/**
 * A body of declared length, read with plain listeners: `for await` over the request built an
 * async iterator and an end-of-stream watcher per request, about half of what the REST bridge
 * spent before calling the procedure (BENCHMARKS.md, "Chat"). As that loop did, a request that
 * errors or closes before its end rejects, and a request already read to its end is an empty body.
 */
function readDeclared(req: Request): Promise<Buffer> {
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const onClose = () => {
      stop();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
    // A 'data' listener alone does not restart a request someone paused; the loop's reads did.
    req.resume();
  });
}

/** A body without a declared length, up to `limit` bytes: past it, 413 without reading the rest. */
async function readStepped(req: Request, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function tooLarge(): AppError {
  // The rest of the body is not read, so the connection cannot be reused.
  return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large', { headers: { Connection: 'close' } });
}
