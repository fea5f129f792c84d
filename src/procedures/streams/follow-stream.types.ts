import { z } from 'zod';
import { idParam } from '../schemas/common.js';
import type { ProcedureMeta } from '../meta.js';

/** No REST path: typed clients subscribe at /trpc (tRPC's SSE framing, CONTRACT §0); REST has GET /api/streams/{streamId}. */
export const followStreamMeta = {} satisfies ProcedureMeta;

export const followStreamInput = z.object({
  streamId: idParam,
  /** Set by tRPC's client when it reconnects: the `tracked()` id (the sequence number) it last had. */
  lastEventId: z.string().regex(/^\d{1,9}$/).nullish(),
});
