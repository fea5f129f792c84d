import { createServer, type IncomingMessage, type Server } from 'node:http';
import proxyAddr from 'proxy-addr';
import type { AddressInfo } from 'node:net';
import cors from 'cors';
import express, { type Express } from 'express';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import type { Logger } from './core/logger.js';
import { answerClientError } from './http/client-error.js';
import { errorHandler, notFound } from './http/not-found.js';
import { hostGuard } from './http/host-guard.js';
import { refuseTerminalCallers } from './http/terminal-callers.js';
import { requestLogging } from './http/request-id.js';
import { requestTiming } from './http/request-timing.js';
import { metricsEndpoint } from './http/metrics-endpoint.js';
import { createRequestContext } from './http/request-context.js';
import { appErrorFrom } from './procedures/error-mapping.js';
import type { ProcedureMeta, RateGroup } from './procedures/meta.js';
import { limitByRoute } from './http/rate-limits.js';
import { webInterface } from './http/web-interface.js';
import { oidcLoginRouter } from './http/oidc-login/oidc-login-router.js';
import type { AppDeps } from './procedures/context.js';
import { docsRouter } from './rest-adapter/docs-page.js';
import { legacyAliases } from './rest-adapter/legacy-aliases.js';
import { buildOpenApiDocument } from './rest-adapter/openapi-document.js';
import { openAICompatibleRoutes } from './rest-adapter/openai-compatible/openai-routes.js';
import { restHandler } from './rest-adapter/rest-handler.js';
import { buildRouteTable } from './rest-adapter/route-table.js';
import { appRouter } from './routers/app-router.js';

/** The Express app: guards first, then /trpc, the documentation and the REST bridge. */
export function createApp(deps: AppDeps): Express {
  const { config, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxySetting(config.TRUST_PROXY));

  app.use(requestLogging(logger));
  const routes = buildRouteTable(appRouter, legacyAliases);
  app.use(requestTiming(deps.metrics, routes, Object.keys(appRouter._def.procedures)));
  app.use(hostGuard(config));
  // Commands that share the host's network (SANDBOX_NETWORK=host, SANDBOX=none) could call the
  // API as their user; in their own network namespace they cannot reach it at all (CONTRACT §11).
  if (deps.sandbox.network === 'host') app.use(refuseTerminalCallers(deps.terminals));
  // Preflights always answer 204; only ALLOWED_ORIGINS get the allow headers (CONTRACT §2, §8).
  const allowedOrigins = new Set(config.ALLOWED_ORIGINS);
  app.use(
    cors({
      origin: (origin, callback) => {
        callback(null, origin !== undefined && allowedOrigins.has(origin));
      },
      exposedHeaders: ['X-Request-Id', 'X-Stream-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'],
    }),
  );
  // cors() passes preflights from other origins on; they still answer 204, without allow headers.
  app.use((req, res, next) => {
    if (req.method === 'OPTIONS') res.status(204).end();
    else next();
  });

  // Browser sign-in: public and in no rate group (CONTRACT §5), so before the limits.
  app.use(oidcLoginRouter(deps));
  // The web UI's static files are public and in no rate group either (CONTRACT §5).
  if (config.ENABLE_WEB_INTERFACE) app.use(webInterface());
  if (deps.rateLimits) app.use(limitByRoute(deps.rateLimits, routes, procedureRateGroups()));

  app.use(
    '/trpc',
    createExpressMiddleware({
      router: appRouter,
      createContext: ({ req, res, info }) => {
        const connectionToken = info.connectionParams?.token;
        return createRequestContext(deps, req, res, connectionToken ? { connectionToken } : {});
      },
      maxBodySize: config.BODY_LIMIT,
      // The REST bridge sends an AppError's headers (WWW-Authenticate on a 401, Retry-After on a
      // 503 or 429); typed clients get them too.
      responseMeta: ({ errors }) => {
        const headers: Record<string, string> = {};
        for (const error of errors) Object.assign(headers, appErrorFrom(error).headers);
        return { headers };
      },
      onError: ({ error, path }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR') logger.error({ err: error, path }, 'procedure failed');
      },
    }),
  );

  const openApiDocument = buildOpenApiDocument(appRouter, legacyAliases);
  app.get('/api/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });
  app.use(docsRouter());
  app.use(metricsEndpoint(deps));

  // OpenAI's wire format and error object, not the contract's envelope (CONTRACT §0, §10).
  app.use(openAICompatibleRoutes(appRouter, deps));
  app.use(restHandler(appRouter, routes, deps));
  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}

/** Each procedure's declared rate group, by its dotted path (the /trpc URL names procedures so). */
function procedureRateGroups(): Map<string, RateGroup> {
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } }>;
  return new Map(Object.entries(procedures).map(([path, procedure]) => [path, procedure._def.meta?.rateGroup ?? 'general']));
}

/**
 * The client address of a request that Express does not handle (a WebSocket upgrade), computed as
 * Express computes `req.ip` from TRUST_PROXY, so rate limits and the audit log agree across transports.
 */
export function clientIpResolver(app: Express): (req: IncomingMessage) => string {
  const trust = app.get('trust proxy fn') as Parameters<typeof proxyAddr>[1];
  return (req) => proxyAddr(req, trust);
}

/** TRUST_PROXY takes Express's forms: true/false, a hop count, or addresses/subnets. */
function trustProxySetting(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false' || value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

export interface RunningServer {
  server: Server;
  url: string;
  port: number;
}

export async function listen(app: Express, port: number, host: string, logger: Logger): Promise<RunningServer> {
  const server = createServer(app);
  // A slow client must not hold a connection forever; keep-alive stays short behind proxies.
  server.headersTimeout = 30_000;
  server.requestTimeout = 120_000;
  server.on('clientError', answerClientError(logger));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Node's default backlog (511) overflows when thousands of clients connect at once (a
    // reconnect storm, a load test): the kernel then drops their SYNs and they retry after 1, 3,
    // 7, 15 s. The kernel caps this at net.core.somaxconn.
    server.listen({ port, host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, port: address.port, url: `http://${shownHost}:${address.port}` };
}
