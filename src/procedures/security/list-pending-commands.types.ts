import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { queryFlag } from '../schemas/common.js';
import { riskLevelSchema } from '../schemas/terminal.js';

export const listPendingCommandsMeta = {
  openapi: {
    method: 'GET',
    path: '/api/security/pending',
    tags: ['security'],
    summary: "Commands waiting for confirmation: the caller's, or everyone's with all=true (Lead, TheDude)",
  },
} satisfies ProcedureMeta;

export const listPendingCommandsInput = z.object({ all: queryFlag.default(false) });

export const listPendingCommandsOutput = z.object({
  pending: z.array(
    z.object({
      id: z.string(),
      command: z.string(),
      risk: riskLevelSchema,
      reasons: z.array(z.string()),
      timestamp: z.string(),
      expiresAt: z.string(),
      terminalId: z.string(),
      workingDirectory: z.string(),
      userId: z.string(),
    }),
  ),
});
