import { router } from '../procedures/trpc.js';
import { contextRouter } from './context.js';
import { conversationsRouter } from './conversations.js';
import { promptOrdersRouter } from './prompt-orders.js';
import { systemRouter } from './system.js';

/** Every operation of the service; REST, SSE, WebSocket and /trpc are bridges over it. */
export const appRouter = router({
  system: systemRouter,
  context: contextRouter,
  conversations: conversationsRouter,
  promptOrders: promptOrdersRouter,
});

export type AppRouter = typeof appRouter;
