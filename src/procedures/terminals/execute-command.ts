import { atHome, terminalHome } from '../at-home.js';
import { executeCommand } from '../../core/commands/execute-command.js';
import { requirePermission } from '../guards.js';
import { executeReply } from './execute-reply.js';
import { executeCommandInput, executeCommandMeta, executeCommandOutput } from './execute-command.types.js';

export const executeCommandProcedure = requirePermission('terminal:execute', { rateGroup: 'terminal', feature: 'systemCommands' })
  .meta(executeCommandMeta)
  .input(executeCommandInput)
  .output(executeCommandOutput)
  .mutation(
    atHome(terminalHome(), async ({ ctx, input }) => {
      const terminal = ctx.terminals.require(ctx.user.id, input.terminalId);
      const outcome = await executeCommand(ctx, { user: ctx.user, ip: ctx.ip }, terminal, input.command, {
        waitForCompletion: input.waitForCompletion,
      });
      return executeReply(ctx.response, outcome);
    }),
  );
