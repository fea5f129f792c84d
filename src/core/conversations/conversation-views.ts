import type { Conversation, Message } from '../../generated/sqlite/client.js';
import { jsonObject } from '../db/store.js';

export const messageRoles = ['user', 'assistant', 'system', 'tool'] as const;
export type MessageRole = (typeof messageRoles)[number];

export interface ConversationSummary {
  id: string;
  title: string;
  createdAt: string;
  lastModified: string;
  messageCount: number;
}

export interface MessageView {
  id: string;
  role: MessageRole;
  content: string;
  createdAt: string;
  toolCalls?: unknown[];
  model?: string;
  provider?: string;
  finishReason?: string;
  usage?: Record<string, unknown>;
}

export function toSummary(row: Conversation): ConversationSummary {
  return {
    id: row.id,
    title: row.title,
    createdAt: row.createdAt.toISOString(),
    lastModified: row.lastModified.toISOString(),
    messageCount: row.messageCount,
  };
}

export function toMessageView(row: Message): MessageView {
  return {
    id: row.id,
    role: row.role as MessageRole,
    content: row.content,
    createdAt: row.createdAt.toISOString(),
    ...(Array.isArray(row.toolCalls) ? { toolCalls: row.toolCalls } : {}),
    ...(row.model !== null ? { model: row.model } : {}),
    ...(row.provider !== null ? { provider: row.provider } : {}),
    ...(row.finishReason !== null ? { finishReason: row.finishReason } : {}),
    ...(row.usage !== null ? { usage: jsonObject(row.usage) } : {}),
  };
}

const TITLE_LENGTH = 60;
// Counting grapheme clusters keeps an emoji or an accented letter whole at the cut.
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The default title: the first line of the first user message, at most 60 characters (CONTRACT §3). */
export function defaultTitle(messages: readonly { role: string; content: string }[]): string {
  const first = messages.find((message) => message.role === 'user');
  const line = first?.content.trim().split('\n', 1)[0]?.trim() ?? '';
  return Array.from(graphemes.segment(line), (part) => part.segment)
    .slice(0, TITLE_LENGTH)
    .join('');
}

/** messageCount counts user and assistant messages only (CONTRACT §3). */
export function countsTowardMessageCount(role: string): boolean {
  return role === 'user' || role === 'assistant';
}
