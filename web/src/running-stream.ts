import type { AnswerPart } from './answer-parts.js';

/**
 * The generation this tab is following, kept in sessionStorage so a reload in the middle of an
 * answer follows the same stream again: the parts shown so far and the sequence number of the
 * last event they include, so the replay resumes exactly after it (nothing shown twice).
 */
export interface RunningStream {
  streamId: string;
  conversationId: string;
  lastSeq: number;
  parts: AnswerPart[];
}

const key = 'assistant.running-stream';

export function loadRunningStream(): RunningStream | null {
  try {
    const stored = sessionStorage.getItem(key);
    if (!stored) return null;
    const value = JSON.parse(stored) as Partial<RunningStream>;
    if (typeof value.streamId !== 'string' || typeof value.conversationId !== 'string' || !Array.isArray(value.parts)) return null;
    return { streamId: value.streamId, conversationId: value.conversationId, lastSeq: Number(value.lastSeq) || 0, parts: value.parts };
  } catch {
    return null;
  }
}

export function saveRunningStream(running: RunningStream): void {
  try {
    sessionStorage.setItem(key, JSON.stringify(running));
  } catch {
    // Storage full or blocked: the answer still streams, only a reload cannot resume it.
  }
}

export function clearRunningStream(): void {
  sessionStorage.removeItem(key);
}
