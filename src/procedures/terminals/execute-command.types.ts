import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';
import { executeReplySchema } from '../schemas/terminal.js';

export const executeCommandMeta = {
  openapi: {
    method: 'POST',
    path: '/api/terminals/{terminalId}/execute',
    tags: ['terminals'],
    summary: 'Run a command after risk analysis: it runs, is held for confirmation (202) or is refused',
  },
} satisfies ProcedureMeta;

export const executeCommandInput = z.object({
  terminalId: idParam,
  command: z.string().trim().min(1).max(100_000),
  waitForCompletion: z.boolean().default(true),
});

export const executeCommandOutput = executeReplySchema;
