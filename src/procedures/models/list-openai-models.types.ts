import type { ProcedureMeta } from '../meta.js';

export const listOpenAiModelsMeta = {
  openapi: {
    method: 'GET',
    path: '/api/openai/models',
    tags: ['models'],
    summary: "OpenAI's chat models as offered to the caller's apiKey (query)",
  },
} satisfies ProcedureMeta;
