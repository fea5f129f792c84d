import { readFileSync } from 'node:fs';
import { parse as parseDotenv } from 'dotenv';
import { envSchema, secretEnvNames, type Env, type ProviderName } from './env-schema.js';

export interface ProviderSettings {
  baseUrl: string;
  apiKey: string | undefined;
  defaultModel: string;
}

export type DatabaseKind = 'sqlite' | 'postgresql';

export type Config = Omit<Env, 'SANDBOX_NETWORK'> & {
  databaseKind: DatabaseKind;
  providers: Record<ProviderName, ProviderSettings>;
  /** How commands reach the network (CONTRACT §11). */
  SANDBOX_NETWORK: 'proxy' | 'none' | 'host';
  /** Settings that start but deserve a line in the log (logged once at start-up). */
  warnings: string[];
};

/** A start-up failure that must be reported as one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const officialBaseUrls: Record<ProviderName, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
  ollama: 'http://127.0.0.1:11434',
};

/**
 * Reads `.env` from the working directory under the real environment (which wins), validates
 * everything and resolves the per-provider settings.
 */
export function loadConfig(
  environment: NodeJS.ProcessEnv = process.env,
  dotenvPath: string | null = '.env',
): Config {
  const merged: Record<string, string | undefined> = { ...readDotenv(dotenvPath), ...environment };
  const result = envSchema.safeParse(merged);
  if (!result.success) {
    const issue = result.error.issues[0];
    const name = String(issue?.path[0] ?? 'configuration');
    const raw = merged[name];
    const shown = raw !== undefined && !secretEnvNames.has(name) ? ` (got ${JSON.stringify(raw)})` : '';
    throw new ConfigError(`Invalid configuration: ${name} ${issue?.message ?? 'is invalid'}${shown}`);
  }
  return resolveConfig(result.data);
}

function readDotenv(path: string | null): Record<string, string> {
  if (path === null) return {};
  try {
    return parseDotenv(readFileSync(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(`Invalid configuration: ${path} cannot be read (${(error as Error).message})`);
  }
}

function resolveConfig(env: Env): Config {
  // AI_MODEL_BASE_URL / AI_MODEL_API_KEY describe the default provider; a provider-specific
  // variable wins over them (CONTRACT §1).
  const defaultsFor = (provider: ProviderName) =>
    provider === env.AI_MODEL_PROVIDER
      ? { baseUrl: env.AI_MODEL_BASE_URL, apiKey: env.AI_MODEL_API_KEY }
      : { baseUrl: undefined, apiKey: undefined };
  const provider = (
    name: ProviderName,
    baseUrl: string | undefined,
    apiKey: string | undefined,
    model: string,
  ): ProviderSettings => ({
    baseUrl: baseUrl ?? defaultsFor(name).baseUrl ?? officialBaseUrls[name],
    apiKey: apiKey ?? defaultsFor(name).apiKey,
    defaultModel: model,
  });
  const warnings: string[] = [];
  const network = env.SANDBOX_NETWORK;
  if (network.legacy !== null) {
    warnings.push(
      `SANDBOX_NETWORK=${network.legacy} is read as ${network.mode}: ${network.mode === 'proxy' ? 'commands reach the network only through the filtering proxy, no longer through the host' : 'commands have no network'}; write SANDBOX_NETWORK=${network.mode} to silence this`,
    );
  }
  if (network.mode === 'host') {
    warnings.push("SANDBOX_NETWORK=host: commands share the host's network and can reach every port of this machine (the database, Redis, the model provider); use proxy unless you trust every command");
  }
  if (env.ALLOW_UNAUTHENTICATED_REMOTE && !env.AUTH_ENABLED && env.ENABLE_SYSTEM_COMMANDS) {
    warnings.push('ALLOW_UNAUTHENTICATED_REMOTE=true: anyone who can reach this service can run commands in its terminals');
  }
  return {
    ...env,
    SANDBOX_NETWORK: network.mode,
    warnings,
    databaseKind: env.DATABASE_URL.startsWith('file:') ? 'sqlite' : 'postgresql',
    providers: {
      openai: provider('openai', env.OPENAI_BASE_URL, env.OPENAI_API_KEY, env.OPENAI_MODEL),
      anthropic: provider('anthropic', env.ANTHROPIC_BASE_URL, env.ANTHROPIC_API_KEY, env.ANTHROPIC_MODEL),
      ollama: provider('ollama', env.OLLAMA_BASE_URL, undefined, env.OLLAMA_MODEL),
    },
  };
}
