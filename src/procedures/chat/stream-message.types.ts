import type { ProcedureMeta } from '../meta.js';
import { plainChatInput, streamHandleSchema } from '../schemas/chat.js';

export const streamMessageMeta = {
  openapi: {
    method: 'POST',
    path: '/api/message/stream',
    tags: ['chat'],
    summary: 'Send a message and stream the answer as Server-Sent Events',
  },
  sse: true,
} satisfies ProcedureMeta;

export const streamMarkdownMeta = {
  openapi: {
    method: 'POST',
    path: '/api/message/stream/markdown',
    tags: ['chat'],
    summary: 'Send a message and stream the answer as Server-Sent Events whose text events end on line boundaries',
  },
  sse: true,
} satisfies ProcedureMeta;

export const streamMessageInput = plainChatInput;
export const streamMessageOutput = streamHandleSchema;
