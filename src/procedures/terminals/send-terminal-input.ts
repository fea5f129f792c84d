import { sendTerminalInput } from '../../core/terminals/send-terminal-input.js';
import { atHome, terminalHome } from '../at-home.js';
import { requirePermission } from '../guards.js';
import { successOutput } from '../schemas/common.js';
import { sendTerminalInputInput, sendTerminalInputMeta } from './send-terminal-input.types.js';

export const sendTerminalInputProcedure = requirePermission('terminal:execute', { rateGroup: 'general', feature: 'systemCommands' })
  .meta(sendTerminalInputMeta)
  .input(sendTerminalInputInput)
  .output(successOutput)
  .mutation(
    atHome(terminalHome(), async ({ ctx, input }) => {
      await sendTerminalInput(ctx, { user: ctx.user, ip: ctx.ip }, input.terminalId, input.data);
      return { success: true };
    }),
  );
