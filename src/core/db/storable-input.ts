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

/**
 * The first problem in an input value: a string or key holding NUL or a lone surrogate (which
 * PostgreSQL's text and jsonb refuse), or nesting past MAX_INPUT_DEPTH. Walks iteratively, so no
 * input can overflow the stack here. `at` is where the value sits in the whole input, for a value
 * that only exists after decoding part of it (JSON text in a string): paths and depth count from
 * the input's root.
 */
export function findInputProblem(input: unknown, at: Path = []): InputProblem | null {
  const pending: { value: unknown; path: Path }[] = [{ value: input, path: at }];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const { value, path } = item;
    if (typeof value === 'string') {
      const message = textProblem(value);
      if (message) return { path, message };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= MAX_INPUT_DEPTH) return { path, message: `must not nest deeper than ${MAX_INPUT_DEPTH} levels` };
    const entries: [string | number, unknown][] = Array.isArray(value) ? [...value.entries()] : Object.entries(value);
    for (const [key, child] of entries.reverse()) {
      const keyMessage = typeof key === 'string' ? textProblem(key) : null;
      if (keyMessage) return { path: [...path, key], message: keyMessage };
      pending.push({ value: child, path: [...path, key] });
    }
  }
  return null;
}
