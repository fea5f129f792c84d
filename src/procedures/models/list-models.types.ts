import type { ProcedureMeta } from '../meta.js';

export const listModelsMeta = {
  openapi: {
    method: 'GET',
    path: '/api/models',
    tags: ['models'],
    summary: "Every provider's models; unreachable providers are left out, the active model is always listed",
  },
} satisfies ProcedureMeta;
