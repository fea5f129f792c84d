import { createTerminal } from '../../core/terminals/create-terminal.js';
import { toTerminalView } from '../../core/terminals/terminal-views.js';
import { requirePermission } from '../guards.js';
import { createTerminalInput, createTerminalMeta, createTerminalOutput } from './create-terminal.types.js';

export const createTerminalProcedure = requirePermission('terminal:create', { rateGroup: 'terminal', feature: 'systemCommands' })
  .meta(createTerminalMeta)
  .input(createTerminalInput)
  .output(createTerminalOutput)
  .mutation(async ({ ctx, input }) => {
    const terminal = await createTerminal(ctx, { user: ctx.user, ip: ctx.ip }, input);
    return { success: true as const, ...toTerminalView(terminal) };
  });
