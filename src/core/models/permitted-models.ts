import type { ModelAccess } from '../usage/model-access.js';
import type { ModelEntry } from './model-entry.js';

/**
 * The entries of a model list the caller's roles may use (CONTRACT §13). A forbidden model is
 * left out altogether, the active model included: listing what a chat would refuse only invites
 * the 403.
 */
export function permittedModels(entries: readonly ModelEntry[], access: ModelAccess): ModelEntry[] {
  if (access.patterns === null) return [...entries];
  return entries.filter((entry) => access.allows(entry.provider, entry.name));
}
