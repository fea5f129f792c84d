import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';
import { terminalViewSchema } from '../schemas/terminal.js';

export const getTerminalMeta = {
  openapi: { method: 'GET', path: '/api/terminals/{terminalId}', tags: ['terminals'], summary: "A terminal's status, directory and last exit code" },
} satisfies ProcedureMeta;

export const terminalIdInput = z.object({ terminalId: idParam });

export const getTerminalOutput = terminalViewSchema;
