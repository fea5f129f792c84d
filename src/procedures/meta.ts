import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Permission, Role } from '../core/auth/permissions.js';

/** CONTRACT §9's rate-limit groups; `none` for health and documentation. */
export type RateGroup = 'chat' | 'models' | 'terminal' | 'workspace' | 'general' | 'none';

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

export type ProcedureMeta = OpenApiMeta<{
  guard?: Guard;
  rateGroup?: RateGroup;
  feature?: Feature;
  /**
   * The REST bridge answers with the Server-Sent Events of the stream the procedure names
   * (its output is `{streamId, after}`) instead of JSON (CONTRACT §6).
   */
  sse?: boolean;
}>;
