import { toTerminalView } from '../../core/terminals/terminal-views.js';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { listTerminalsMeta, listTerminalsOutput } from './list-terminals.types.js';

export const listTerminalsProcedure = requirePermission('terminal:execute', { rateGroup: 'terminal', feature: 'systemCommands' })
  .meta(listTerminalsMeta)
  .input(noInput)
  .output(listTerminalsOutput)
  .query(({ ctx }) => ({ terminals: ctx.terminals.listFor(ctx.user.id).map(toTerminalView) }));
