import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middlewares that every request passes, run in order as one Express layer. Express's router
 * spends per layer (matching its path, its parameters, its trace check) about what a small
 * middleware does itself; these are all mounted at `/`, so none of that decides anything. What a
 * layer may do is kept: `next()` goes on to the following one, `next(error)` (or a throw, or a
 * rejected promise) leaves the sequence for the error handlers, and once the last has called
 * `next()` the app's layers after the sequence run.
 */
export function middlewareSequence(handlers: readonly RequestHandler[]): RequestHandler {
  return function runSequence(req: Request, res: Response, done: NextFunction): void {
    let index = 0;
    const step = (error?: unknown): void => {
      // As Express's router reads it: anything falsy, or 'route', goes on.
      if (Boolean(error) && error !== 'route') {
        done(error);
        return;
      }
      const handler = handlers[index++];
      if (handler === undefined) {
        done();
        return;
      }
      try {
        const result: unknown = handler(req, res, step);
        if (result instanceof Promise) {
          result.then(undefined, (rejected: unknown) => {
            done(rejected ?? new Error('Rejected promise'));
          });
        }
      } catch (thrown) {
        done(thrown);
      }
    };
    step();
  };
}
