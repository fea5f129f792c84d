import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';
import { executeReplySchema } from '../schemas/terminal.js';

export const confirmCommandMeta = {
  openapi: {
    method: 'POST',
    path: '/api/security/confirm',
    tags: ['security'],
    summary: 'Run (confirmed: true) or drop (false) a held command',
  },
} satisfies ProcedureMeta;

export const confirmCommandInput = z.object({ commandId: idParam, confirmed: z.boolean() });

export const confirmCommandOutput = executeReplySchema;
