import { startService, type StartedService } from '../../src/app.js';
import { loadConfig } from '../../src/core/config/load-config.js';
import { createLogger } from '../../src/core/logger.js';
import { createTestDatabase, type DatabaseKind, type TestDatabase } from './databases.js';

export interface TestService extends AsyncDisposable {
  url: string;
  service: StartedService;
  database: TestDatabase;
  /** Stops the service but keeps the database, for restart tests. */
  stop(): Promise<void>;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
}

export interface RequestOptions {
  json?: unknown;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/**
 * Starts the real service on 127.0.0.1 port 0 with a database of its own; `await using` (or
 * close()) stops it and drops the database.
 */
export async function startTestService(
  kind: DatabaseKind,
  env: Record<string, string> = {},
  database?: TestDatabase,
): Promise<TestService> {
  const db = database ?? (await createTestDatabase(kind));
  const config = loadConfig(
    // Tests that are not about rate limits run without them (CONTRACT §9b); those that are set it.
    { PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, LOG_LEVEL: 'silent', RATE_LIMIT_ENABLED: 'false', ...env },
    null,
  );
  const service = await startService(config, createLogger(config.LOG_LEVEL));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await service.stop();
  };
  return {
    url: service.url,
    service,
    database: db,
    stop,
    request: (method, path, options) => request(service.url, method, path, options),
    async [Symbol.asyncDispose]() {
      await stop();
      if (!database) await db.drop();
    },
  };
}

export async function request(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Buffer | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

/** Asserts the contract's error envelope and returns its error object. */
export function expectEnvelope(response: TestResponse, status: number, code: string) {
  if (response.status !== status || response.body?.success !== false || response.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${response.status} ${response.text}`);
  }
  const error = response.body.error as { code: string; message: string; details: Record<string, unknown>; timestamp: string };
  if (Number.isNaN(Date.parse(error.timestamp)) || typeof error.message !== 'string' || typeof error.details !== 'object') {
    throw new Error(`malformed envelope: ${response.text}`);
  }
  if (/\n\s+at /.test(response.text)) throw new Error(`stack trace in reply: ${response.text}`);
  return error;
}
