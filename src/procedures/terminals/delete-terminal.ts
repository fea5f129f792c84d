import { atHome, terminalHome } from '../at-home.js';
import { deleteTerminal } from '../../core/terminals/delete-terminal.js';
import { requirePermission } from '../guards.js';
import { successMessageOutput } from '../schemas/common.js';
import { deleteTerminalMeta } from './delete-terminal.types.js';
import { terminalIdInput } from './get-terminal.types.js';

export const deleteTerminalProcedure = requirePermission('terminal:kill', { rateGroup: 'terminal', feature: 'systemCommands' })
  .meta(deleteTerminalMeta)
  .input(terminalIdInput)
  .output(successMessageOutput)
  .mutation(
    atHome(terminalHome(), async ({ ctx, input }) => {
      await deleteTerminal(ctx, { user: ctx.user, ip: ctx.ip }, input.terminalId);
      return { success: true, message: 'Terminal ended' };
    }),
  );
