import { sendTerminalInput } from '../../core/terminals/send-terminal-input.js';
import { atHome, terminalHome } from '../at-home.js';
import { requirePermission } from '../guards.js';
import { sendTerminalInputInput, sendTerminalInputMeta, sendTerminalInputOutput } from './send-terminal-input.types.js';

export const sendTerminalInputProcedure = requirePermission('terminal:execute', { rateGroup: 'none', feature: 'systemCommands' })
  .meta(sendTerminalInputMeta)
  .input(sendTerminalInputInput)
  .output(sendTerminalInputOutput)
  .mutation(
    atHome(terminalHome(), async ({ ctx, input }) => {
      const { held } = await sendTerminalInput(ctx, { user: ctx.user, ip: ctx.ip }, input.terminalId, input.data);
      return { success: true, held };
    }),
  );
