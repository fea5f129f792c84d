import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import proxyAddr from 'proxy-addr';
import type { AddressInfo } from 'node:net';
import cors from 'cors';
import express, { type Express, type RequestHandler } from 'express';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import type { Logger } from './core/logger.js';
import { answerClientError } from './http/client-error.js';
import { errorHandler, notFound } from './http/not-found.js';
import { hostGuard } from './http/host-guard.js';
import { refuseTerminalCallers } from './http/terminal-callers.js';
import { middlewareSequence } from './http/middleware-sequence.js';
import { requestLogging } from './http/request-id.js';
import { requestTiming } from './http/request-timing.js';
import { metricsEndpoint } from './http/metrics-endpoint.js';
import { healthEndpoints } from './http/health-endpoints.js';
import { appErrorFrom } from './procedures/error-mapping.js';
import { handleUnmatched, resolveRequests, type ProcedureTypes } from './http/resolve-request.js';
import { plainJsonTypeForTrpc, writeGuards } from './http/write-guards.js';
import { trpcContext, trpcErrorLog } from './http/trpc-context.js';
import { webInterface } from './http/web-interface.js';
import { loginAvailability } from './http/oidc-login/login-settings.js';
import type { AppDeps } from './procedures/context.js';
import { docsRouter } from './rest-adapter/docs-page.js';
import { legacyAliases } from './rest-adapter/legacy-aliases.js';
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

  const routes = buildRouteTable(appRouter, legacyAliases);
  const procedures = procedureTypes();
  // Preflights always answer 204; only ALLOWED_ORIGINS get the allow headers (CONTRACT §2, §8).
  const allowedOrigins = new Set(config.ALLOWED_ORIGINS);
  // What every request passes before the REST bridge, in this order, as one Express layer
  // (middleware-sequence.ts: the router's own work per layer was as much as theirs).
  app.use(
    middlewareSequence([
      requestLogging(logger),
      // Each request is matched to its procedure once; every later layer reads that.
      resolveRequests(routes, procedures),
      requestTiming(deps.metrics, procedures.keys()),
      // Liveness and readiness probes address the service by whatever name or IP the orchestrator
      // has (a pod IP), and tell nothing worth a DNS-rebinding attack: before the Host check.
      healthEndpoints(deps),
      hostGuard(config),
      // Commands that share the host's network (SANDBOX_NETWORK=host, SANDBOX=none) could call the
      // API as their user; in their own network namespace they cannot reach it at all (CONTRACT §11).
      ...(deps.sandbox.network === 'host' ? [refuseTerminalCallers(deps.terminals)] : []),
      cors({
        origin: (origin, callback) => {
          callback(null, origin !== undefined && allowedOrigins.has(origin));
        },
        exposedHeaders: ['X-Request-Id', 'X-Stream-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Idempotent-Replayed'],
      }),
      // cors() passes preflights from other origins on; they still answer 204, without allow headers.
      (req, res, next) => {
        if (req.method === 'OPTIONS') res.status(204).end();
        else next();
      },
      // A foreign page's writes and bodies that are not JSON, refused before anything runs (CONTRACT §8).
      writeGuards(config),
      handleUnmatched(deps.rateLimits),
      // A request resolved to a REST route goes to the bridge from here; anything else passes on.
      // None of the routers below serves a path of the route table (all under /api, none of them
      // /api/docs or /api/openapi.json: tests/unit/route-table.test.ts), so a REST call skipped
      // nothing but the walk through their layers, a tenth of a small request's time (BENCHMARKS.md).
      restHandler(appRouter, deps),
    ]),
  );

  // Browser sign-in: public and in no rate group (CONTRACT §5), so before the limits.
  app.use(oidcLogin(deps));
  // The web UI's static files are public and in no rate group either (CONTRACT §5).
  if (config.ENABLE_WEB_INTERFACE) app.use(webInterface());

  app.use(
    '/trpc',
    plainJsonTypeForTrpc,
    createExpressMiddleware({
      router: appRouter,
      createContext: trpcContext(deps),
      maxBodySize: config.BODY_LIMIT,
      // The REST bridge sends an AppError's headers (WWW-Authenticate on a 401, Retry-After on a
      // 503 or 429) and the rate group's; typed clients get them too.
      responseMeta: ({ ctx, errors }) => {
        const headers: Record<string, string> = { ...ctx?.response.headers };
        for (const error of errors) Object.assign(headers, appErrorFrom(error).headers);
        return { headers };
      },
      onError: trpcErrorLog(logger),
    }),
  );

  app.get('/api/openapi.json', openApiDocumentRoute());
  app.use(docsRouter());
  app.use(metricsEndpoint(deps));

  // OpenAI's wire format and error object, not the contract's envelope (CONTRACT §0, §10).
  app.use(openAICompatibleRoutes(appRouter, deps));
  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}

/**
 * The browser sign-in routes (/auth/…). Their module and its OIDC client (openid-client) load on
 * the first /auth/ request when web login is off (AUTH_ENABLED=false, the default): nothing of it
 * is needed to start. With login on, they load at once, so the start-up warnings about its
 * settings come at start-up as before.
 */
function oidcLogin(deps: AppDeps): RequestHandler {
  let router: Promise<RequestHandler> | undefined;
  const load = () =>
    (router ??= import('./http/oidc-login/oidc-login-router.js').then(
      ({ oidcLoginRouter }) => oidcLoginRouter(deps),
      (error: unknown) => {
        router = undefined;
        throw error;
      },
    ));
  if (loginAvailability(deps.config).state !== 'disabled') void load().catch(() => undefined);
  return (req, res, next) => {
    if (!req.path.startsWith('/auth/')) {
      next();
      return;
    }
    load().then((handle) => {
      handle(req, res, next);
    }, next);
  };
}

/**
 * The WebSocket gateway (CONTRACT §8), loaded with its `ws` server on the first upgrade: a start
 * answers HTTP without it. Upgrades that arrive while it loads are handed to it once it is there.
 */
export function attachWebSocketsOnDemand(server: Server, deps: AppDeps, clientIp: (req: IncomingMessage) => string): { close(): void } {
  let gateway: { close(): void } | undefined;
  let closed = false;
  const waiting: [IncomingMessage, Duplex, Buffer][] = [];
  const first = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    waiting.push([req, socket, head]);
    if (waiting.length > 1) return;
    import('./realtime/websocket-gateway.js').then(
      ({ attachWebSockets }) => {
        server.off('upgrade', first);
        if (closed) {
          for (const [, pending] of waiting.splice(0)) pending.destroy();
          return;
        }
        gateway = attachWebSockets(server, deps, clientIp);
        for (const upgrade of waiting.splice(0)) server.emit('upgrade', ...upgrade);
      },
      (error: unknown) => {
        deps.logger.error({ err: error }, 'websocket gateway failed to load');
        for (const [, pending] of waiting.splice(0)) pending.destroy();
      },
    );
  };
  server.on('upgrade', first);
  return {
    close() {
      closed = true;
      gateway?.close();
    },
  };
}

/**
 * The OpenAPI document, built on its first request and kept: building it takes ~70 ms and loads
 * trpc-to-openapi's generator (~150 modules), which nothing else needs, so a start does neither
 * (issue 22). A build that fails is tried again by the next request.
 */
function openApiDocumentRoute(): RequestHandler {
  let document: Promise<unknown> | undefined;
  return (_req, res, next) => {
    document ??= import('./rest-adapter/openapi-document.js').then(
      ({ buildOpenApiDocument }) => buildOpenApiDocument(appRouter, legacyAliases),
      (error: unknown) => {
        document = undefined;
        throw error;
      },
    );
    document.then(
      (built) => res.json(built),
      (error: unknown) => {
        document = undefined;
        next(error);
      },
    );
  };
}

/** Each procedure's type by its dotted path, as /trpc names them. */
function procedureTypes(): ProcedureTypes {
  const all = appRouter._def.procedures as unknown as Record<string, { _def: { type: 'query' | 'mutation' | 'subscription' } }>;
  return new Map(Object.entries(all).map(([path, procedure]) => [path, procedure._def.type]));
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
