import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { User } from '../../src/core/auth/permissions.js';
import type { Logger } from '../../src/core/logger.js';
import { createContextInner, type AppDeps, type Context } from '../../src/procedures/context.js';
import { appErrorFrom } from '../../src/procedures/error-mapping.js';
import { requirePermission } from '../../src/procedures/guards.js';
import { router } from '../../src/procedures/trpc.js';
import { procedureCall } from '../../src/routers/procedure-at-path.js';
import { userWith } from '../helpers/callers.js';

function fakeLogger() {
  const made: { logged: unknown[]; self: unknown }[] = [];
  const child = vi.fn(() => {
    const record = { logged: [] as unknown[], self: undefined as unknown };
    made.push(record);
    return {
      marker: 'child',
      // Records the `this` it was called with: pino's methods read their logger from it.
      warn(this: unknown, ...args: unknown[]) {
        record.self = this;
        record.logged.push(args);
      },
    } as unknown as Logger;
  });
  return { logger: { child } as unknown as Logger, child, made };
}

function contextFor(user: User): { ctx: Context; child: ReturnType<typeof fakeLogger>['child']; made: ReturnType<typeof fakeLogger>['made'] } {
  const { logger, child, made } = fakeLogger();
  const deps = { logger, rateLimits: null } as unknown as AppDeps;
  return { ctx: createContextInner(deps, { requestId: 'r1', ip: '203.0.113.9', identify: () => Promise.resolve(user) }), child, made };
}

let seen: (Context & { user: User }) | undefined;
const testRouter = router({
  area: router({
    echo: requirePermission('chat:send', { rateGroup: 'chat' })
      .input(z.object({ text: z.string().max(5) }))
      .output(z.object({ text: z.string() }))
      .mutation(({ ctx, input }) => {
        seen = ctx;
        return { text: input.text, extra: 'stripped by the output schema' };
      }),
  }),
});

describe('the procedure context', () => {
  it('makes the request logger only when something logs', () => {
    const { ctx, child, made } = contextFor(userWith('u1', ['User']));
    expect(child).not.toHaveBeenCalled();
    // Reading the property, or copying the context, is not logging.
    const logger = ctx.logger;
    const copy = { ...ctx };
    expect(copy.logger).toBe(logger);
    expect(child).not.toHaveBeenCalled();
    ctx.logger.warn({ n: 1 }, 'first');
    copy.logger.warn('second');
    expect(child).toHaveBeenCalledTimes(1);
    expect(child).toHaveBeenCalledWith({ requestId: 'r1' });
    expect(made).toHaveLength(1);
    expect(made[0]?.logged).toEqual([[{ n: 1 }, 'first'], ['second']]);
    // The child's own method ran on the child, not on the stand-in.
    expect((made[0]?.self as { marker?: string } | undefined)?.marker).toBe('child');
    expect((ctx.logger as unknown as { marker: string }).marker).toBe('child');
  });

  it('gives each request context its own fields, none of another request’s', () => {
    const deps = { logger: fakeLogger().logger, rateLimits: null, config: { shared: true } } as unknown as AppDeps;
    const first = createContextInner(deps, { requestId: 'a', ip: '192.0.2.1', identify: () => Promise.resolve(userWith('u1', ['User'])), carried: true, idempotencyKey: 'k' });
    const second = createContextInner(deps, { requestId: 'b', ip: '192.0.2.2', identify: () => Promise.resolve(userWith('u2', ['User'])) });
    first.response.headers['X-One'] = '1';
    Object.assign(first, { user: 'u1' });
    expect(second).toMatchObject({ requestId: 'b', ip: '192.0.2.2', carried: undefined, idempotencyKey: undefined, lastEventId: undefined, response: { headers: {} } });
    expect('user' in second).toBe(false);
    expect(second.response).not.toBe(first.response);
    expect(second.config).toBe(first.config);
    expect(first).toMatchObject({ requestId: 'a', carried: true, idempotencyKey: 'k' });
  });

  it('gives the procedure its caller on the request context itself, not on a copy of it', async () => {
    const user = userWith('u1', ['User']);
    const { ctx, child } = contextFor(user);
    const echo = procedureCall(testRouter, 'area.echo');
    await expect(echo(ctx, { text: 'hi' })).resolves.toEqual({ text: 'hi' });
    // A copy per middleware would have read (and made) the logger and been another object.
    expect(seen).toBe(ctx);
    expect(seen?.user).toBe(user);
    expect(child).not.toHaveBeenCalled();
  });

  it('runs the whole chain through a procedure call: guard, input validation, output validation', async () => {
    const { ctx } = contextFor(userWith('u1', ['User']));
    const echo = procedureCall(testRouter, 'area.echo');
    const tooLong = await echo(ctx, { text: 'far too long' }).catch((error: unknown) => appErrorFrom(error));
    expect(tooLong).toMatchObject({ code: 'INVALID_REQUEST', status: 400 });
    const anonymous = createContextInner({ logger: fakeLogger().logger, rateLimits: null } as unknown as AppDeps, {
      requestId: 'r2',
      ip: '203.0.113.9',
      identify: () => Promise.reject(new Error('no token')),
    });
    await expect(echo(anonymous, { text: 'hi' })).rejects.toThrow();
    expect(() => procedureCall(testRouter, 'area.missing')).toThrow(TypeError);
  });
});
