import { purgeAudit } from '../audit/purge-audit.js';
import { forgetExpiredSessions } from '../auth/forget-expired-sessions.js';
import { expirePendingCommands } from '../commands/expire-pending-commands.js';
import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import { refreshStoredWorkspaces } from '../workspaces/refresh-workspaces.js';

export interface PeriodicJobs {
  /** No further runs; resolves when the runs in flight have finished (their queries done). */
  stop(): Promise<void>;
}

interface Job {
  name: string;
  everyMs: number;
  run: () => Promise<number>;
}

/**
 * ENABLE_SCHEDULING's periodic work (CONTRACT §1): the audit retention purge, forgetting expired
 * token sessions, the expiry of held commands, and a refresh of every workspace's Git state, so lists stay current between refreshes.
 * Each job runs once at start and then on its interval; a failure is logged and retried next time.
 */
/** Refreshes every workspace; the count is of those whose status or branch changed. */
async function refreshWorkspacesCountingChanges(store: Store, config: Pick<Config, 'DATABASE_URL'>): Promise<number> {
  const before = new Map((await store.db.workspace.findMany()).map((workspace) => [workspace.id, `${workspace.status} ${workspace.branch}`]));
  const after = await refreshStoredWorkspaces(store, config);
  return after.filter((workspace) => before.get(workspace.id) !== `${workspace.status} ${workspace.branch}`).length;
}

export interface PeriodicJobOptions {
  auditRetentionDays: number;
  /** Where the service keeps its data: workspaces that hold it are refused (workspace-rules.ts). */
  config: Pick<Config, 'DATABASE_URL'>;
  /** With several instances: answers left streaming by an instance that died (it will not restart). */
  closeDeadWritersAnswers?: () => Promise<number>;
}

export function startPeriodicJobs(store: Store, logger: Logger, options: PeriodicJobOptions): PeriodicJobs {
  const jobs: Job[] = [
    { name: 'audit retention purge', everyMs: 60 * 60 * 1000, run: () => purgeAudit(store, options.auditRetentionDays) },
    { name: 'token session expiry', everyMs: 60 * 60 * 1000, run: () => forgetExpiredSessions(store) },
    { name: 'pending command expiry', everyMs: 60 * 1000, run: () => expirePendingCommands(store) },
    { name: 'workspace refresh', everyMs: 5 * 60 * 1000, run: () => refreshWorkspacesCountingChanges(store, options.config) },
  ];
  if (options.closeDeadWritersAnswers) {
    jobs.push({ name: 'interrupted answer closing', everyMs: 60 * 1000, run: options.closeDeadWritersAnswers });
  }
  const inFlight = new Set<Promise<void>>();
  const timers = jobs.map((job) => {
    let busy = false;
    const run = () => {
      // A run that outlasts its interval (a slow refresh) is not joined by a second one.
      if (busy) return;
      busy = true;
      const running = job.run().then(
        (count) => {
          if (count > 0) logger.info({ job: job.name, count }, 'periodic job done');
        },
        (error: unknown) => {
          logger.warn({ err: error, job: job.name }, 'periodic job failed');
        },
      );
      inFlight.add(running);
      void running.finally(() => {
        busy = false;
        inFlight.delete(running);
      });
    };
    run();
    const timer = setInterval(run, job.everyMs);
    timer.unref();
    return timer;
  });
  return {
    stop: async () => {
      for (const timer of timers) clearInterval(timer);
      // The database closes next: a query still running then could hold the close forever.
      await Promise.all(inFlight);
    },
  };
}
