import type { Context } from './context.js';
import type { ProcedureMeta } from './meta.js';

/**
 * CONTRACT §9, counted in one place: every procedure call, whatever transport brought it (REST
 * under any path spelling or alias, /trpc single or batched, /v1, a WebSocket frame or upgrade),
 * counts once in the group its procedure declares. The first step of every procedure's gate
 * (guards.ts), so the limit comes before authentication (CONTRACT §2). A call carried here by
 * another instance was counted where it arrived. The group headers go into the reply's headers,
 * which each transport sends whether the call succeeds or fails.
 */
export async function countRequest(ctx: Context, meta: ProcedureMeta | undefined): Promise<void> {
  const group = meta?.rateGroup ?? 'general';
  if (ctx.rateLimits === null || group === 'none' || ctx.carried === true) return;
  const { headers, refusal } = await ctx.rateLimits.count(group, ctx.ip);
  Object.assign(ctx.response.headers, headers);
  if (refusal) throw refusal;
}
