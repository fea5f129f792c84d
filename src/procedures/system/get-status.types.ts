import { z } from 'zod';
import { providerNames } from '../../core/config/env-schema.js';
import type { ProcedureMeta } from '../meta.js';

export const getStatusMeta = {
  openapi: { method: 'GET', path: '/api/status', tags: ['system'], summary: 'Service health: ok, degraded or down (503)', protect: false },
} satisfies ProcedureMeta;

// `reachable`: the last background probe's answer, at most about 30 s old (CONTRACT §3); null for
// a hosted provider the server does not use (no server key, not the default model's provider).
const providerSetting = z.object({ configured: z.boolean(), defaultModel: z.string(), reachable: z.boolean().nullable() });

// One property per provider rather than a record keyed by an enum: the OpenAPI document then
// names each one as a property, which documentation tools and linters read correctly.
const providerSettings = {
  openai: providerSetting,
  anthropic: providerSetting,
  ollama: providerSetting,
} satisfies Record<(typeof providerNames)[number], typeof providerSetting>;

export const getStatusOutput = z.object({
  success: z.literal(false).optional(),
  status: z.enum(['ok', 'degraded', 'down']),
  assistant: z.boolean(),
  timestamp: z.string(),
  uptime: z.number().int(),
  version: z.string(),
  database: z.enum(['sqlite', 'postgresql']),
  providers: z.object(providerSettings),
  // The model of users who never chose one: its provider unreachable makes the status degraded.
  serviceDefaultModel: z.object({ name: z.string(), provider: z.enum(providerNames) }),
  // Why the status is not `ok`, for a person, each naming the setting to look at.
  problems: z.array(z.string()),
  sandbox: z.enum(['bwrap', 'none', 'unavailable']),
  // CONTRACT §11: how commands reach the network, how their limits hold, and, when commands
  // are refused, why.
  sandboxNetwork: z.enum(['proxy', 'none', 'host']),
  limits: z.enum(['cgroup', 'per-process']),
  sandboxProblem: z.string().optional(),
  systemCommands: z.boolean(),
  redis: z.enum(['unused', 'ok', 'unreachable']),
  error: z
    .object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()), timestamp: z.string() })
    .optional(),
});
