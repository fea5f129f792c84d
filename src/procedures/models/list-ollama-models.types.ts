import type { ProcedureMeta } from '../meta.js';

export const listOllamaModelsMeta = {
  openapi: {
    method: 'GET',
    path: '/api/ollama/models',
    tags: ['models'],
    summary: "Ollama's installed models and the downloads in progress",
  },
} satisfies ProcedureMeta;
