import type { Logger } from '../core/logger.js';

interface Pending {
  parent: Logger;
  bindings: Record<string, unknown>;
  child: Logger | undefined;
}

/** Shared by every lazy logger: whatever is read of one is read of its child, made then. */
const forwarding: ProxyHandler<Pending> = {
  get(pending, name) {
    const child = (pending.child ??= pending.parent.child(pending.bindings));
    const value: unknown = Reflect.get(child, name, child);
    // pino's methods read their logger from `this`.
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(child) : value;
  },
  set(pending, name, value) {
    return Reflect.set((pending.child ??= pending.parent.child(pending.bindings)), name, value);
  },
  has(pending, name) {
    return Reflect.has((pending.child ??= pending.parent.child(pending.bindings)), name);
  },
};

/**
 * `parent.child(bindings)`, made when something first reads it (logs, asks its level): most
 * requests log nothing of their own, and a pino child (its bindings serialised through the
 * redaction) costs more than the rest of a small request's context. A plain value rather than a
 * getter on the context: an accessor made building the context about 3 µs dearer (measured
 * alone; BENCHMARKS.md, issue 24), and a copy of the context (`{ ...ctx }`) shares this one logger
 * instead of making its child at the copy.
 */
export function lazyChildLogger(parent: Logger, bindings: Record<string, unknown>): Logger {
  return new Proxy<Pending>({ parent, bindings, child: undefined }, forwarding) as unknown as Logger;
}
