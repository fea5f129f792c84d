import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/core/config/load-config.js';
import { refusalOf } from '../helpers/config-refusal.js';


describe('loadConfig', () => {
  it('gives CONTRACT §1 defaults for an empty environment', () => {
    const config = loadConfig({}, null);
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '127.0.0.1',
      DATABASE_URL: 'file:./data/assistant.db',
      databaseKind: 'sqlite',
      AI_MODEL_PROVIDER: 'ollama',
      AI_MODEL_NAME: 'llama3.2',
      PROVIDER_TIMEOUT_MS: 60_000,
      MAX_TOOL_STEPS: 8,
      AUTH_ENABLED: false,
      MAX_CONVERSATION_HISTORY: 50,
      DEFAULT_TEMPERATURE: 0.7,
      RATE_LIMIT_ENABLED: true,
      API_RATE_LIMIT: 100,
      RATE_LIMIT_CHAT: 60,
      RATE_LIMIT_MODELS: 10,
      RATE_LIMIT_TERMINAL: 30,
      RATE_LIMIT_WORKSPACE: 20,
      ENABLE_SYSTEM_COMMANDS: false,
      COMMAND_CONFIRMATION_REQUIRED: true,
      SANDBOX: 'auto',
      BODY_LIMIT: 1024 * 1024,
      MAX_MESSAGE_LENGTH: 100_000,
      MAX_TERMINALS_PER_USER: 5,
      MAX_STREAMS_PER_USER: 10,
      MAX_PENDING_PER_USER: 50,
      ALLOWED_ORIGINS: [],
      // CONTRACT §11: confinement on by default, with the limits a command runs under.
      SANDBOX_NETWORK: 'proxy',
      SANDBOX_NETWORK_ALLOW: [],
      SANDBOX_MEMORY_MB: 1024,
      SANDBOX_PROCESSES: 256,
      SANDBOX_FILE_SIZE_MB: 1024,
      SANDBOX_TMP_MB: 512,
      MAX_COMMAND_LENGTH: 16_384,
      ALLOW_UNAUTHENTICATED_REMOTE: false,
      warnings: [],
    });
    expect(config.CLUSTER_SECRET).toBeUndefined();
    expect(config.providers.openai).toEqual({ baseUrl: 'https://api.openai.com/v1', apiKey: undefined, defaultModel: 'gpt-4o-mini' });
    expect(config.providers.ollama.baseUrl).toBe('http://127.0.0.1:11434');
  });

  it('parses the spellings people use', () => {
    const config = loadConfig(
      { RATE_LIMIT_ENABLED: 'no', ENABLE_SYSTEM_COMMANDS: 'TRUE', BODY_LIMIT: '512kb', ALLOWED_ORIGINS: ' http://a , http://b ,', DATABASE_URL: 'postgresql://u@h/db' },
      null,
    );
    expect(config.RATE_LIMIT_ENABLED).toBe(false);
    expect(config.ENABLE_SYSTEM_COMMANDS).toBe(true);
    expect(config.BODY_LIMIT).toBe(512 * 1024);
    expect(config.ALLOWED_ORIGINS).toEqual(['http://a', 'http://b']);
    expect(config.databaseKind).toBe('postgresql');
  });

  it('lets the provider-specific variables win over AI_MODEL_* for the default provider', () => {
    const viaDefault = loadConfig({ AI_MODEL_PROVIDER: 'openai', AI_MODEL_BASE_URL: 'http://127.0.0.1:9/v1/', AI_MODEL_API_KEY: 'k1' }, null);
    expect(viaDefault.providers.openai).toMatchObject({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k1' });
    expect(viaDefault.providers.anthropic.apiKey).toBeUndefined();
    const specific = loadConfig(
      { AI_MODEL_PROVIDER: 'openai', AI_MODEL_API_KEY: 'k1', OPENAI_API_KEY: 'k2', OPENAI_BASE_URL: 'http://10.0.0.1/v1' },
      null,
    );
    expect(specific.providers.openai).toMatchObject({ baseUrl: 'http://10.0.0.1/v1', apiKey: 'k2' });
  });

  it.each([
    ['PORT', '70000', /^Invalid configuration: PORT must be a whole number from 0 to 65535 \(got "70000"\)$/],
    ['AUTH_ENABLED', 'maybe', /^Invalid configuration: AUTH_ENABLED must be true or false/],
    ['DATABASE_URL', 'mysql://x', /^Invalid configuration: DATABASE_URL must start with file:/],
    ['AI_MODEL_PROVIDER', 'gemini', /^Invalid configuration: AI_MODEL_PROVIDER /],
    ['OLLAMA_BASE_URL', 'ftp://x', /^Invalid configuration: OLLAMA_BASE_URL must be an http\(s\) URL/],
    ['BODY_LIMIT', 'huge', /^Invalid configuration: BODY_LIMIT must be a size/],
    ['DEFAULT_TEMPERATURE', '3', /^Invalid configuration: DEFAULT_TEMPERATURE must be a number from 0 to 2/],
    ['SANDBOX', 'docker', /^Invalid configuration: SANDBOX /],
    ['SANDBOX_NETWORK', 'bridge', /^Invalid configuration: SANDBOX_NETWORK must be proxy, none or host \(got "bridge"\)$/],
    ['SANDBOX_MEMORY_MB', '8', /^Invalid configuration: SANDBOX_MEMORY_MB must be a whole number from 16 /],
    ['MAX_COMMAND_LENGTH', '0', /^Invalid configuration: MAX_COMMAND_LENGTH must be a whole number from 1 /],
  ])('refuses a bad %s with one line naming it', (name, value, message) => {
    expect(() => loadConfig({ [name]: value }, null)).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value }, null)).toThrow(message);
  });

  it('never echoes the value of a secret variable', () => {
    expect(() => loadConfig({ REDIS_URL: 'http://user:s3cret@host' }, null)).toThrow(/^Invalid configuration: REDIS_URL must start with redis:\/\/ or rediss:\/\/$/);
  });

  describe('exposure guard (CONTRACT §11): no unauthenticated commands for the network', () => {
    const commandsWithoutAuth = { ENABLE_SYSTEM_COMMANDS: 'true' };
    const auth = { AUTH_ENABLED: 'true', OIDC_ISSUER_BASE_URL: 'http://127.0.0.1:9', OIDC_CLIENT_ID: 'c' };

    it.each(['0.0.0.0', '192.168.1.20', '::', '[::]'])('refuses HOST=%s with one line naming HOST and the risk', (host) => {
      const refusal = refusalOf({ ...commandsWithoutAuth, HOST: host });
      expect(refusal).toMatch(/^Invalid configuration: HOST is not a loopback address while AUTH_ENABLED=false and ENABLE_SYSTEM_COMMANDS=true: anyone who can reach it could run commands;/);
      expect(refusal).toContain('ALLOW_UNAUTHENTICATED_REMOTE=true');
      expect(refusal).not.toContain('\n');
    });

    it.each(['127.0.0.1', '127.0.1.1', '::1', '[::1]', 'localhost', 'LOCALHOST'])('accepts the loopback HOST=%s', (host) => {
      const config = loadConfig({ ...commandsWithoutAuth, HOST: host }, null);
      expect(config.HOST).toBe(host);
      expect(config.warnings).toEqual([]);
    });

    it('accepts any HOST with authentication on, or with system commands off', () => {
      expect(loadConfig({ ...commandsWithoutAuth, ...auth, HOST: '0.0.0.0' }, null)).toMatchObject({ HOST: '0.0.0.0', AUTH_ENABLED: true, warnings: [] });
      expect(loadConfig({ ENABLE_SYSTEM_COMMANDS: 'false', HOST: '0.0.0.0' }, null)).toMatchObject({ ENABLE_SYSTEM_COMMANDS: false, warnings: [] });
      // Commands are off by default, so a plain HOST change starts.
      expect(loadConfig({ HOST: '::' }, null).HOST).toBe('::');
    });

    it('accepts a remote HOST without authentication when ALLOW_UNAUTHENTICATED_REMOTE=true, with a warning', () => {
      const config = loadConfig({ ...commandsWithoutAuth, HOST: '0.0.0.0', ALLOW_UNAUTHENTICATED_REMOTE: 'true' }, null);
      expect(config).toMatchObject({ HOST: '0.0.0.0', ALLOW_UNAUTHENTICATED_REMOTE: true });
      expect(config.warnings).toEqual([expect.stringMatching(/^ALLOW_UNAUTHENTICATED_REMOTE=true: anyone who can reach this service can run commands/)]);
    });
  });

  describe('SANDBOX_NETWORK', () => {
    it.each([
      ['proxy', 'proxy'],
      ['none', 'none'],
      [' Proxy ', 'proxy'],
    ] as const)('reads %j as %s without a warning', (value, mode) => {
      const config = loadConfig({ SANDBOX_NETWORK: value }, null);
      expect(config.SANDBOX_NETWORK).toBe(mode);
      expect(config.warnings).toEqual([]);
    });

    it.each([
      ['true', 'proxy'],
      ['1', 'proxy'],
      ['false', 'none'],
      ['off', 'none'],
    ] as const)('reads the old spelling %s as %s, and says so in a warning', (value, mode) => {
      const config = loadConfig({ SANDBOX_NETWORK: value }, null);
      expect(config.SANDBOX_NETWORK).toBe(mode);
      expect(config.warnings).toEqual([expect.stringMatching(new RegExp(`^SANDBOX_NETWORK=${value} is read as ${mode}: .*write SANDBOX_NETWORK=${mode}`))]);
    });

    it('warns that host shares the machine\'s network', () => {
      const config = loadConfig({ SANDBOX_NETWORK: 'host' }, null);
      expect(config.SANDBOX_NETWORK).toBe('host');
      expect(config.warnings).toEqual([expect.stringMatching(/^SANDBOX_NETWORK=host: commands share the host's network/)]);
    });
  });

  describe('CLUSTER_SECRET', () => {
    const redis = { REDIS_URL: 'redis://127.0.0.1:6379' };

    it('is required with REDIS_URL, naming the variable in one line', () => {
      for (const missing of [{}, { CLUSTER_SECRET: '' }, { CLUSTER_SECRET: '   ' }] as Record<string, string>[]) {
        expect(refusalOf({ ...redis, ...missing })).toBe('Invalid configuration: CLUSTER_SECRET is required with REDIS_URL: it signs the calls instances carry for each other');
      }
    });

    it('refuses a short one without echoing it', () => {
      const short = 'fifteen-chars-x';
      const refusal = refusalOf({ ...redis, CLUSTER_SECRET: short });
      expect(refusal).toBe('Invalid configuration: CLUSTER_SECRET must be at least 16 characters');
      expect(refusal).not.toContain(short);
    });

    it('is kept as given, and is not needed without REDIS_URL', () => {
      const config = loadConfig({ ...redis, CLUSTER_SECRET: 'sixteen-chars-xy' }, null);
      expect(config.CLUSTER_SECRET).toBe('sixteen-chars-xy');
      expect(loadConfig({}, null).CLUSTER_SECRET).toBeUndefined();
    });
  });

  it('AUTH_ENABLED=true requires the issuer and the client id', () => {
    expect(() => loadConfig({ AUTH_ENABLED: 'true' }, null)).toThrow(/OIDC_ISSUER_BASE_URL is required when AUTH_ENABLED=true/);
    expect(() => loadConfig({ AUTH_ENABLED: 'true', OIDC_ISSUER_BASE_URL: 'http://127.0.0.1:9' }, null)).toThrow(
      /OIDC_CLIENT_ID is required when AUTH_ENABLED=true/,
    );
    const config = loadConfig({ AUTH_ENABLED: 'true', OIDC_ISSUER_BASE_URL: 'http://127.0.0.1:9/realms/r/', OIDC_CLIENT_ID: 'c' }, null);
    expect(config).toMatchObject({ AUTH_ENABLED: true, OIDC_ISSUER_BASE_URL: 'http://127.0.0.1:9/realms/r', OIDC_CLIENT_ID: 'c', OIDC_HTTP_TIMEOUT_MS: 5000 });
    expect(config.OIDC_AUDIENCE).toBeUndefined();
  });

  it('reads .env, with the real environment winning', () => {
    const folder = mkdtempSync(join(tmpdir(), 'config-'));
    const path = join(folder, '.env');
    writeFileSync(path, 'PORT=4100\nAI_MODEL_NAME=from-dotenv\n# a comment\n');
    const config = loadConfig({ PORT: '4200' }, path);
    expect(config.PORT).toBe(4200);
    expect(config.AI_MODEL_NAME).toBe('from-dotenv');
    expect(loadConfig({}, join(folder, 'missing.env')).PORT).toBe(3000);
  });
});
