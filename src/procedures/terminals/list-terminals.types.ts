import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { terminalViewSchema } from '../schemas/terminal.js';

export const listTerminalsMeta = {
  openapi: { method: 'GET', path: '/api/terminals', tags: ['terminals'], summary: "The caller's terminals on this instance" },
} satisfies ProcedureMeta;

export const listTerminalsOutput = z.object({ terminals: z.array(terminalViewSchema) });
