import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';
import { streamHandleSchema } from '../schemas/chat.js';

export const getStreamMeta = {
  openapi: {
    method: 'GET',
    path: '/api/streams/{streamId}',
    tags: ['chat'],
    summary: 'Replay a stream after Last-Event-ID (or ?after=<seq>) as Server-Sent Events, then follow it until done',
  },
  sse: true,
} satisfies ProcedureMeta;

export const getStreamInput = z.object({
  streamId: idParam,
  /** The last sequence number the client has; the Last-Event-ID header, when sent, wins. */
  after: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
});

export const getStreamOutput = streamHandleSchema;
