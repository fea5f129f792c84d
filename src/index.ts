// The package's public surface for typed clients.
export type { AppRouter } from './routers/app-router.js';
export { createAssistantClient, type AssistantClient, type AssistantClientOptions, type TokenSource } from './client/assistant-client.js';
