import type { ProcedureMeta } from '../meta.js';

export const deleteTerminalMeta = {
  openapi: {
    method: 'DELETE',
    path: '/api/terminals/{terminalId}',
    tags: ['terminals'],
    summary: 'End a terminal: its shell and every process it started',
  },
} satisfies ProcedureMeta;
