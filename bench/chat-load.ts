import { Agent } from 'node:http';
import { exchange, type ChatTarget } from './chat-exchange.js';

// Back-to-back chat exchanges from `concurrency` keep-alive clients; run by the chat benchmark's
// load generator (bench/chat-load-worker.ts), a process of its own.

export interface LoadRequest {
  target: ChatTarget;
  concurrency: number;
  seconds: number;
}

export interface LoadReply {
  /** Sorted, ms: until the first event with answer text, or the whole body for JSON replies. */
  firstEvents: number[];
  errors: number;
  /** Seconds from the first request sent to the last reply read. */
  elapsed: number;
}

export async function runLoad({ target, concurrency, seconds }: LoadRequest): Promise<LoadReply> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const firstEvents: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const client = async () => {
    while (performance.now() < deadline) {
      const result = await exchange(agent, target);
      firstEvents.push(result.firstEventMs);
      if (!result.ok) errors++;
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: concurrency }, client));
  const elapsed = (performance.now() - began) / 1000;
  agent.destroy();
  return { firstEvents: firstEvents.sort((a, b) => a - b), errors, elapsed };
}
