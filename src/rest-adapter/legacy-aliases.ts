import type { OpenApiMethod } from 'trpc-to-openapi';

export interface RouteAlias {
  method: OpenApiMethod;
  /** OpenAPI-style path with {param} segments named as the target's. */
  path: `/${string}`;
  /** Dotted path of the procedure in the app router. */
  procedure: string;
}

/**
 * Alternative paths from the specification's authentication overview that are the very same
 * operation as a documented path (CONTRACT §7). Paths with different bodies or effects, such as
 * POST /api/conversations/load, are procedures of their own instead.
 */
export const legacyAliases: readonly RouteAlias[] = [
  { method: 'POST', path: '/api/conversations/save', procedure: 'conversations.save' },
  { method: 'DELETE', path: '/api/conversations/{id}', procedure: 'conversations.delete' },
  { method: 'POST', path: '/api/models/download', procedure: 'models.download' },
  { method: 'POST', path: '/api/markdown/stream', procedure: 'chat.streamMarkdown' },
];
