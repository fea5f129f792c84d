import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';

/** No REST path: typed clients subscribe at /trpc; WebSocket clients get the same events as `context_update` frames on /ws. */
export const followEventsMeta = {} satisfies ProcedureMeta;

export const followEventsInput = z
  .object({
    /** Set by tRPC's client when it reconnects: the `tracked()` id of the last event it had. */
    lastEventId: z
      .string()
      .regex(/^\d{13}-\d{6}-[\w-]{1,64}$/)
      .nullish(),
  })
  .default({});
