import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam, successOutput } from '../schemas/common.js';

export const abortStreamMeta = {
  openapi: {
    method: 'POST',
    path: '/api/streams/{streamId}/abort',
    tags: ['chat'],
    summary: 'Stop a generation: the provider request is closed and the partial answer stored as aborted',
  },
} satisfies ProcedureMeta;

export const abortStreamInput = z.object({ streamId: idParam });
export const abortStreamOutput = successOutput;
