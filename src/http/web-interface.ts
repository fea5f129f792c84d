import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response, type Router } from 'express';
import { AppError } from '../core/errors/app-error.js';
import { sendError } from './error-response.js';

/**
 * The page's Content-Security-Policy. Scripts and connections only from the service itself
 * (`connect-src 'self'` covers its WebSockets and SSE); inline styles are allowed because xterm.js
 * sizes its rows with a <style> element it writes at run time. Answers are sanitised too; this is
 * what still holds if a sanitiser bug lets markup through.
 */
export const webInterfaceCsp = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Where the built page is: dist/web beside the compiled server (dist/http → dist/web), or, when
 * the service runs from source (tests, `npm run dev`), the dist/web of the checkout.
 */
export function defaultWebRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = resolve(here, '..', 'web');
  return existsSync(join(beside, 'index.html')) ? beside : resolve(here, '..', '..', 'dist', 'web');
}

/**
 * Serves the web interface (CONTRACT §5: public, no rate group) at `/`: index.html never cached
 * (it names the current asset hashes), hashed assets cached for a year. There is no client-side
 * routing, so other paths fall through to the 404 envelope. A service started before the page
 * was built answers `/` with 503 naming the fix, and serves it once it is built.
 */
export function webInterface(root: string = defaultWebRoot()): Router {
  const router = express.Router();
  const indexFile = join(root, 'index.html');

  const sendIndex = (_req: Request, res: Response) => {
    if (!existsSync(indexFile)) {
      sendError(res, new AppError('SERVICE_UNAVAILABLE', 'The web interface is not built: run `npm run build`', { details: { reason: 'not_built' } }));
      return;
    }
    res.setHeader('Content-Security-Policy', webInterfaceCsp);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.sendFile(indexFile, { headers: { 'Cache-Control': 'no-cache' }, lastModified: true, etag: true });
  };
  // Two routes rather than one for both paths, so each is its own label in the metrics.
  router.get('/', sendIndex);
  router.get('/index.html', sendIndex);

  router.use(
    '/assets',
    express.static(join(root, 'assets'), {
      immutable: true,
      maxAge: '365d',
      index: false,
      redirect: false,
      fallthrough: true,
      setHeaders: (res) => {
        res.setHeader('X-Content-Type-Options', 'nosniff');
      },
    }),
  );
  return router;
}
