import type { ChatEvent } from '../../src/core/chat/chat-events.js';

/** What an answer shows, built from its stream's events; kept small enough to store for a reload. */
export type AnswerPart =
  | { kind: 'text'; text: string }
  /** `waiting`: a held command the answer is paused on until someone confirms or rejects it. */
  | { kind: 'tool'; id: string; name: string; params: unknown; result?: unknown; finished: boolean; waiting?: boolean }
  | { kind: 'error'; code: string; message: string };

/** Folds one event into the parts; returns the index of the part that changed, or -1. */
export function applyEvent(parts: AnswerPart[], event: ChatEvent): number {
  switch (event.type) {
    case 'text': {
      const last = parts.at(-1);
      if (last?.kind === 'text') {
        last.text += event.content;
        return parts.length - 1;
      }
      return parts.push({ kind: 'text', text: event.content }) - 1;
    }
    case 'tool_call':
      return parts.push({ kind: 'tool', id: event.id, name: event.name, params: event.params, finished: false }) - 1;
    case 'tool_result': {
      const index = parts.findIndex((part) => part.kind === 'tool' && part.id === event.id);
      const part = parts[index];
      if (part?.kind !== 'tool') return parts.push({ kind: 'tool', id: event.id, name: event.name, params: null, result: event.result, finished: true }) - 1;
      part.result = event.result;
      part.finished = true;
      part.waiting = false;
      return index;
    }
    case 'error':
      return parts.push({ kind: 'error', code: event.code, message: event.message }) - 1;
    case 'context_update':
    case 'done':
      return -1;
  }
}

/** A stored assistant message's parts: its tool calls (kept on the message) before its text. */
export function partsOfStoredAnswer(content: string, toolCalls: unknown[] | undefined): AnswerPart[] {
  const parts: AnswerPart[] = [];
  for (const call of toolCalls ?? []) {
    const { id, name, params, result } = call as { id?: string; name?: string; params?: unknown; result?: unknown };
    parts.push({ kind: 'tool', id: id ?? '', name: name ?? 'tool', params, result, finished: true });
  }
  if (content) parts.push({ kind: 'text', text: content });
  return parts;
}

/** The held command an unfinished run_command call stands for: by the call's id, else by its command. */
export function heldToolPart(parts: AnswerPart[], held: { toolCallId?: string | undefined; command: string }): number {
  return parts.findIndex(
    (part) =>
      part.kind === 'tool' &&
      !part.finished &&
      part.name === 'run_command' &&
      (held.toolCallId !== undefined ? part.id === held.toolCallId : (part.params as { command?: unknown } | null)?.command === held.command),
  );
}
