import { benchQuestion, expectedAnswer } from './chat-exchange.js';

// What the service stored during the chat benchmark, over all of the caller's conversations: the
// check that every exchange sent left its question and, when it succeeded, its whole answer.

export interface Stored {
  conversations: number;
  /** The sum of the conversations' messageCount, as `GET /api/conversations` reports it. */
  messageCount: number;
  questions: number;
  /** Assistant messages holding the whole answer. */
  answers: number;
}

export async function storedExchanges(serviceUrl: string): Promise<Stored> {
  const stored: Stored = { conversations: 0, messageCount: 0, questions: 0, answers: 0 };
  for (let offset = 0; ; ) {
    const page = (await (await fetch(`${serviceUrl}/api/conversations?limit=200&offset=${offset}`)).json()) as {
      conversations: { id: string; messageCount: number }[];
      total: number;
    };
    for (const { id, messageCount } of page.conversations) {
      stored.messageCount += messageCount;
      const { messages } = (await (await fetch(`${serviceUrl}/api/conversation/${id}`)).json()) as { messages: { role: string; content: string }[] };
      for (const message of messages) {
        if (message.role === 'user' && message.content === benchQuestion) stored.questions++;
        if (message.role === 'assistant' && message.content === expectedAnswer) stored.answers++;
      }
    }
    stored.conversations = page.total;
    offset += page.conversations.length;
    if (page.conversations.length === 0 || offset >= page.total) return stored;
  }
}
