import { atHome, terminalHome } from '../at-home.js';
import { interruptTerminal } from '../../core/terminals/interrupt-terminal.js';
import { requirePermission } from '../guards.js';
import { successOutput } from '../schemas/common.js';
import { terminalIdInput } from './get-terminal.types.js';
import { interruptTerminalMeta } from './interrupt-terminal.types.js';

export const interruptTerminalProcedure = requirePermission('terminal:execute', { rateGroup: 'terminal', feature: 'systemCommands' })
  .meta(interruptTerminalMeta)
  .input(terminalIdInput)
  .output(successOutput)
  .mutation(
    atHome(terminalHome(), async ({ ctx, input }) => {
      await interruptTerminal(ctx, { user: ctx.user, ip: ctx.ip }, input.terminalId);
      return { success: true };
    }),
  );
