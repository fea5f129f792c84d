import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { environmentSchema, terminalViewSchema } from '../schemas/terminal.js';

export const createTerminalMeta = {
  openapi: {
    method: 'POST',
    path: '/api/terminals',
    tags: ['terminals'],
    summary: "Start a sandboxed shell in a workspace (the caller's active one by default)",
  },
} satisfies ProcedureMeta;

export const createTerminalInput = z.object({
  workingDirectory: z.string().min(1).max(4096).optional(),
  environment: environmentSchema.optional(),
});

export const createTerminalOutput = terminalViewSchema.extend({ success: z.literal(true) });
