import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { parseModelPrices } from '../usage/model-prices.js';
import { parseRegistryAllowList } from '../models/ollama-registry.js';
import { parseEgressAllowList } from '../sandbox/egress-policy.js';

// Every setting of CONTRACT §1, read from the environment (and `.env`). Parsers accept the
// spellings people type in shells ("true", "1", "512kb") and say what they expected otherwise.

const bool = (fallback: boolean) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      if (['true', '1', 'yes', 'on'].includes(value)) return true;
      if (['false', '0', 'no', 'off'].includes(value)) return false;
      ctx.addIssue({ code: 'custom', message: 'must be true or false' });
      return z.NEVER;
    });

const numeric = (fallback: number, min: number, max: number, integer: boolean) =>
  z
    .string()
    .trim()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      const parsed = integer && !/^\d+$/.test(value) ? Number.NaN : Number(value);
      const valid = integer ? Number.isSafeInteger(parsed) : Number.isFinite(parsed);
      if (!valid || parsed < min || parsed > max) {
        ctx.addIssue({ code: 'custom', message: `must be a ${integer ? 'whole number' : 'number'} from ${min} to ${max}` });
        return z.NEVER;
      }
      return parsed;
    });

const int = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) => numeric(fallback, min, max, true);
const number = (fallback: number, min: number, max: number) => numeric(fallback, min, max, false);

const byteUnits: Record<string, number> = { '': 1, b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

const bytes = (fallback: number) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/.exec(value);
      const unit = byteUnits[match?.[2] ?? ''];
      if (!match?.[1] || unit === undefined) {
        ctx.addIssue({ code: 'custom', message: 'must be a size such as 1048576, 512kb or 1mb' });
        return z.NEVER;
      }
      return Math.floor(Number(match[1]) * unit);
    });

const url = (fallback?: string) =>
  z
    .string()
    .trim()
    .optional()
    .transform((value, ctx) => {
      const chosen = value === undefined || value === '' ? fallback : value;
      if (chosen === undefined) return undefined;
      if (!URL.canParse(chosen) || !/^https?:$/.test(new URL(chosen).protocol)) {
        ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
        return z.NEVER;
      }
      return chosen.replace(/\/+$/, '');
    });

const text = (fallback: string) =>
  z
    .string()
    .trim()
    .optional()
    .transform((value): string => (value === undefined || value === '' ? fallback : value));

const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((value) => (value === '' ? undefined : value));

const list = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

/**
 * SANDBOX_NETWORK (CONTRACT §11): `proxy`, `none` or `host`. The old boolean spellings still
 * start the service, but `true` now means the filtering proxy, not the host's network, which
 * load-config.ts says in a warning.
 */
const sandboxNetwork = z
  .string()
  .trim()
  .toLowerCase()
  .optional()
  .transform((value, ctx): { mode: 'proxy' | 'none' | 'host'; legacy: string | null } => {
    if (value === undefined || value === '') return { mode: 'proxy', legacy: null };
    if (value === 'proxy' || value === 'none' || value === 'host') return { mode: value, legacy: null };
    if (['true', '1', 'yes', 'on'].includes(value)) return { mode: 'proxy', legacy: value };
    if (['false', '0', 'no', 'off'].includes(value)) return { mode: 'none', legacy: value };
    ctx.addIssue({ code: 'custom', message: 'must be proxy, none or host' });
    return z.NEVER;
  });

/**
 * CLUSTER_SECRET signs the calls instances carry for each other through Redis; a short one could
 * be guessed offline from one captured message.
 */
const clusterSecret = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value))
  .refine((value) => value === undefined || value.length >= 16, { message: 'must be at least 16 characters' });

/**
 * WORKERS: how many processes serve the port. `auto` is the cores this process may run on
 * (os.availableParallelism, which heeds CPU affinity), so one process per core.
 */
const workers = z
  .string()
  .trim()
  .toLowerCase()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined || value === '') return 1;
    if (value === 'auto') return availableParallelism();
    const count = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (count >= 1 && count <= 256) return count;
    ctx.addIssue({ code: 'custom', message: 'must be auto or a whole number from 1 to 256' });
    return z.NEVER;
  });

/** Whether a listen address reaches this machine alone (CONTRACT §11 exposure guard). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare) || /^::ffff:127(\.\d{1,3}){3}$/.test(bare);
}

/** The most MAX_IMPORT_MESSAGES may be set to; the import schema holds every body to it too. */
export const IMPORT_MESSAGES_CEILING = 100_000;

export const providerNames = ['openai', 'anthropic', 'ollama'] as const;
export type ProviderName = (typeof providerNames)[number];

export const envSchema = z
  .object({
    NODE_ENV: text('production'),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info'),
    // `json` for log collectors, `pretty` for people; unset: pretty on a terminal, JSON otherwise.
    LOG_FORMAT: z
      .string()
      .trim()
      .toLowerCase()
      .optional()
      .transform((value) => (value === '' ? undefined : value))
      .pipe(z.enum(['json', 'pretty']).optional()),
    PORT: int(3000, 0, 65535),
    HOST: text('127.0.0.1'),
    ALLOWED_HOSTS: list,
    DATABASE_URL: z
      .string()
      .trim()
      .default('file:./data/assistant.db')
      .refine((value) => /^(file:|postgres(ql)?:\/\/)/.test(value), {
        message: 'must start with file: (SQLite) or postgresql:// (PostgreSQL)',
      }),
    REDIS_URL: z
      .string()
      .trim()
      .optional()
      .refine((value) => value === undefined || value === '' || /^rediss?:\/\//.test(value), {
        message: 'must start with redis:// or rediss://',
      })
      .transform((value) => (value === '' ? undefined : value)),
    // Every Redis key this service writes starts with it, so deployments can share one Redis.
    REDIS_KEY_PREFIX: text('assistant:'),

    AI_MODEL_PROVIDER: z.enum(providerNames).default('ollama'),
    AI_MODEL_NAME: text('llama3.2'),
    AI_MODEL_BASE_URL: url(),
    AI_MODEL_API_KEY: optionalText,
    OPENAI_BASE_URL: url(),
    OPENAI_API_KEY: optionalText,
    OPENAI_MODEL: text('gpt-4o-mini'),
    ANTHROPIC_BASE_URL: url(),
    ANTHROPIC_API_KEY: optionalText,
    ANTHROPIC_MODEL: text('claude-sonnet-4-5'),
    OLLAMA_BASE_URL: url(),
    OLLAMA_MODEL: text('llama3.2'),
    // Registry hosts an Ollama model name may name; core/models/ollama-registry.ts says why (CONTRACT §1).
    OLLAMA_ALLOWED_REGISTRIES: list.transform((entries, ctx) => {
      try {
        return parseRegistryAllowList(entries);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message.replace(/^OLLAMA_ALLOWED_REGISTRIES /, '') });
        return z.NEVER;
      }
    }),
    PROVIDER_TIMEOUT_MS: int(60_000, 1),
    MAX_TOOL_STEPS: int(8, 1, 100),
    // CONTRACT §13: USD per million tokens per provider/model (core/usage/model-prices.ts).
    MODEL_PRICES: z
      .string()
      .optional()
      .transform((text, ctx) => {
        try {
          return parseModelPrices(text);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      }),
    // The output a provider call may produce when the caller sets no max_tokens and a token or
    // cost quota holds the caller: reserved in full, then sent as the call's max_tokens.
    QUOTA_OUTPUT_TOKENS: int(4096, 1, 1_000_000),
    // How long a reservation lives without being renewed: a dead instance's lapse after this.
    QUOTA_LEASE_MS: int(120_000, 1_000, 3_600_000),
    // How often each instance reads the stored policy document again (besides the cluster bus).
    POLICY_REFRESH_MS: int(2_000, 100, 600_000),
    STREAM_RETENTION_MS: int(600_000, 0),
    // What finished streams kept for replay may hold in memory together; past it the oldest go early.
    STREAM_REPLAY_MAX_BYTES: bytes(64 * 1024 * 1024),
    // The `: ping` comment interval of SSE replies (CONTRACT §6 says 15 s; tests shorten it).
    SSE_PING_INTERVAL_MS: int(15_000, 10, 600_000),
    // WebSocket protocol pings (CONTRACT §8 says 30 s; a socket silent for two is dropped; tests shorten it).
    WS_PING_INTERVAL_MS: int(30_000, 10, 600_000),

    AUTH_ENABLED: bool(false),
    OIDC_ISSUER_BASE_URL: url(),
    OIDC_BASE_URL: url(),
    OIDC_CLIENT_ID: optionalText,
    OIDC_CLIENT_SECRET: optionalText,
    OIDC_SECRET: optionalText,
    OIDC_AUDIENCE: optionalText,
    OIDC_ROLES_CLAIM: text('realm_access.roles,resource_access.<client>.roles,roles'),
    // Discovery and JWKS requests to the identity provider give up after this long (then 503).
    OIDC_HTTP_TIMEOUT_MS: int(5_000, 100, 60_000),

    MAX_CONVERSATION_HISTORY: int(50, 1, 100_000),
    // Messages in one `conversationData` import; more is 400 before anything is stored.
    MAX_IMPORT_MESSAGES: int(10_000, 1, IMPORT_MESSAGES_CEILING),
    DEFAULT_TEMPERATURE: number(0.7, 0, 2),
    RATE_LIMIT_ENABLED: bool(true),
    API_RATE_LIMIT: int(100, 1),
    RATE_LIMIT_CHAT: int(60, 1),
    RATE_LIMIT_MODELS: int(10, 1),
    RATE_LIMIT_TERMINAL: int(30, 1),
    RATE_LIMIT_WORKSPACE: int(20, 1),
    TRUST_PROXY: text('false'),
    ALLOWED_ORIGINS: list,
    AUDIT_LOG_RETENTION_DAYS: int(30, 1),

    ENABLE_WEB_INTERFACE: bool(true),
    ENABLE_SCHEDULING: bool(true),
    ENABLE_FILE_OPERATIONS: bool(true),
    ENABLE_SYSTEM_COMMANDS: bool(false),
    COMMAND_CONFIRMATION_REQUIRED: bool(true),
    WORKSPACE_RESTRICTION_ENABLED: bool(true),
    SANDBOX: z.enum(['auto', 'bwrap', 'none']).default('auto'),
    SANDBOX_NETWORK: sandboxNetwork,
    // Parsed by core/sandbox/egress-policy.ts, which says what each entry means.
    SANDBOX_NETWORK_ALLOW: list.superRefine((entries, ctx) => {
      try {
        parseEgressAllowList(entries);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message.replace(/^SANDBOX_NETWORK_ALLOW /, '') });
      }
    }),
    SANDBOX_MEMORY_MB: int(1024, 16, 1024 * 1024),
    SANDBOX_PROCESSES: int(256, 8, 1_000_000),
    SANDBOX_FILE_SIZE_MB: int(1024, 1, 1024 * 1024),
    SANDBOX_TMP_MB: int(512, 1, 1024 * 1024),
    MAX_COMMAND_LENGTH: int(16_384, 1, 1_000_000),
    ALLOW_UNAUTHENTICATED_REMOTE: bool(false),
    CLUSTER_SECRET: clusterSecret,
    WORKSPACE_ALLOWED_ROOTS: list,
    COMMAND_TIMEOUT_MS: int(30_000, 1),
    TERMINAL_IDLE_TIMEOUT_MS: int(1_800_000, 1),
    MAX_TERMINALS_PER_USER: int(5, 1),
    MAX_STREAMS_PER_USER: int(10, 1),
    MAX_PENDING_PER_USER: int(50, 1),
    // CONTRACT §0: a held command leaves the list after 10 minutes; tests and demos shorten it.
    PENDING_COMMAND_LIFETIME_MS: int(600_000, 1_000, 86_400_000),
    BODY_LIMIT: bytes(1024 * 1024),
    MAX_MESSAGE_LENGTH: int(100_000, 1),
    SHUTDOWN_TIMEOUT_MS: int(10_000, 100, 60_000),
    // Processes serving the port (core/cluster/worker-processes.ts); `auto`: one per core.
    WORKERS: workers,
  })
  .superRefine((env, ctx) => {
    if (env.REDIS_URL !== undefined && env.CLUSTER_SECRET === undefined) {
      ctx.addIssue({ code: 'custom', path: ['CLUSTER_SECRET'], message: 'is required with REDIS_URL: it signs the calls instances carry for each other' });
    }
    if (env.WORKERS > 1 && (env.DATABASE_URL.startsWith('file:') || env.REDIS_URL === undefined)) {
      // Each process holds streams, limits and terminals of its own: only the several-instances
      // mode (one PostgreSQL, one Redis) lets the others reach them; SQLite has no such mode.
      ctx.addIssue({
        code: 'custom',
        path: ['WORKERS'],
        message: `is ${env.WORKERS}, and more than one process needs a postgresql:// DATABASE_URL and REDIS_URL (with CLUSTER_SECRET): the processes share streams, rate limits and terminals through them only${env.DATABASE_URL.startsWith('file:') ? '; DATABASE_URL is SQLite' : '; REDIS_URL is unset'}`,
      });
    }
    if (!env.AUTH_ENABLED && env.ENABLE_SYSTEM_COMMANDS && !env.ALLOW_UNAUTHENTICATED_REMOTE && !isLoopbackHost(env.HOST)) {
      ctx.addIssue({
        code: 'custom',
        path: ['HOST'],
        message:
          'is not a loopback address while AUTH_ENABLED=false and ENABLE_SYSTEM_COMMANDS=true: anyone who can reach it could run commands; turn authentication on, listen on 127.0.0.1, or set ALLOW_UNAUTHENTICATED_REMOTE=true',
      });
    }
    if (!env.AUTH_ENABLED) return;
    for (const key of ['OIDC_ISSUER_BASE_URL', 'OIDC_CLIENT_ID'] as const) {
      if (!env[key]) ctx.addIssue({ code: 'custom', path: [key], message: 'is required when AUTH_ENABLED=true' });
    }
  });

export type Env = z.output<typeof envSchema>;

/** Variables whose values must never be echoed, not even in a configuration error. */
export const secretEnvNames: ReadonlySet<string> = new Set([
  'DATABASE_URL',
  'REDIS_URL',
  'AI_MODEL_API_KEY',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'OIDC_CLIENT_SECRET',
  'OIDC_SECRET',
  'CLUSTER_SECRET',
]);
