import type { Prisma } from '../../generated/sqlite/client.js';
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
  /** CONTRACT §12: the message that replaced this one (regenerate, edit and resend). */
  supersededBy?: string;
}

/** A Conversation row's listed columns, as Prisma or a driver statement reads them. */
export interface ConversationSummaryRow {
  id: string;
  title: string;
  createdAt: Date;
  lastModified: Date;
  messageCount: number;
}

/** A Message row's shown columns, JSON parsed, as Prisma or a driver statement reads them. */
export interface MessageViewRow {
  id: string;
  role: string;
  content: string;
  createdAt: Date;
  toolCalls: Prisma.JsonValue | null;
  model: string | null;
  provider: string | null;
  finishReason: string | null;
  usage: Prisma.JsonValue | null;
  supersededBy: string | null;
}

export function toSummary(row: ConversationSummaryRow): ConversationSummary {
  return {
    id: row.id,
    title: row.title,
    createdAt: row.createdAt.toISOString(),
    lastModified: row.lastModified.toISOString(),
    messageCount: row.messageCount,
  };
}

export function toMessageView(row: MessageViewRow): MessageView {
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
    ...(row.supersededBy !== null ? { supersededBy: row.supersededBy } : {}),
  };
}

const TITLE_LENGTH = 60;
const TITLE_SCAN = TITLE_LENGTH * 32;
// Counting grapheme clusters keeps an emoji or an accented letter whole at the cut.
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The default title: the first line of the first user message, at most 60 characters (CONTRACT §3). */
export function defaultTitle(messages: readonly { role: string; content: string }[]): string {
  const first = messages.find((message) => message.role === 'user');
  const line = first?.content.trim().split('\n', 1)[0]?.trim() ?? '';
  // Only the start is segmented, and only its first segments are read: segmenting costs time in
  // the length of the whole text (a 100,000-character line held the event loop for 6 s). A title's
  // 60 clusters fit in TITLE_SCAN code units unless they are piled with combining marks; the cut
  // never splits a surrogate pair.
  let start = line.slice(0, TITLE_SCAN);
  if (/[\uD800-\uDBFF]$/.test(start)) start = start.slice(0, -1);
  let title = '';
  let count = 0;
  for (const part of graphemes.segment(start)) {
    if (count++ === TITLE_LENGTH) break;
    title += part.segment;
  }
  return title;
}

/** messageCount counts user and assistant messages only (CONTRACT §3). */
export function countsTowardMessageCount(role: string): boolean {
  return role === 'user' || role === 'assistant';
}
