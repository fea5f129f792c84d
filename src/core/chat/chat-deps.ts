import type { CommandDeps } from '../commands/command-deps.js';
import type { Logger } from '../logger.js';
import type { UsageMeter } from '../usage/usage-meter.js';
import type { StreamRegistry } from '../streams/stream-registry.js';
import type { ChatAttempt } from './chat-attempt.js';

/** What the chat engine needs; the service's AppDeps provides it. */
export interface ChatDeps extends CommandDeps {
  logger: Logger;
  streams: StreamRegistry;
  /** Quotas checked and usage recorded around every provider call (CONTRACT §13). */
  usage: UsageMeter;
  /** Set for a request with an Idempotency-Key: told what the generation stored (CONTRACT §12). */
  attempt?: ChatAttempt | undefined;
}
