import type { Prisma } from '../../generated/sqlite/client.js';
import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';
import { defaultTitle, type MessageRole } from './conversation-views.js';
import { getOrCreateCurrentConversation } from './current-conversation.js';
import { insertConversationWithMessages } from './insert-conversation.js';

export interface ImportedConversation {
  messages: { role: MessageRole; content: string }[];
  metadata?: Record<string, unknown> | undefined;
}

export interface SaveConversationInput {
  title?: string | undefined;
  conversationData?: ImportedConversation | undefined;
}

/**
 * Without conversationData: titles the current conversation (made if none) with `title`, else the
 * default title, and returns its id. With it: imports a new conversation, which does not become
 * current (CONTRACT §7), of at most `maxImportMessages` messages (MAX_IMPORT_MESSAGES; more is
 * 400 before anything is stored, CONTRACT §1).
 */
export async function saveConversation(store: Store, userId: string, input: SaveConversationInput, maxImportMessages: number): Promise<string> {
  if (input.conversationData) {
    requireImportWithin(input.conversationData, maxImportMessages);
    return importConversation(store, userId, input.title, input.conversationData);
  }
  const current = await getOrCreateCurrentConversation(store, userId);
  let title = input.title;
  if (title === undefined) {
    const userMessages = await store.db.message.findMany({
      where: { conversationId: current.id, role: 'user' },
      orderBy: { seq: 'asc' },
      take: 1,
    });
    title = current.title || defaultTitle(userMessages);
  }
  await store.db.conversation.update({ where: { id: current.id }, data: { title, lastModified: new Date() } });
  return current.id;
}

async function importConversation(
  store: Store,
  userId: string,
  title: string | undefined,
  data: ImportedConversation,
): Promise<string> {
  const metadata = (data.metadata ?? {}) as Prisma.InputJsonObject;
  const { id } = await insertConversationWithMessages(store, { ownerId: userId, title, metadata, messages: data.messages });
  return id;
}

function requireImportWithin(data: ImportedConversation, maxMessages: number): void {
  if (data.messages.length <= maxMessages) return;
  throw AppError.invalid(`An import holds at most ${maxMessages} messages (MAX_IMPORT_MESSAGES); this one has ${data.messages.length}`, {
    issues: [{ path: ['conversationData', 'messages'], message: `must hold at most ${maxMessages} messages (MAX_IMPORT_MESSAGES)` }],
    maxMessages,
  });
}
