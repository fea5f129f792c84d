import { ConfigError, loadConfig } from './core/config/load-config.js';
import { createLogger } from './core/logger.js';
import { startService } from './app.js';

// The process entry point: configuration, start, and a graceful stop on SIGTERM/SIGINT.

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

const logger = createLogger(config.LOG_LEVEL);

try {
  const service = await startService(config, logger);
  logger.info({ url: service.url, database: config.databaseKind }, 'assistant service listening');
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
  logger.fatal({ err: error }, 'start-up failed');
  process.exit(1);
}
