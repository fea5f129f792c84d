import { confirmCommand } from '../../core/commands/confirm-command.js';
import { requirePermission } from '../guards.js';
import { executeReply } from '../terminals/execute-reply.js';
import { confirmCommandInput, confirmCommandMeta, confirmCommandOutput } from './confirm-command.types.js';

export const confirmCommandProcedure = requirePermission('terminal:execute', { rateGroup: 'terminal', feature: 'systemCommands' })
  .meta(confirmCommandMeta)
  .input(confirmCommandInput)
  .output(confirmCommandOutput)
  .mutation(async ({ ctx, input }) => {
    const decision = await confirmCommand(ctx, { user: ctx.user, ip: ctx.ip }, input);
    if (!decision.executed) return { success: true as const, executed: false };
    return { ...executeReply(ctx.response, decision.outcome), executed: true };
  });
