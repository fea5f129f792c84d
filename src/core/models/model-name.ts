import { providerNames, type ProviderName } from '../config/env-schema.js';

export interface ModelReference {
  /** The provider the caller named, in the `provider` field or as a `<provider>/` prefix. */
  provider: ProviderName | undefined;
  name: string;
}

function isProviderName(value: string): value is ProviderName {
  return (providerNames as readonly string[]).includes(value);
}

/**
 * `<provider>/<name>` names both (CONTRACT §6); anything else is a bare name. Only a known
 * provider counts as a prefix, because Ollama names contain slashes of their own
 * (`hf.co/org/model`, `library/llama3`).
 */
export function parseModelReference(modelName: string): ModelReference {
  const slash = modelName.indexOf('/');
  const prefix = slash > 0 ? modelName.slice(0, slash) : '';
  if (isProviderName(prefix) && slash < modelName.length - 1) {
    return { provider: prefix, name: modelName.slice(slash + 1) };
  }
  return { provider: undefined, name: modelName };
}

/**
 * The name Ollama stores a model under: a name without a tag means `:latest`, so `llama3.2`
 * and `llama3.2:latest` are the same model. The tag is whatever follows the last `:` after the
 * last `/` (a registry host may carry a port: `host:5000/model`).
 */
export function canonicalOllamaName(name: string): string {
  const lastSegment = name.slice(name.lastIndexOf('/') + 1);
  return lastSegment.includes(':') ? name : `${name}:latest`;
}

export function sameModelName(provider: ProviderName, a: string, b: string): boolean {
  return provider === 'ollama' ? canonicalOllamaName(a) === canonicalOllamaName(b) : a === b;
}

/**
 * Ollama's name grammar: `[host[:port]/][namespace/]model[:tag]`, each part letters, digits, `.`,
 * `_` and `-`, starting with a letter or digit (so no `..` segment). Checked before any call,
 * so a malformed name is a 400 of its own rather than whatever Ollama makes of it.
 */
const ollamaName = /^[A-Za-z0-9][\w.-]*(:\d{1,5})?(\/[A-Za-z0-9][\w.-]*)*(:\w[\w.-]{0,127})?$/;

export function isValidOllamaName(name: string): boolean {
  return name.length <= 350 && ollamaName.test(name);
}
