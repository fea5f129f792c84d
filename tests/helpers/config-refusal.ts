import { ConfigError, loadConfig } from '../../src/core/config/load-config.js';

/** The one line a refused configuration stops the start with; throws when it is accepted. */
export function refusalOf(environment: Record<string, string>): string {
  try {
    loadConfig(environment, null);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('the configuration was accepted');
}
