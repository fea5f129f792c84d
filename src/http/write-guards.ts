import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../core/config/load-config.js';
import { AppError } from '../core/errors/app-error.js';
import { requestUrl } from './resolve-request.js';
import { errorFormatOf, sendRefusal } from './transport-refusal.js';

const stateChanging = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const jsonContentType = /^application\/([\w.+-]*\+)?json\s*(;|$)/i;

/**
 * CONTRACT §8: the origins that are the service's own (OIDC_BASE_URL, http://HOST:PORT,
 * http://localhost:PORT) and ALLOWED_ORIGINS. `port` is the one the request came in on.
 */
export function ownOrigins(config: Config, port: number | undefined): Set<string> {
  const origins = new Set(config.ALLOWED_ORIGINS);
  if (port !== undefined) {
    origins.add(`http://${config.HOST}:${port}`);
    origins.add(`http://localhost:${port}`);
  }
  if (config.OIDC_BASE_URL) origins.add(new URL(config.OIDC_BASE_URL).origin);
  return origins;
}

/**
 * Whether a browser's `Origin` is one the service trusts: its own, an allowed one, or the very
 * origin the request was sent to (`Host`, which the host guard has already accepted, so a
 * rebinding name cannot pass), as when the page is opened at http://127.0.0.1:PORT.
 */
export function originTrusted(origin: string, host: string | undefined, own: ReadonlySet<string>): boolean {
  if (own.has(origin)) return true;
  if (host === undefined) return false;
  const lowerOrigin = origin.toLowerCase();
  const lowerHost = host.toLowerCase();
  return lowerOrigin === `http://${lowerHost}` || lowerOrigin === `https://${lowerHost}`;
}

/**
 * The refusal for a state-changing request a foreign web page could have sent (CONTRACT §8,
 * amended): an `Origin` that is not trusted (`null` included: sandboxed frames, privacy modes), or
 * `Sec-Fetch-Site: cross-site` without a trusted `Origin`. Requests with neither (curl, the SDKs)
 * pass. Null when the request may go on.
 */
export function foreignWriteRefusal(req: Request, config: Config): AppError | null {
  if (!stateChanging.has(req.method)) return null;
  const origin = req.headers.origin;
  const trusted = origin !== undefined && originTrusted(origin, req.headers.host, ownOrigins(config, req.socket.localPort));
  if (origin !== undefined && !trusted) {
    return new AppError('SECURITY_VIOLATION', 'Origin not allowed; add it to ALLOWED_ORIGINS', { details: { reason: 'cross_origin', origin } });
  }
  if (!trusted && req.headers['sec-fetch-site']?.trim().toLowerCase() === 'cross-site') {
    return new AppError('SECURITY_VIOLATION', 'Cross-site requests may not change anything', { details: { reason: 'cross_origin' } });
  }
  return null;
}

/**
 * A state-changing request with a body that is not JSON: 415 (CONTRACT §2, §8). Such a body is
 * what an HTML form or a `no-cors` fetch sends without a CORS preflight; refusing it up front
 * means no procedure ever sees one. A body is there when its length is non-zero; a chunked one is
 * read until its first byte or its end, since an empty one is no body (`curl -X POST` with a
 * chunked upload): it is then handed on as read and empty, which the body readers take as none.
 */
export async function nonJsonBodyRefusal(req: Request): Promise<AppError | null> {
  if (!stateChanging.has(req.method) || jsonContentType.test(req.headers['content-type'] ?? '')) return null;
  const length = req.headers['content-length'];
  if (length !== undefined && length.trim() !== '0') return unsupported(req);
  if (req.headers['transfer-encoding'] === undefined) return null;
  const empty = await new Promise<boolean>((resolve) => {
    const onData = () => {
      settle(false);
    };
    const onEnd = () => {
      settle(true);
    };
    const settle = (value: boolean) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onEnd);
      req.pause();
      resolve(value);
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onEnd);
  });
  if (!empty) return unsupported(req);
  // tRPC reads a body already taken from the request as `req.body`.
  (req as { body?: unknown }).body = '';
  return null;
}

function unsupported(req: Request): AppError {
  return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json', {
    details: { contentType: req.headers['content-type'] ?? null },
  });
}

/**
 * Both refusals, before anything else runs on the API paths (/api, /trpc, /v1), each answered in
 * its transport's own error format. Requests are kept from being read further: the connection
 * closes after a refused body.
 */
export function writeGuards(config: Config) {
  return function guardWrites(req: Request, res: Response, next: NextFunction): void {
    if (!stateChanging.has(req.method)) {
      next();
      return;
    }
    // As URL parsing reads it (dot segments resolved) and as Express routes it (the raw path, the
    // path of an absolute-form target): a body bound for an API under either reading is checked.
    let resolved: string;
    try {
      // A REST request's URL was parsed once already, by the request resolver, the same way.
      const known = res.locals.resolved;
      resolved = (known?.transport === 'rest' ? known.url : requestUrl(req)).pathname.toLowerCase();
    } catch {
      resolved = '';
    }
    const routed = req.path.toLowerCase();
    const api = [resolved, routed].some((path) => ['/api', '/trpc', '/v1'].some((prefix) => path === prefix || path.startsWith(`${prefix}/`)));
    const finish = (refusal: AppError | null) => {
      if (!refusal) {
        next();
        return;
      }
      if (refusal.status === 415) res.setHeader('Connection', 'close');
      const format = errorFormatOf(routed) === 'envelope' ? errorFormatOf(resolved) : errorFormatOf(routed);
      sendRefusal(req, res, refusal, format);
    };
    const foreign = foreignWriteRefusal(req, config);
    // A JSON body is never refused for its type: no promise and no turn of the microtask queue.
    if (foreign || !api || jsonContentType.test(req.headers['content-type'] ?? '')) {
      finish(foreign);
      return;
    }
    void nonJsonBodyRefusal(req).then(finish, next);
  };
}

/**
 * tRPC reads a body only under `application/json` exactly, and answered a structured-syntax JSON
 * type (`application/problem+json`, `application/vnd.api+json`), which the write guards and the
 * REST and `/v1` paths accept as JSON, with a 500. The type is named plainly for it instead, so
 * every path takes the same bodies.
 */
export function plainJsonTypeForTrpc(req: Request, _res: Response, next: NextFunction): void {
  const type = req.headers['content-type'];
  if (type !== undefined && jsonContentType.test(type)) req.headers['content-type'] = type.replace(/^application\/[\w.+-]*\+json/i, 'application/json');
  next();
}

