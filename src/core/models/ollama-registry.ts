import { AppError } from '../errors/app-error.js';

// Which registry an Ollama model name makes Ollama talk to. Ollama reads a name as
// `[host/][namespace/]model[:tag]` (types/model/name.go, ParseNameBare): the tag is what follows a
// `:` after the last `/`, the model the last segment, the namespace the one before it and the host
// everything before that; a name with fewer segments is filled from `registry.ollama.ai/library/`.
// So `evil/library/x` pulls from the host `evil` however plain it looks, and an older Ollama (and
// Docker's rule) also reads the first of two segments as a host when it holds a `.` or `:` or is
// `localhost`. A name naming another host makes Ollama fetch from it (a pull, or a chat that
// triggers one): the service's network position lent to whoever typed the name, and a model file
// from a source nobody chose. Those names are refused unless OLLAMA_ALLOWED_REGISTRIES lists the host.

export const OLLAMA_REGISTRIES_VARIABLE = 'OLLAMA_ALLOWED_REGISTRIES';

/** Ollama's own registry: a name that spells it out means the same model as one that does not. */
const DEFAULT_REGISTRY = 'registry.ollama.ai';

/** What Ollama accepts as a namespace: anything else in that place can only be read as a host. */
const namespacePattern = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;

/** An allow-list entry: an ASCII host name or IPv4 address (IDN as punycode), with an optional port. */
const hostEntryPattern = /^[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?(?::\d{1,5})?$/;

export type RegistryReference = { kind: 'default' } | { kind: 'host'; host: string } | { kind: 'scheme'; host: string };

/** The registry a model name names: Ollama's own, a host, or a host behind a URL scheme. */
export function registryOf(name: string): RegistryReference {
  // Ollama cuts a scheme off the host part; any `://` means the name carries a URL.
  const scheme = name.indexOf('://');
  if (scheme !== -1) {
    const rest = name.slice(scheme + 3);
    return { kind: 'scheme', host: rest.slice(0, rest.search(/[/\\]|$/)).toLowerCase() };
  }
  // Ollama on Windows also splits on `\`; reading it as a separator here can only refuse more.
  const path = name.replaceAll('\\', '/');
  const lastSlash = path.lastIndexOf('/');
  const tagAt = path.lastIndexOf(':');
  const untagged = tagAt > lastSlash ? path.slice(0, tagAt) : path;
  const segments = untagged.split('/');
  if (segments.length <= 1) return { kind: 'default' };
  if (segments.length === 2) {
    const first = segments[0] ?? '';
    if (namespacePattern.test(first) && first.toLowerCase() !== 'localhost') return { kind: 'default' };
    return hostReference(first);
  }
  return hostReference(segments.slice(0, -2).join('/'));
}

function hostReference(host: string): RegistryReference {
  const folded = host.toLowerCase();
  return folded === DEFAULT_REGISTRY ? { kind: 'default' } : { kind: 'host', host: folded };
}

/**
 * Refuses (400 INVALID_REQUEST naming the model and the variable) an Ollama model name that names
 * a registry host OLLAMA_ALLOWED_REGISTRIES does not list, or any URL scheme. Every path that
 * pulls or uses an Ollama model calls this: download, switch, chat and /v1.
 */
export function checkOllamaRegistry(name: string, allowed: readonly string[]): void {
  const registry = registryOf(name);
  if (registry.kind === 'default') return;
  const details = { modelName: name, registry: registry.host, variable: OLLAMA_REGISTRIES_VARIABLE };
  if (registry.kind === 'scheme') {
    throw AppError.invalid(
      `Model ${name} names its registry with a URL scheme; name the host alone (host/namespace/model), and only a host ${OLLAMA_REGISTRIES_VARIABLE} lists`,
      details,
    );
  }
  if (allowed.includes(registry.host)) return;
  throw AppError.invalid(
    `Model ${name} names the registry host ${registry.host}, which ${OLLAMA_REGISTRIES_VARIABLE} does not list; only Ollama's own registry is used unless the host is listed there`,
    details,
  );
}

/** OLLAMA_ALLOWED_REGISTRIES entries, lower-cased; a malformed entry stops the start (thrown, naming it). */
export function parseRegistryAllowList(entries: readonly string[]): string[] {
  return entries.map((entry) => {
    const folded = entry.toLowerCase();
    if (!hostEntryPattern.test(folded)) {
      throw new Error(`${OLLAMA_REGISTRIES_VARIABLE} entry "${entry}" must be a host or host:port (ASCII; an IDN in its xn-- form), without a scheme or path`);
    }
    return folded;
  });
}
