/** A message as the server stores it, in the fields the page reads. */
export type StoredMessage = {
  id?: string | undefined;
  role: string;
  content: string;
  toolCalls?: unknown[] | undefined;
  provider?: string | undefined;
  model?: string | undefined;
  /** Replaced by a regenerated answer or an edited question (CONTRACT §12): kept, not shown. */
  supersededBy?: string | null | undefined;
};

/** What the page shows of a conversation: questions and answers still in force. */
export const shownMessages = (messages: readonly StoredMessage[]) =>
  messages.filter((message) => (message.role === 'user' || message.role === 'assistant') && !message.supersededBy);
