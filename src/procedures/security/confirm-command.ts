import { ENDED } from '../../core/cluster/cluster-directory.js';
import { confirmCommand } from '../../core/commands/confirm-command.js';
import { holdsRole } from '../../core/auth/permissions.js';
import { AppError } from '../../core/errors/app-error.js';
import { isId } from '../../core/ids.js';
import { atHome, type HomeLocator } from '../at-home.js';
import { requirePermission } from '../guards.js';
import { executeReply } from '../terminals/execute-reply.js';
import { confirmCommandInput, confirmCommandMeta, confirmCommandOutput } from './confirm-command.types.js';

/**
 * A held command runs in its terminal, so the confirmation goes where that terminal lives. When
 * nobody knows where (Redis lost the claim), the answer is 503 and the command stays pending:
 * deciding here would drop it as "terminal gone" (CONTRACT §9b).
 */
const commandHome: HomeLocator<{ commandId: string }> = async (ctx, input) => {
  if (!isId(input.commandId)) return null;
  const row = await ctx.store.db.pendingCommand.findUnique({
    where: { id: input.commandId },
    select: { terminalId: true, status: true, userId: true },
  });
  // Whatever the caller may not decide is answered here, as the 404 it is.
  const mayDecide = row?.userId === ctx.user.id || holdsRole(ctx.user.roles, 'Lead');
  if (row?.status !== 'pending' || !mayDecide || ctx.terminals.find(row.terminalId)) return null;
  const home = await ctx.cluster.directory.homeOf('terminal', row.terminalId);
  if (home === null) {
    throw new AppError('SERVICE_UNAVAILABLE', "The instance holding this command's terminal is not known now; the command stays pending", {
      headers: { 'Retry-After': '5' },
      details: { reason: 'owner_unknown' },
    });
  }
  return home === ENDED ? null : home;
};

export const confirmCommandProcedure = requirePermission('terminal:execute', { rateGroup: 'terminal', feature: 'systemCommands' })
  .meta(confirmCommandMeta)
  .input(confirmCommandInput)
  .output(confirmCommandOutput)
  .mutation(
    atHome(commandHome, async ({ ctx, input }) => {
      const decision = await confirmCommand(ctx, { user: ctx.user, ip: ctx.ip }, input);
      if (!decision.executed) return { success: true as const, executed: false };
      return { ...executeReply(ctx.response, decision.outcome), executed: true };
    }),
  );
