import type { ProcedureMeta } from '../meta.js';

export const getCurrentConversationMeta = {
  openapi: {
    method: 'GET',
    path: '/api/conversation/current',
    tags: ['conversations'],
    summary: "The caller's current conversation (made if none)",
  },
} satisfies ProcedureMeta;
