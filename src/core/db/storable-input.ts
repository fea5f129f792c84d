type Path = (string | number)[];

export interface InputProblem {
  path: Path;
  message: string;
}

/** Deeper input is refused: no operation takes anything near it, and deep values exhaust stacks. */
export const MAX_INPUT_DEPTH = 64;

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain NUL characters';
  if (loneSurrogate.test(text)) return 'must be well-formed Unicode';
  return null;
}

/** A value still to look at, with the way back to the input's root for its path. */
interface Pending {
  value: unknown;
  key: string | number | undefined;
  parent: Pending | undefined;
  depth: number;
}

/** `at`, then the keys from the root down to `item`: built only for the problem reported. */
function pathOf(item: Pending, at: Path): Path {
  const keys: (string | number)[] = [];
  // Every value but the root has a key.
  for (let node = item; node.parent; node = node.parent) keys.push(node.key as string | number);
  return [...at, ...keys.reverse()];
}

/**
 * The first problem in an input value: a string or key holding NUL or a lone surrogate (which
 * PostgreSQL's text and jsonb refuse), or nesting past MAX_INPUT_DEPTH. Walks iteratively, so no
 * input can overflow the stack here. `at` is where the value sits in the whole input, for a value
 * that only exists after decoding part of it (JSON text in a string): paths and depth count from
 * the input's root. A value's path is made only when it is the problem: copying it for every
 * value cost an import of 10,000 messages 10–50 ms of the event loop (issue 20).
 */
export function findInputProblem(input: unknown, at: Path = []): InputProblem | null {
  const pending: Pending[] = [{ value: input, key: undefined, parent: undefined, depth: at.length }];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const { value } = item;
    if (typeof value === 'string') {
      const message = textProblem(value);
      if (message) return { path: pathOf(item, at), message };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (item.depth >= MAX_INPUT_DEPTH) return { path: pathOf(item, at), message: `must not nest deeper than ${MAX_INPUT_DEPTH} levels` };
    const depth = item.depth + 1;
    // Children are pushed last first, so they are looked at in order.
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) pending.push({ value: value[index] as unknown, key: index, parent: item, depth });
      continue;
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index] as string;
      const keyMessage = textProblem(key);
      if (keyMessage) return { path: [...pathOf(item, at), key], message: keyMessage };
      pending.push({ value: record[key], key, parent: item, depth });
    }
  }
  return null;
}
