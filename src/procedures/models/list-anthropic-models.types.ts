import type { ProcedureMeta } from '../meta.js';

export const listAnthropicModelsMeta = {
  openapi: {
    method: 'GET',
    path: '/api/anthropic/models',
    tags: ['models'],
    summary: "Anthropic's models as offered to the caller's apiKey (query)",
  },
} satisfies ProcedureMeta;
