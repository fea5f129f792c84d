import { atHome, terminalHome } from '../at-home.js';
import { toTerminalView } from '../../core/terminals/terminal-views.js';
import { requirePermission } from '../guards.js';
import { getTerminalMeta, getTerminalOutput, terminalIdInput } from './get-terminal.types.js';

export const getTerminalProcedure = requirePermission('terminal:execute', { rateGroup: 'terminal', feature: 'systemCommands' })
  .meta(getTerminalMeta)
  .input(terminalIdInput)
  .output(getTerminalOutput)
  .query(
    atHome(terminalHome(), ({ ctx, input }) => toTerminalView(ctx.terminals.require(ctx.user.id, input.terminalId))),
  );
