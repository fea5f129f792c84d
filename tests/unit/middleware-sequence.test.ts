import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { healthEndpoints } from '../../src/http/health-endpoints.js';
import { middlewareSequence } from '../../src/http/middleware-sequence.js';
import type { Store } from '../../src/core/db/store.js';
import { rawRequest } from '../helpers/raw-request.js';

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

/** An app of one sequence, a route after it and an error handler; answers each request's trail. */
async function appWith(handlers: RequestHandler[]): Promise<(method: string, path: string) => Promise<{ status: number; body: string }>> {
  const app = express();
  app.use(middlewareSequence(handlers));
  app.use((req, res) => {
    res.json({ trail: res.locals.trail as string[], after: true });
  });
  const onError: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    res.status(500).json({ trail: res.locals.trail as string[], error: error instanceof Error ? error.message : String(error) });
  };
  app.use(onError);
  server = createServer(app);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return async (method, path) => {
    const { status, text } = await rawRequest(`http://127.0.0.1:${port}`, method, path);
    return { status, body: text };
  };
}

const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.locals.trail = [...((res.locals.trail as string[] | undefined) ?? []), name];
    next();
  };

describe('middleware sequence', () => {
  it('runs its handlers in order, then the layers after it', async () => {
    const call = await appWith([mark('a'), mark('b'), mark('c')]);
    expect(JSON.parse((await call('GET', '/x')).body)).toEqual({ trail: ['a', 'b', 'c'], after: true });
  });

  it('goes on past falsy and "route" arguments to next, as Express does', async () => {
    const passOn =
      (argument: 'route' | null): RequestHandler =>
      (_req, _res, next) => {
        next(argument);
      };
    const call = await appWith([mark('a'), passOn('route'), mark('b'), passOn(null), mark('c')]);
    expect(JSON.parse((await call('GET', '/x')).body)).toEqual({ trail: ['a', 'b', 'c'], after: true });
  });

  it('leaves for the error handlers on next(error), a throw or a rejected promise, skipping the rest', async () => {
    const failing: RequestHandler[] = [
      (_req, _res, next) => {
        next(new Error('passed'));
      },
      () => {
        throw new Error('thrown');
      },
      () => Promise.reject(new Error('rejected')),
    ];
    for (const failure of failing) {
      const call = await appWith([mark('a'), failure, mark('b')]);
      const reply = await call('GET', '/x');
      expect(reply.status).toBe(500);
      expect(JSON.parse(reply.body)).toMatchObject({ trail: ['a'] });
      server?.close();
    }
  });

  it('lets a handler answer and end the sequence', async () => {
    const answer: RequestHandler = (_req, res) => {
      res.status(204).end();
    };
    const call = await appWith([mark('a'), answer, mark('b')]);
    expect((await call('GET', '/x')).status).toBe(204);
  });
});

describe('health routes in the sequence', () => {
  const health = healthEndpoints({ store: {} as Store });

  it('hand every other request on at once, not after a turn of the event loop', () => {
    // Express's router, matching none of its routes, hands on only from setImmediate: every
    // request would wait for that turn. The paths that cannot be its own never enter it.
    for (const path of ['/api/unified/stream', '/trpc/system.status', '/v1/models', '/']) {
      let passed = false;
      health({ path, url: path, method: 'POST', headers: {} } as unknown as Request, {} as unknown as Response, () => {
        passed = true;
      });
      expect(passed, path).toBe(true);
    }
  });

  it('still answer their own paths, in any case and with a trailing slash, and HEAD', async () => {
    const call = await appWith([health]);
    for (const path of ['/healthz', '/HEALTHZ', '/healthz/', '/Healthz?x=1']) {
      const reply = await call('GET', path);
      expect(reply.status, path).toBe(200);
      expect(JSON.parse(reply.body), path).toEqual({ status: 'ok' });
    }
    expect((await call('HEAD', '/healthz')).status).toBe(200);
    // Not its path: the layer after the sequence answers.
    expect(JSON.parse((await call('GET', '/healthzz')).body)).toEqual({ after: true });
  });
});
