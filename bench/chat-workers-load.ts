// The load generator of bench/chat-workers.ts, a process of its own (as bench/chat-load-worker.ts):
// back-to-back exchanges from `concurrency` keep-alive clients, each client in a conversation of
// its own when `conversationIds` names them (client i sends `conversation_id` conversationIds[i]),
// else all in the caller's current conversation, as bench/chat.ts does. Takes one request per IPC
// message, answers each with a LoadReply; stops when the channel closes.
import { Agent } from 'node:http';
import { exchange, type ChatTarget } from './chat-exchange.js';
import type { LoadReply } from './chat-load.js';

export interface ConversationLoadRequest {
  target: ChatTarget;
  concurrency: number;
  seconds: number;
  /** One per client; empty: every client in the current conversation. */
  conversationIds: string[];
}

/** The target's JSON body with the conversation named. */
function inConversation(target: ChatTarget, conversationId: string | undefined): ChatTarget {
  if (conversationId === undefined) return target;
  return { ...target, body: JSON.stringify({ ...(JSON.parse(target.body) as object), conversation_id: conversationId }) };
}

async function run({ target, concurrency, seconds, conversationIds }: ConversationLoadRequest): Promise<LoadReply> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const firstEvents: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const client = async (index: number) => {
    const own = inConversation(target, conversationIds[index]);
    while (performance.now() < deadline) {
      const result = await exchange(agent, own);
      firstEvents.push(result.firstEventMs);
      if (!result.ok) errors++;
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: concurrency }, (_, index) => client(index)));
  const elapsed = (performance.now() - began) / 1000;
  agent.destroy();
  return { firstEvents: firstEvents.sort((a, b) => a - b), errors, elapsed };
}

process.on('message', (message: ConversationLoadRequest) => {
  void run(message).then((reply) => process.send?.(reply));
});
process.once('disconnect', () => process.exit(0));
