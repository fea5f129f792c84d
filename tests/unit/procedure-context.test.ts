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
  const child = vi.fn(() => ({ marker: 'child' }) as unknown as Logger);
  return { logger: { child } as unknown as Logger, child };
}

function contextFor(user: User): { ctx: Context; child: ReturnType<typeof fakeLogger>['child'] } {
  const { logger, child } = fakeLogger();
  const deps = { logger, rateLimits: null } as unknown as AppDeps;
  return { ctx: createContextInner(deps, { requestId: 'r1', ip: '203.0.113.9', identify: () => Promise.resolve(user) }), child };
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
    const { ctx, child } = contextFor(userWith('u1', ['User']));
    expect(child).not.toHaveBeenCalled();
    expect(ctx.logger).toEqual({ marker: 'child' });
    expect(ctx.logger).toBe(ctx.logger);
    expect(child).toHaveBeenCalledTimes(1);
    expect(child).toHaveBeenCalledWith({ requestId: 'r1' });
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
