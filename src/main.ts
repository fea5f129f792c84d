import { isWorkerPrimary, superviseWorkers, workerLogger } from './core/cluster/worker-processes.js';
import { ConfigError, loadConfig } from './core/config/load-config.js';
import { startupFailureLine } from './core/config/startup-failure.js';
import { createLogger } from './core/logger.js';
import { resolveLogFormat } from './core/logger-pretty.js';
import { detectSandbox } from './core/sandbox/sandbox-state.js';

// The process entry point: configuration, start, and a graceful stop on SIGTERM/SIGINT. The
// service's modules (about a thousand files) are loaded after the sandbox probe has been set
// going, so its child process runs while they load (issue 22: a restart to its first 200 in
// under 2 s).

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

const logger = workerLogger(createLogger(config.LOG_LEVEL, undefined, resolveLogFormat(config.LOG_FORMAT, process.stdout.isTTY)));

if (isWorkerPrimary(config)) {
  // WORKERS > 1: this process forks the workers and watches them; each of them runs what follows.
  await superviseWorkers(config, logger);
} else {
  const sandbox = detectSandbox(config);
  // Waited for in startService; a start that fails first has no use for it.
  sandbox.catch(() => undefined);

  try {
    const { startService } = await import('./app.js');
    const service = await startService(config, logger, { sandbox });
    // The message stays fixed for whatever waits for it; the URL is a field (a link in pretty form).
    // A line a person can click in a terminal; the fields carry the same for log processors.
    logger.info({ url: service.url, database: config.databaseKind }, `listening on ${service.url}`);
    let signalled = false;
    const shutdown = (signal: NodeJS.Signals) => {
      if (signalled) return;
      signalled = true;
      logger.info({ signal }, 'shutting down');
      // A last guard: the process ends even if something refuses to close.
      setTimeout(() => process.exit(1), config.SHUTDOWN_TIMEOUT_MS + 2000).unref();
      service.stop().then(
        () => {
          logger.info('stopped');
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', shutdown);
    process.on('SIGINT', shutdown);
  } catch (error) {
    // A setting's mistake (port in use, database not there) is one line naming the variable, like
    // a bad value above; anything else is a fault, logged with its stack.
    const line = startupFailureLine(error, config);
    if (line === undefined) logger.fatal({ err: error }, 'start-up failed');
    else process.stderr.write(`${line}\n`);
    process.exit(1);
  }
}
