import type { ProviderName } from '../config/env-schema.js';

/**
 * The settings that hold each provider's address and server key (CONTRACT §1), so a message about
 * a failed call can tell a person which one to change. AI_MODEL_BASE_URL / AI_MODEL_API_KEY are
 * not named: the provider's own variable wins over them.
 */
export const providerSettingNames: Record<ProviderName, { address: string; key?: string }> = {
  ollama: { address: 'OLLAMA_BASE_URL' },
  openai: { address: 'OPENAI_BASE_URL', key: 'OPENAI_API_KEY' },
  anthropic: { address: 'ANTHROPIC_BASE_URL', key: 'ANTHROPIC_API_KEY' },
};

/**
 * A base URL as a message may show it: scheme, host, port and path. User name, password, query
 * and fragment are dropped, since a base URL can carry a key in any of them.
 */
export function shownAddress(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return 'its configured address';
  }
}
