// The package's public surface for typed clients. Its declarations must compile for a consumer
// with `skipLibCheck: false` (tests/integration/typed-client-package.test.ts), so nothing exported
// here may reach the types of a framework the package only uses on its server side.
export type { AppRouter } from './routers/app-router.js';
export {
  createAssistantClient,
  type AssistantClient,
  type AssistantClientError,
  type AssistantClientOptions,
  type TokenSource,
} from './client/assistant-client.js';
// The client's error class and guard, so a consumer need not depend on @trpc/client to tell a
// service error apart: `isTRPCClientError<AppRouter>(error)` types `error.data.appCode`.
export { TRPCClientError, isTRPCClientError } from '@trpc/client';
