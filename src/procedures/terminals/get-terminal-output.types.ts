import { z } from 'zod';
import { OUTPUT_LOG_LINES } from '../../core/terminals/terminal-session.js';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';

export const getTerminalOutputMeta = {
  openapi: {
    method: 'GET',
    path: '/api/terminals/{terminalId}/output',
    tags: ['terminals'],
    summary: 'The last lines of the session log, each command preceded by "$ <command>"',
  },
} satisfies ProcedureMeta;

export const getTerminalOutputInput = z.object({
  terminalId: idParam,
  lines: z.coerce.number().int().min(1).max(OUTPUT_LOG_LINES).default(50),
});

export const getTerminalOutputOutput = z.object({ output: z.string(), lastUpdate: z.string(), status: z.enum(['running', 'busy', 'exited']) });
