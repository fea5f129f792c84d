import type { ProcedureMeta } from '../meta.js';
import { chatReplySchema, plainChatInput } from '../schemas/chat.js';

export const sendMessageMeta = {
  openapi: {
    method: 'POST',
    path: '/api/message',
    tags: ['chat'],
    summary: 'Send a message to the active (or named) model and get the whole answer as JSON',
  },
} satisfies ProcedureMeta;

export const sendMessageInput = plainChatInput;
export const sendMessageOutput = chatReplySchema;
