import type { ProcedureMeta } from '../meta.js';

export const interruptTerminalMeta = {
  openapi: {
    method: 'POST',
    path: '/api/terminals/{terminalId}/interrupt',
    tags: ['terminals'],
    summary: 'Send Ctrl-C to the running command',
  },
} satisfies ProcedureMeta;
