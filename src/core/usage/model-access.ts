import type { Role } from '../auth/permissions.js';
import type { ProviderName } from '../config/env-schema.js';
import { AppError } from '../errors/app-error.js';
import { compileModelPattern } from './model-pattern.js';
import type { PolicyDocument } from './policy-document.js';

/** Which models a user may choose (CONTRACT §13); `patterns` null: every model. */
export interface ModelAccess {
  readonly patterns: readonly string[] | null;
  allows(provider: ProviderName, model: string): boolean;
}

const everything: ModelAccess = { patterns: null, allows: () => true };

/** Ollama's untagged name is its `:latest` tag: `ollama/llama3.2` allows `llama3.2:latest` too. */
function namesOf(provider: ProviderName, model: string): string[] {
  const names = [`${provider}/${model}`];
  if (provider === 'ollama') {
    if (model.endsWith(':latest')) names.push(`${provider}/${model.slice(0, -':latest'.length)}`);
    else if (!model.includes(':')) names.push(`${provider}/${model}:latest`);
  }
  return names;
}

/**
 * The union of the `allow` patterns of the user's roles that have a modelAccess entry; no entry
 * for any of them: every model.
 */
export function modelAccessFor(policy: PolicyDocument, userRoles: readonly Role[]): ModelAccess {
  const entries = policy.modelAccess.filter((entry) => userRoles.includes(entry.role));
  if (entries.length === 0) return everything;
  const patterns = [...new Set(entries.flatMap((entry) => entry.allow))];
  const matchers = patterns.map(compileModelPattern);
  return {
    patterns,
    allows: (provider, model) => namesOf(provider, model).some((name) => matchers.some((matches) => matches(name))),
  };
}

/** 403 naming the model, for a choice outside the caller's access. */
export function checkModelAccess(access: ModelAccess, provider: ProviderName, model: string): void {
  if (access.allows(provider, model)) return;
  throw new AppError('FORBIDDEN', `Your role may not use the model ${provider}/${model}`, { details: { model: `${provider}/${model}` } });
}
