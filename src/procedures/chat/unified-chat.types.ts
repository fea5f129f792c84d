import type { ProcedureMeta } from '../meta.js';
import { chatReplySchema, streamHandleSchema, unifiedChatInput } from '../schemas/chat.js';

export const unifiedMessageMeta = {
  openapi: {
    method: 'POST',
    path: '/api/unified/message',
    tags: ['chat'],
    summary: 'Send a message to the named provider and get the whole answer as JSON',
  },
} satisfies ProcedureMeta;

export const unifiedStreamMeta = {
  openapi: {
    method: 'POST',
    path: '/api/unified/stream',
    tags: ['chat'],
    summary: 'Send a message to the named provider and stream the answer as Server-Sent Events',
  },
  sse: true,
} satisfies ProcedureMeta;

export const unifiedChatProcedureInput = unifiedChatInput;
export const unifiedMessageOutput = chatReplySchema;
export const unifiedStreamOutput = streamHandleSchema;
