import { atHome, terminalHome } from '../at-home.js';
import { requirePermission } from '../guards.js';
import { getTerminalOutputInput, getTerminalOutputMeta, getTerminalOutputOutput } from './get-terminal-output.types.js';

export const getTerminalOutputProcedure = requirePermission('terminal:execute', { rateGroup: 'terminal', feature: 'systemCommands' })
  .meta(getTerminalOutputMeta)
  .input(getTerminalOutputInput)
  .output(getTerminalOutputOutput)
  .query(
    atHome(terminalHome(), ({ ctx, input }) => {
      const terminal = ctx.terminals.require(ctx.user.id, input.terminalId);
      return { output: terminal.log.tail(input.lines), lastUpdate: terminal.log.lastUpdate.toISOString(), status: terminal.status };
    }),
  );
