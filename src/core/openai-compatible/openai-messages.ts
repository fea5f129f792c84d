import type { StoredToolCall } from '../chat/history-window.js';
import { parseToolArguments } from '../chat/chat-tool.js';
import type { Transcript } from '../chat/start-transcript-chat.js';
import type { TranscriptRow } from '../conversations/record-transcript.js';
import { findInputProblem } from '../db/storable-input.js';
import { AppError } from '../errors/app-error.js';
import type { ChatMessage, ToolCallRecord, ToolResultRecord, ToolSpec } from '../providers/chat-protocol.js';

// OpenAI's Chat Completions request, as much of it as the service takes (CONTRACT §10): the
// messages of every role, text content (a string or text parts), the caller's function tools.
// The procedure's zod schema validates the shape; this turns it into the engine's terms.

export type OpenAIContent = string | null | undefined | readonly { type: 'text'; text: string }[];

export interface OpenAIToolCall {
  id: string;
  function: { name: string; arguments: string };
}

export type OpenAIMessage =
  | { role: 'system' | 'developer' | 'user'; content: OpenAIContent }
  | { role: 'assistant'; content?: OpenAIContent; tool_calls?: readonly OpenAIToolCall[] | undefined }
  | { role: 'tool'; content: OpenAIContent; tool_call_id: string };

export interface OpenAIFunctionTool {
  function: { name: string; description?: string | undefined; parameters?: Record<string, unknown> | undefined };
}

/** Text parts are joined by a line break, so words of neighbouring parts do not run together. */
function textOf(content: OpenAIContent): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => part.text).join('\n');
}

function invalid(path: (string | number)[], message: string): AppError {
  return AppError.invalid(`${path.join('.')}: ${message}`, { issues: [{ path, message }] });
}

/**
 * A call's arguments decoded, as they are stored and sent on. The request's hygiene check saw
 * only their JSON text, where `\u0000`, a lone `\ud800` and deep nesting are plain characters:
 * decoded, they would fail PostgreSQL's jsonb (a 500 there, stored on SQLite) or pass the depth limit.
 */
function callParams(call: OpenAIToolCall, path: (string | number)[]): unknown {
  const args = parseToolArguments(call.function.arguments);
  if (!args.ok) return args.text;
  const problem = findInputProblem(args.value, path);
  if (problem) {
    const inside = problem.path.slice(path.length).join('.');
    throw invalid(path, inside === '' ? problem.message : `${inside} ${problem.message}`);
  }
  return args.value;
}

/**
 * The request's messages as the engine's: system and developer messages become the system
 * prompt, consecutive tool messages one tool turn (each result named after the call it answers,
 * which Ollama needs). A tool message must answer a call of an earlier assistant message, and
 * there must be a user message (Anthropic starts every conversation with one); each message's
 * text is held to MAX_MESSAGE_LENGTH like a chat body's message.
 */
export function readTranscript(messages: readonly OpenAIMessage[], maxLength: number): Transcript {
  const system: string[] = [];
  const chat: ChatMessage[] = [];
  const rows: TranscriptRow[] = [];
  const callsById = new Map<string, StoredToolCall>();
  messages.forEach((message, index) => {
    const text = textOf(message.content);
    if (text.length > maxLength) throw invalid(['messages', index, 'content'], `must be at most ${maxLength} characters`);
    switch (message.role) {
      case 'system':
      case 'developer':
        if (text !== '') system.push(text);
        rows.push({ role: 'system', content: text });
        return;
      case 'user':
        chat.push({ role: 'user', content: text });
        rows.push({ role: 'user', content: text });
        return;
      case 'assistant': {
        const calls: ToolCallRecord[] = [];
        const stored: StoredToolCall[] = [];
        for (const [callIndex, call] of (message.tool_calls ?? []).entries()) {
          const params = callParams(call, ['messages', index, 'tool_calls', callIndex, 'function', 'arguments']);
          calls.push({ id: call.id, name: call.function.name, input: params });
          const record: StoredToolCall = { id: call.id, name: call.function.name, params };
          stored.push(record);
          callsById.set(call.id, record);
        }
        chat.push({ role: 'assistant', content: text, toolCalls: calls });
        rows.push({ role: 'assistant', content: text, toolCalls: stored });
        return;
      }
      case 'tool': {
        const call = callsById.get(message.tool_call_id);
        if (call === undefined) throw invalid(['messages', index, 'tool_call_id'], 'answers no tool call of an earlier assistant message');
        call.result = text;
        const result: ToolResultRecord = { id: call.id, name: call.name, output: text };
        const last = chat.at(-1);
        if (last?.role === 'tool') chat[chat.length - 1] = { role: 'tool', results: [...last.results, result] };
        else chat.push({ role: 'tool', results: [result] });
        return;
      }
    }
  });
  if (!chat.some((message) => message.role === 'user')) throw invalid(['messages'], 'must contain a user message');
  return { system: system.join('\n\n'), messages: chat, rows };
}

/**
 * The caller's function tools as offered to the model. `tool_choice: "none"` travels with them
 * and each provider honours it in its own terms (CONTRACT §12).
 */
export function callerToolSpecs(tools: readonly OpenAIFunctionTool[] | null | undefined): ToolSpec[] {
  return (tools ?? []).map(({ function: fn }) => ({
    name: fn.name,
    description: fn.description ?? '',
    // A function without parameters takes none; providers want an object schema all the same.
    parameters: fn.parameters ?? { type: 'object', properties: {} },
  }));
}
