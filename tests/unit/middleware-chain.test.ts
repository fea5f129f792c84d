import { initTRPC, TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Context } from '../../src/procedures/context.js';
import { procedureCall } from '../../src/routers/procedure-at-path.js';
import { middlewareChain } from '../../src/routers/middleware-chain.js';

// The REST bridge runs each procedure's middleware chain itself (middleware-chain.ts) instead of
// through tRPC's caller. Every case here runs the same procedure both ways and expects the same
// outcome: the same data, or an error of the same class, code, message and cause.

interface TestContext {
  seen: string[];
  user?: string;
  extra?: string;
}

const t = initTRPC.context<TestContext>().meta<{ tag: string }>().create();

/** A gate like guards.ts's: records what it saw, puts the caller on the context, can refuse. */
const gate = t.middleware(async ({ ctx, meta, path, type, input, getRawInput, next }) => {
  ctx.seen.push(`gate ${path} ${type} ${meta?.tag ?? '-'} ${input === undefined ? 'undefined' : JSON.stringify(input)} raw=${JSON.stringify(await getRawInput())}`);
  const raw = (await getRawInput()) as { refuse?: string } | undefined;
  if (raw?.refuse === 'trpc') throw new TRPCError({ code: 'FORBIDDEN', message: 'refused' });
  if (raw?.refuse === 'plain') throw new Error('plain failure');
  if (raw?.refuse === 'string') throw 'a string' as unknown as Error;
  Object.assign(ctx, { user: 'u1' });
  return next<{ user: string }>({});
});

/** A middleware that hands on another context (merged, not replaced) and records the result it got. */
const withExtra = t.middleware(async ({ ctx, next }) => {
  const result = await next({ ctx: { extra: 'x' } });
  ctx.seen.push(`after ${result.ok ? 'ok' : 'error'}`);
  return result;
});

const input = z.object({ n: z.number().int(), refuse: z.string().optional(), badOutput: z.boolean().optional(), throwIn: z.string().optional() });
const procedures = {
  plain: t.procedure
    .meta({ tag: 'plain' })
    .use(gate)
    .input(input)
    .output(z.object({ doubled: z.number() }))
    .mutation(({ ctx, input }) => {
      ctx.seen.push(`resolver user=${ctx.user} n=${input.n}`);
      if (input.throwIn === 'trpc') throw new TRPCError({ code: 'NOT_FOUND', message: 'no such thing' });
      if (input.throwIn === 'plain') throw new RangeError('out of range');
      return input.badOutput === true ? ({ doubled: 'no' } as unknown as { doubled: number }) : { doubled: input.n * 2 };
    }),
  merged: t.procedure
    .meta({ tag: 'merged' })
    .use(gate)
    .use(withExtra)
    .input(input)
    .query(({ ctx, input }) => ({ user: ctx.user, extra: ctx.extra, n: input.n, sameSeen: Array.isArray(ctx.seen) })),
  swapsInput: t.procedure
    .use(({ next }) => next({ input: { n: 41, kept: true } }))
    .use(({ next }) => next({ getRawInput: () => Promise.resolve({ n: 7 }) }))
    .input(z.object({ n: z.number() }))
    .query(({ input }) => input),
  noResult: t.procedure.use((() => Promise.resolve(undefined)) as unknown as Parameters<typeof t.procedure.use>[0]).query(() => 'never'),
};
const router = t.router(procedures);
const callerOf = t.createCallerFactory(router);

type Outcome = { data: unknown } | { error: { class: string; code?: string; message: string; cause?: string; causeClass?: string } };

async function outcome(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { data: await run() };
  } catch (error) {
    const e = error as Error & { code?: string; cause?: Error };
    return {
      error: {
        class: e.constructor.name,
        ...(e.code === undefined ? {} : { code: e.code }),
        message: e.message,
        ...(e.cause === undefined ? {} : { cause: e.cause.message, causeClass: e.cause.constructor.name }),
      },
    };
  }
}

/** Runs `path` with `rawInput` through tRPC's caller and through the bridge's call; both outcomes and trails. */
async function both(path: keyof typeof procedures, rawInput: unknown) {
  const viaTrpc: TestContext = { seen: [] };
  const viaChain: TestContext = { seen: [] };
  const caller = callerOf(viaTrpc) as unknown as Record<keyof typeof procedures, (input: unknown) => Promise<unknown>>;
  const trpc = await outcome(() => caller[path](rawInput));
  const call = procedureCall(router, path);
  const chain = await outcome(() => call(viaChain as unknown as Context, rawInput));
  return { trpc, chain, trpcSeen: viaTrpc.seen, chainSeen: viaChain.seen };
}

describe('the REST bridge runs a procedure chain as tRPC does', () => {
  it('the bridge does not fall back to tRPC for the procedures it serves', () => {
    // Otherwise every case below would compare tRPC with itself.
    for (const procedure of Object.values(procedures)) expect(middlewareChain(procedure._def as never)).not.toBeNull();
  });

  it('passes the call, the meta, the input so far and the raw input to each step, and the gate’s caller on', async () => {
    const { trpc, chain, trpcSeen, chainSeen } = await both('plain', { n: 4 });
    expect(chain).toEqual(trpc);
    expect(chain).toEqual({ data: { doubled: 8 } });
    expect(chainSeen).toEqual(trpcSeen);
    expect(chainSeen).toEqual(['gate plain mutation plain undefined raw={"n":4}', 'resolver user=u1 n=4']);
  });

  it('merges a context handed to next() into the one before, and the step before sees the result', async () => {
    const { trpc, chain, trpcSeen, chainSeen } = await both('merged', { n: 1 });
    expect(chain).toEqual(trpc);
    expect(chain).toEqual({ data: { user: 'u1', extra: 'x', n: 1, sameSeen: true } });
    expect(chainSeen).toEqual(trpcSeen);
  });

  it('goes on with the input and the raw input a step names', async () => {
    const { trpc, chain } = await both('swapsInput', { n: 1 });
    expect(chain).toEqual(trpc);
    // tRPC's input step lays the parsed raw input over the input so far.
    expect(chain).toEqual({ data: { n: 7, kept: true } });
  });

  it('an input the schema refuses fails as BAD_REQUEST with the schema’s error as cause, the resolver never running', async () => {
    for (const bad of [{ n: 1.5 }, { n: 'x' }, 'not an object', undefined, null, { n: 1, refuse: 7 }]) {
      const { trpc, chain, trpcSeen, chainSeen } = await both('plain', bad);
      expect(chain).toEqual(trpc);
      expect((chain as { error: { code: string } }).error.code).toBe('BAD_REQUEST');
      expect(chainSeen).toEqual(trpcSeen);
      expect(chainSeen.some((line) => line.startsWith('resolver'))).toBe(false);
    }
  });

  it('a gate’s refusal stops the call with that error; a plain throw or a thrown string is wrapped as tRPC wraps it', async () => {
    for (const refuse of ['trpc', 'plain', 'string']) {
      const { trpc, chain, trpcSeen, chainSeen } = await both('plain', { n: 1, refuse });
      expect(chain).toEqual(trpc);
      expect('error' in chain).toBe(true);
      expect(chainSeen).toEqual(trpcSeen);
      expect(chainSeen.some((line) => line.startsWith('resolver'))).toBe(false);
    }
  });

  it('a resolver’s error, and an output the output schema refuses, fail as through tRPC', async () => {
    for (const rawInput of [{ n: 1, throwIn: 'trpc' }, { n: 1, throwIn: 'plain' }, { n: 1, badOutput: true }]) {
      const { trpc, chain } = await both('plain', rawInput);
      expect(chain).toEqual(trpc);
      expect('error' in chain).toBe(true);
    }
    const { chain } = await both('plain', { n: 1, badOutput: true });
    expect(chain).toMatchObject({ error: { class: 'TRPCError', code: 'INTERNAL_SERVER_ERROR', message: 'Output validation failed' } });
  });

  it('a chain that ends without a result is an internal error, not a success', async () => {
    const { trpc, chain } = await both('noResult', {});
    expect('error' in trpc && 'error' in chain).toBe(true);
    expect(chain).toMatchObject({ error: { class: 'TRPCError', code: 'INTERNAL_SERVER_ERROR' } });
  });

  it('a procedure with a custom caller, or no middleware list, is left to tRPC', () => {
    expect(middlewareChain({ middlewares: [() => Promise.resolve(undefined)], caller: () => undefined })).toBeNull();
    expect(middlewareChain({ middlewares: [() => Promise.resolve(undefined)], experimental_caller: true })).toBeNull();
    expect(middlewareChain({})).toBeNull();
    expect(middlewareChain({ middlewares: ['not a function'] })).toBeNull();
  });
});
