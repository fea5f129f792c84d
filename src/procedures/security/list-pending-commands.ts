import { listPendingCommands } from '../../core/commands/list-pending-commands.js';
import { requirePermission, requireRoleFor } from '../guards.js';
import { listPendingCommandsInput, listPendingCommandsMeta, listPendingCommandsOutput } from './list-pending-commands.types.js';

export const listPendingCommandsProcedure = requirePermission('terminal:execute', { rateGroup: 'terminal', feature: 'systemCommands' })
  .meta(listPendingCommandsMeta)
  .input(listPendingCommandsInput)
  .output(listPendingCommandsOutput)
  .query(async ({ ctx, input }) => {
    if (input.all) await requireRoleFor(ctx, ['Lead']);
    return { pending: await listPendingCommands(ctx.store, ctx.user.id, input.all) };
  });
