import type { Permission, Role } from '../core/auth/permissions.js';
import type { RateGroup } from '../core/rate-limits/rate-limits.js';

/** CONTRACT §9's rate-limit groups; `none` for health, documentation and keystrokes. */
export type { RateGroup };

/**
 * Every procedure declares its guard decision (CONTRACT §5): public, any valid caller, or
 * permissions (all required) optionally combined with any-of roles.
 */
export type Guard =
  | { kind: 'public' }
  | { kind: 'authenticated' }
  | { kind: 'permission'; permissions: readonly Permission[]; anyRole?: readonly Role[] };

/** Feature flags that switch whole operations off (CONTRACT §1): the answer is then 403 SECURITY_VIOLATION. */
export type Feature = 'systemCommands';

/**
 * The REST route of a procedure, as trpc-to-openapi reads it (its `OpenApiMeta['openapi']`, with
 * the fields this service uses). Declared here rather than imported: the exported AppRouter type
 * carries the meta type, and trpc-to-openapi's declarations import the types of every framework it
 * has an adapter for (koa, h3, fastify, next), which a typed-client consumer does not have
 * (`skipLibCheck: false` fails on them). tests/integration/typed-client-package.test.ts checks
 * that this stays assignable to trpc-to-openapi's own type.
 */
export interface OpenApiRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: `/${string}`;
  summary?: string;
  description?: string;
  tags?: string[];
  /** false for the public operations: the document marks every other one as needing the bearer token. */
  protect?: boolean;
}

// A type alias, not an interface: tRPC's routers take meta as a Record<string, unknown>, which an
// interface (without an index signature) is not.
export type ProcedureMeta = {
  openapi?: OpenApiRoute;
  guard?: Guard;
  rateGroup?: RateGroup;
  feature?: Feature;
  /**
   * The REST bridge answers with the Server-Sent Events of the stream the procedure names
   * (its output is `{streamId, after}`) instead of JSON (CONTRACT §6).
   */
  sse?: boolean;
};
