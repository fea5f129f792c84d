import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long one step may hold the event loop before the rest waits for the next turn. */
const STEP_MS = 4;

export interface JsonPieces {
  /** Joined, exactly `JSON.stringify` of the value. */
  pieces: string[];
  /** The UTF-8 length of the whole, for Content-Length. */
  bytes: number;
}

/**
 * `JSON.stringify(value)` of a request body, made one top-level field and one array element at a
 * time, with a turn of the event loop whenever a step has run STEP_MS: a provider request carries
 * the whole history window, up to MAX_CONVERSATION_HISTORY messages of 100,000 characters (5 MB),
 * whose one-go serialisation held every other request for 15–25 ms (issue 20's hostile load).
 * Only the body's own top level and its arrays (`messages`, `tools`) are split; every piece is
 * JSON.stringify's own text, so the whole is byte for byte the same.
 */
export async function jsonInSteps(value: Readonly<Record<string, unknown>>): Promise<JsonPieces> {
  const pieces: string[] = ['{'];
  let bytes = 1;
  let stepStart = performance.now();
  const add = async (text: string) => {
    pieces.push(text);
    bytes += Buffer.byteLength(text);
    if (performance.now() - stepStart < STEP_MS) return;
    await nextTurn();
    stepStart = performance.now();
  };
  let separator = '';
  for (const [key, field] of Object.entries(value)) {
    // What JSON.stringify leaves out of an object.
    if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
    await add(`${separator}${JSON.stringify(key)}:`);
    separator = ',';
    if (!Array.isArray(field)) {
      await add(JSON.stringify(field));
      continue;
    }
    await add('[');
    for (let index = 0; index < field.length; index++) {
      // In an array, what an object would leave out is null.
      const text = (JSON.stringify(field[index]) as string | undefined) ?? 'null';
      await add(index === 0 ? text : `,${text}`);
    }
    await add(']');
  }
  pieces.push('}');
  return { pieces, bytes: bytes + 1 };
}
