import type { z } from 'zod';
import type { ExecuteOutcome } from '../../core/commands/execute-command.js';
import type { ResponseControl } from '../context.js';
import type { executeReplySchema } from '../schemas/terminal.js';

export type ExecuteReply = z.infer<typeof executeReplySchema>;

/** CONTRACT §4's reply for each way an execute ends; a held command answers 202. */
export function executeReply(response: ResponseControl, outcome: ExecuteOutcome): ExecuteReply {
  const risk = { risk: outcome.risk.level, reasons: outcome.risk.reasons };
  switch (outcome.kind) {
    case 'completed':
      return { success: true, output: outcome.output, exitCode: outcome.exitCode, ...risk };
    case 'timedOut':
      return { success: true, output: outcome.output, timedOut: true, status: 'busy', ...risk };
    case 'started':
      return { success: true, status: 'busy', ...risk };
    case 'held':
      response.status = 202;
      return { success: true, executed: false, status: 'pending_confirmation', commandId: outcome.commandId, ...risk };
  }
}
