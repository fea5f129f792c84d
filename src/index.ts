// The package's public surface for typed clients.
export type { AppRouter } from './routers/app-router.js';
