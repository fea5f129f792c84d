import type { Server } from 'node:http';
import { ensureDefaultModel } from './core/models/active-model.js';
import { ModelDownloads } from './core/models/model-downloads.js';
import { closeInterruptedAnswers, missingTwice } from './core/conversations/close-interrupted-answers.js';
import type { Config } from './core/config/load-config.js';
import { createDatabase } from './core/db/create-db.js';
import { migrate } from './core/db/migrate.js';
import type { Logger } from './core/logger.js';
import type { AppDeps } from './procedures/context.js';
import { attachWebSocketsOnDemand, clientIpResolver, createApp, listen, type RunningServer } from './server.js';
import { recordAudit } from './core/audit/record-audit.js';
import type { Store } from './core/db/store.js';
import { detectSandbox, type SandboxState } from './core/sandbox/sandbox-state.js';
import { createEgressPolicy } from './core/sandbox/egress-policy.js';
import { holdRuntimeRoot, sweepRuntimeRoots } from './core/sandbox/runtime-folder.js';
import { serviceNames } from './core/sandbox/service-files.js';
import { confineGitCalls } from './core/workspaces/confined-git.js';
import { WorkspaceFiles } from './core/workspaces/workspace-files.js';
import { CommandJudge } from './core/security/command-judge.js';
import { followWorkspaceRemovals } from './core/workspaces/workspace-removal.js';
import { startPeriodicJobs } from './core/scheduling/periodic-jobs.js';
import { TerminalManager } from './core/terminals/terminal-manager.js';
import { StreamRegistry } from './core/streams/stream-registry.js';
import { createIdempotencyStore } from './core/idempotency/create-idempotency-store.js';
import type { StreamJob } from './core/streams/stream-job.js';
import { createAuthenticator } from './core/auth/authenticator.js';
import { connectRedis } from './core/redis/redis-connection.js';
import { CommandDecisions } from './core/commands/command-decisions.js';
import { UserEvents } from './core/events/user-events.js';
import { createRateLimits } from './core/rate-limits/rate-limits.js';
import { createCluster } from './core/cluster/cluster.js';
import { newId } from './core/ids.js';
import { publishTerminalHomes } from './core/cluster/terminal-homes.js';
import { answerCarriedCalls } from './realtime/carried-calls.js';
import { ServiceMetrics } from './core/metrics/service-metrics.js';
import { ProviderReachability } from './core/status/provider-reachability.js';
import { createUsage } from './core/usage/create-usage.js';

export interface StartedService extends RunningServer {
  deps: AppDeps;
  /** Stops accepting, lets in-flight requests finish (up to SHUTDOWN_TIMEOUT_MS), closes the database. */
  stop(): Promise<void>;
}

/** Work main.ts set going before this module and its imports were loaded. */
export interface EarlyStart {
  /** detectSandbox(config), begun while the modules load. */
  sandbox?: Promise<SandboxState>;
}

/** Migrates, opens the database, prepares stored state and serves. Used by main.ts and the tests. */
export async function startService(config: Config, logger: Logger, early: EarlyStart = {}): Promise<StartedService> {
  const startedAt = Date.now();
  // The sandbox probe runs bubblewrap and a shell (~0.1 s, more on a busy machine): it goes on in
  // its child process while the database is migrated and opened, and is waited for where needed.
  const sandboxDetected = early.sandbox ?? detectSandbox(config);
  // Should the start fail before the wait below, its outcome is nobody's concern.
  sandboxDetected.catch(() => undefined);
  for (const warning of config.warnings) logger.warn(warning);
  // Terminals' pipe and proxy folders left by a service killed with kill -9 (runtime-folder.ts).
  const swept = sweepRuntimeRoots();
  if (swept.length > 0) logger.info({ removed: swept }, 'removed runtime folders of stopped processes');
  const migration = await migrate(config.DATABASE_URL);
  if (migration.applied.length > 0) logger.info({ applied: migration.applied }, 'database migrated');
  if (migration.modified.length > 0) {
    logger.warn({ modified: migration.modified }, 'applied migrations were edited after they ran');
  }
  const instanceId = newId();
  const database = await createDatabase(config.DATABASE_URL, instanceId);
  const store = { db: database.db, chat: database.chat, reads: database.reads, usageSql: database.usageSql, kind: database.kind };
  await ensureDefaultModel(store, config);
  // Redis may be down now: the service starts, and reconnects behind the scenes.
  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL, config.REDIS_KEY_PREFIX, logger) : undefined;
  const cluster = redis ? createCluster(redis, instanceId, { retentionMs: config.STREAM_RETENTION_MS, commandTimeoutMs: config.COMMAND_TIMEOUT_MS, secret: config.CLUSTER_SECRET }, logger) : undefined;
  // With other instances on the database, only a dead writer's answers may be closed; asking
  // Redis needs it connected, so start-up waits a moment for that (the periodic job does the rest).
  const writerAlive = cluster ? (writer: string) => cluster.calls.listening(writer) : undefined;
  if (redis) await redis.waitUntilReady(2000);
  const closed = await closeInterruptedAnswers(store, instanceId, writerAlive);
  if (closed > 0) logger.warn({ closed }, 'closed answers interrupted by an earlier crash');

  const sandbox = await sandboxDetected;
  if (config.ENABLE_SYSTEM_COMMANDS && sandbox.mode === 'unavailable') {
    logger.error({ problem: sandbox.problem }, 'system commands are enabled but refused: no working sandbox');
  }
  if (sandbox.mode === 'bwrap' && sandbox.limits === 'per-process') {
    logger.warn('no cgroup can be made here: terminal memory is limited per process (RLIMIT_AS), and the number of processes is not limited');
  }
  confineGitCalls(sandbox);
  const files = new WorkspaceFiles(sandbox, logger);
  const judge = new CommandJudge();
  // The service's own port joins these once it listens: no allow entry may open it to commands.
  const protectedPorts: number[] = [];
  const egressPolicy =
    sandbox.network === 'proxy' ? createEgressPolicy({ allow: config.SANDBOX_NETWORK_ALLOW, protectedPorts, serviceNames: serviceNames(config) }) : undefined;
  const events = new UserEvents(instanceId);
  const terminalHomes = cluster ? publishTerminalHomes(cluster.directory, () => terminals.all()) : undefined;
  const terminals = createTerminalManager(store, config, logger, events, terminalHomes);
  // Read at each scrape from the registries that own them; `streams` exists by the first scrape.
  const metrics = new ServiceMetrics({
    runningStreams: () => streams.runningCount,
    openTerminals: () => terminals.all().filter((terminal) => terminal.status !== 'exited').length,
  });
  const jobs = config.ENABLE_SCHEDULING
    ? startPeriodicJobs(store, logger, {
        config,
        auditRetentionDays: config.AUDIT_LOG_RETENTION_DAYS,
        ...(writerAlive ? { closeDeadWritersAnswers: closeAnswersOfDeadWriters(store, instanceId, writerAlive) } : {}),
      })
    : null;

  const modelDownloads = new ModelDownloads();
  // Models are shared, so everyone connected hears how a download goes.
  modelDownloads.onProgress((download) => {
    events.broadcast({ kind: 'model_download', ...download });
  });
  const streams = new StreamRegistry({
    maxPerUser: config.MAX_STREAMS_PER_USER,
    retentionMs: config.STREAM_RETENTION_MS,
    maxRetainedBytes: config.STREAM_REPLAY_MAX_BYTES,
    onJobDone: (job) => {
      const done = job.doneMetadata;
      if (!done) return;
      // The exchange's end, where the provider's token usage is known.
      metrics.exchangeDone(done);
      events.publish(job.ownerId, { kind: 'conversation', action: 'answered', conversationId: done.conversationId, streamId: job.id });
    },
    ...(cluster
      ? {
          // Copied to Redis as they run, so any instance can replay them.
          onJobOpened: (job: StreamJob) => {
            cluster.mirror.track(job);
          },
          remote: cluster.remoteStreams,
        }
      : {}),
  });
  const auth = createAuthenticator(config, store, logger);
  // The identity provider may be down now: the service starts anyway, and requests needing a
  // token answer 503 until it can be reached.
  auth.warmUp();
  const rateLimits = createRateLimits(config, logger, redis);
  const usage = await createUsage({ store, sql: store.usageSql, config, logger, redis, bus: cluster?.bus }, instanceId);
  const deps: AppDeps = {
    config,
    store,
    logger,
    auth,
    rateLimits,
    events,
    terminals,
    sandbox,
    files,
    judge,
    ...(egressPolicy ? { egressPolicy } : {}),
    decisions: new CommandDecisions(),
    modelDownloads,
    streams,
    startedAt,
    metrics,
    idempotency: createIdempotencyStore(redis && cluster ? { redis, bus: cluster.bus } : undefined),
    providerReachability: new ProviderReachability(config, store),
    policies: usage.policies,
    usage: usage.meter,
    ...(redis ? { redis } : {}),
    ...(cluster ? { cluster } : {}),
  };
  await cluster?.start(answerCarriedCalls(deps), events);
  if (cluster) await followWorkspaceRemovals({ ...deps, cluster });
  const app = createApp(deps);
  const running = await listen(app, config.PORT, config.HOST, logger);
  const releaseRuntime = holdRuntimeRoot();
  protectedPorts.push(running.port);
  const sockets = attachWebSocketsOnDemand(running.server, deps, clientIpResolver(app));
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Running generations are aborted and stored as `aborted` first (CONTRACT §6); their
      // streams then end with `done`, which lets the server close.
      const aborting = streams.abortAll();
      // Shells go next: an execute waiting on a command then answers at once instead of
      // holding the shutdown, and no process outlives the service.
      const terminalsGone = terminals.stopAll();
      const helpersGone = files.close();
      await aborting;
      // The aborted calls' usage is recorded before the database closes.
      await usage.meter.close();
      await Promise.all([terminalsGone, helpersGone, judge.close()]);
      // Pulls end before the database closes, so none records its outcome into a closed store.
      await modelDownloads.stop();
      sockets.close();
      await closeServer(running.server, config.SHUTDOWN_TIMEOUT_MS);
      await jobs?.stop();
      terminalHomes?.stop();
      await cluster?.close();
      await redis?.close();
      await database.close();
      metrics.stop();
      // Last: every terminal and helper that used the runtime root is gone by now.
      releaseRuntime();
    })());
  return { ...running, deps, stop };
}

/** The periodic job's closing: each run remembers who was missing on the one before. */
function closeAnswersOfDeadWriters(store: Store, instanceId: string, listening: (writer: string) => Promise<boolean>) {
  const alive = missingTwice(listening);
  return () => closeInterruptedAnswers(store, instanceId, alive);
}

function createTerminalManager(
  store: Store,
  config: Config,
  logger: Logger,
  events: UserEvents,
  homes: ReturnType<typeof publishTerminalHomes> | undefined,
): TerminalManager {
  return new TerminalManager({
    ...(homes ? { onAdded: homes.added, onRemoved: homes.removed } : {}),
    onCommandEnd: (terminal, exitCode) => {
      events.publish(terminal.ownerId, { kind: 'command_done', terminalId: terminal.id, exitCode });
    },
    idleTimeoutMs: config.TERMINAL_IDLE_TIMEOUT_MS,
    maxPerUser: config.MAX_TERMINALS_PER_USER,
    onIdleEnd: (terminal) => {
      recordAudit(store, {
        type: 'terminal',
        userId: terminal.ownerId,
        ip: '',
        details: { action: 'idle_timeout', terminalId: terminal.id },
      }).catch((error: unknown) => {
        logger.warn({ err: error, terminalId: terminal.id }, 'audit of an idle terminal failed');
      });
    },
  });
}

/** Resolves once every connection is gone; past `timeoutMs` the remaining ones are cut. */
async function closeServer(server: Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
  // A keep-alive connection that finishes its request after close() would otherwise sit idle
  // until its keep-alive timeout, so idle ones are swept until the last has gone.
  const sweep = setInterval(() => {
    server.closeIdleConnections();
  }, 100);
  server.closeIdleConnections();
  const deadline = setTimeout(() => {
    server.closeAllConnections();
  }, timeoutMs);
  await closed;
  clearInterval(sweep);
  clearTimeout(deadline);
}
