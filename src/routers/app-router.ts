import { router } from '../procedures/trpc.js';
import { auditRouter } from './audit.js';
import { chatRouter, streamsRouter } from './chat.js';
import { contextRouter } from './context.js';
import { eventsRouter } from './events.js';
import { conversationsRouter } from './conversations.js';
import { modelsRouter } from './models.js';
import { openaiCompatibleRouter } from './openai-compatible.js';
import { promptOrdersRouter } from './prompt-orders.js';
import { securityRouter } from './security.js';
import { systemRouter } from './system.js';
import { terminalsRouter } from './terminals.js';
import { usageRouter } from './usage.js';
import { workspacesRouter } from './workspaces.js';

/** Every operation of the service; REST, SSE, WebSocket and /trpc are bridges over it. */
export const appRouter = router({
  system: systemRouter,
  chat: chatRouter,
  streams: streamsRouter,
  events: eventsRouter,
  context: contextRouter,
  conversations: conversationsRouter,
  models: modelsRouter,
  promptOrders: promptOrdersRouter,
  workspaces: workspacesRouter,
  terminals: terminalsRouter,
  security: securityRouter,
  audit: auditRouter,
  usage: usageRouter,
  openaiCompatible: openaiCompatibleRouter,
});

export type AppRouter = typeof appRouter;
