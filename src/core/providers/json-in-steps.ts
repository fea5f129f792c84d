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
 *
 * A body made within one step (every ordinary one) comes back at once, not as a promise: an
 * `await` per piece cost a chat request's start about as much again as the serialisation itself
 * (BENCHMARKS.md, issue 24). Only a body that needs a turn resolves later.
 */
export function jsonInSteps(value: Readonly<Record<string, unknown>>): JsonPieces | Promise<JsonPieces> {
  return fill({ pieces: ['{'], bytes: 1 }, piecesOf(value), performance.now());
}

/** Adds pieces until they are done (the body, at once) or the step has run STEP_MS (a promise of it, after a turn). */
function fill(body: JsonPieces, pieces: Iterator<string>, stepStart: number): JsonPieces | Promise<JsonPieces> {
  for (let next = pieces.next(); next.done !== true; next = pieces.next()) {
    body.pieces.push(next.value);
    body.bytes += Buffer.byteLength(next.value);
    if (performance.now() - stepStart >= STEP_MS) return nextTurn().then(() => fill(body, pieces, performance.now()));
  }
  body.pieces.push('}');
  body.bytes += 1;
  return body;
}

/** The body's text after its `{` and before its `}`, piece by piece. */
function* piecesOf(value: Readonly<Record<string, unknown>>): Generator<string, void, undefined> {
  let separator = '';
  for (const [key, field] of Object.entries(value)) {
    // What JSON.stringify leaves out of an object.
    if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
    yield `${separator}${JSON.stringify(key)}:`;
    separator = ',';
    if (!Array.isArray(field)) {
      yield JSON.stringify(field);
      continue;
    }
    yield '[';
    for (let index = 0; index < field.length; index++) {
      // In an array, what an object would leave out is null.
      const text = (JSON.stringify(field[index]) as string | undefined) ?? 'null';
      yield index === 0 ? text : `,${text}`;
    }
    yield ']';
  }
}
