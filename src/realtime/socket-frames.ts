import type { WebSocket } from 'ws';
import type { ChatEvent } from '../core/chat/chat-events.js';
import type { AppError } from '../core/errors/app-error.js';
import { newId } from '../core/ids.js';

/** CONTRACT §8: a reader is disconnected before the server buffers more than this for it. */
export const maxBufferedBytes = 1024 * 1024;

/** Close codes: 1013 try again later (a reader too slow), 4401 the token expired. */
export const closeCodes = { slowReader: 1013, tokenExpired: 4401 } as const;

export type FrameType = 'message' | 'tool_call' | 'context_update' | 'error';

export interface Frame {
  type: FrameType;
  id: string;
  data: unknown;
  timestamp: string;
}

/** The frame type a stream event travels in (CONTRACT §8). */
export function frameTypeOf(event: ChatEvent): FrameType {
  switch (event.type) {
    case 'text':
    case 'done':
      return 'message';
    case 'tool_call':
    case 'tool_result':
      return 'tool_call';
    case 'context_update':
      return 'context_update';
    case 'error':
      return 'error';
  }
}

/**
 * Sends a frame unless that would leave more than 1 MB waiting for this reader; then the socket
 * is closed with 1013 instead (a stream it was following goes on, and can be resumed over SSE).
 * Returns whether the frame was sent.
 */
export function sendFrame(socket: WebSocket, type: FrameType, data: unknown, id: string = newId()): boolean {
  if (socket.readyState !== socket.OPEN) return false;
  const text = JSON.stringify({ type, id, data, timestamp: new Date().toISOString() } satisfies Frame);
  if (socket.bufferedAmount + Buffer.byteLength(text) > maxBufferedBytes) {
    closeSlowReader(socket);
    return false;
  }
  socket.send(text);
  return true;
}

/** The answer to a client frame that could not be served; the socket stays open. */
export function sendErrorFrame(socket: WebSocket, requestId: string | null, error: AppError): void {
  const { code, message, details } = error.toEnvelope().error;
  sendFrame(socket, 'error', { requestId, code, message, details });
}

function closeSlowReader(socket: WebSocket): void {
  socket.close(closeCodes.slowReader, 'Reader too slow');
  // The close frame queues behind what the reader did not take; do not wait for it long.
  setTimeout(() => {
    socket.terminate();
  }, 5000).unref();
}
