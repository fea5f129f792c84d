import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import type { ModelDownloads } from './model-downloads.js';

/** What the model operations need from the service (a procedure context provides it). */
export interface ModelServices {
  config: Config;
  store: Store;
  logger: Logger;
  modelDownloads: ModelDownloads;
}
