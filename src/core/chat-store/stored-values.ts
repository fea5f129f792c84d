import { parseActiveModel, type ActiveModel } from '../models/active-model.js';
import type { PromptSection } from '../prompt-orders/prompt-order-schema.js';
import type { WorkspaceRef } from '../workspaces/active-workspace.js';
import type { ConversationHead } from './chat-store.js';

// Rows as both chat stores read them, turned into the engine's values. SQLite hands JSON columns
// over as text, PostgreSQL as parsed values: `json` takes either.

function json(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? null;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return null;
  }
}

export function activeModelOf(value: unknown): ActiveModel | null {
  return parseActiveModel(json(value));
}

/** Stored sections always carry `enabled`: the prompt-order store fills it in when saving. */
export function promptSectionsOf(value: unknown): PromptSection[] | null {
  const sections = json(value);
  return Array.isArray(sections) ? (sections as PromptSection[]) : null;
}

export function toolCallsOf(value: unknown): unknown {
  return json(value);
}

/** An answer's tool calls as the `toolCalls` column holds them: JSON text, or null for none. */
export function storedToolCalls(toolCalls: readonly unknown[]): string | null {
  return toolCalls.length > 0 ? JSON.stringify(toolCalls) : null;
}

export interface ConversationRow {
  id: string;
  ownerId: string;
  title: string;
  messageCount: number | string;
}

export function conversationHeadOf(row: ConversationRow | undefined | null): ConversationHead | null {
  if (!row) return null;
  return { id: row.id, ownerId: row.ownerId, title: row.title, messageCount: Number(row.messageCount) };
}

export function workspaceRefOf(row: WorkspaceRef | undefined | null): WorkspaceRef | null {
  if (!row) return null;
  return { id: row.id, name: row.name, path: row.path, branch: row.branch, status: row.status, device: row.device ?? null, inode: row.inode ?? null, gitEntries: row.gitEntries ?? null };
}

/** The metadata keys an answer writes on its conversation: only names, never a key. */
export function answerMetadata(target: { provider: string; model: string }): string {
  return JSON.stringify({ provider: target.provider, model: target.model });
}
