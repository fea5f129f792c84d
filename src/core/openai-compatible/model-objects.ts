import type { ModelEntry } from '../models/model-entry.js';

export interface OpenAIModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/**
 * GET /v1/models (CONTRACT §10): the models GET /api/models lists that a completion can use now,
 * named `<provider>/<model>` as /v1/chat/completions takes them. Ollama models still downloading
 * or not installed are left out; hosted models the server has no key for stay, since a completion
 * that sends its own key (X-Provider-Api-Key) can use them. The service knows no creation dates: `created` is when it
 * started, which is stable while it runs.
 */
export function openAIModelList(entries: readonly ModelEntry[], startedAt: number): { object: 'list'; data: OpenAIModel[] } {
  const created = Math.floor(startedAt / 1000);
  const data = entries
    .filter((entry) => entry.status === 'available' || entry.reason === 'needs apiKey')
    .map((entry) => ({ id: `${entry.provider}/${entry.name}`, object: 'model' as const, created, owned_by: entry.provider }));
  return { object: 'list', data };
}
