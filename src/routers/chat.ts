import { providerMessageProcedure, providerStreamProcedure } from '../procedures/chat/provider-chat.js';
import { sendMessageProcedure } from '../procedures/chat/send-message.js';
import { streamMarkdownProcedure, streamMessageProcedure } from '../procedures/chat/stream-message.js';
import { unifiedMessageProcedure, unifiedStreamProcedure } from '../procedures/chat/unified-chat.js';
import { followStreamProcedure } from '../procedures/streams/follow-stream.js';
import { abortStreamProcedure } from '../procedures/streams/abort-stream.js';
import { getStreamProcedure } from '../procedures/streams/get-stream.js';
import { router } from '../procedures/trpc.js';

/** Every chat path: one engine behind JSON and SSE replies (CONTRACT §6). */
export const chatRouter = router({
  send: sendMessageProcedure,
  stream: streamMessageProcedure,
  streamMarkdown: streamMarkdownProcedure,
  unifiedSend: unifiedMessageProcedure,
  unifiedStream: unifiedStreamProcedure,
  openaiSend: providerMessageProcedure('openai'),
  openaiStream: providerStreamProcedure('openai'),
  anthropicSend: providerMessageProcedure('anthropic'),
  anthropicStream: providerStreamProcedure('anthropic'),
  ollamaSend: providerMessageProcedure('ollama'),
  ollamaStream: providerStreamProcedure('ollama'),
});

/** Resumable streams: replay and abort. */
export const streamsRouter = router({
  get: getStreamProcedure,
  abort: abortStreamProcedure,
  follow: followStreamProcedure,
});
