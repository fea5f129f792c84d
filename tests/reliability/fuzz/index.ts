import { bodyDraft } from './body-drafts.js';
import type { Verdict } from './contract-model.js';
import type { KnownIds, ProtectedIds } from './item-ids.js';
import { applicableKinds } from './mutation-kinds.js';
import type { Operation } from './openapi-operations.js';
import { queryDraft } from './query-drafts.js';
import { judgeDraft } from './request-draft.js';
import { seededDraft } from './seeded-drafts.js';
import { Rng } from './seeded-random.js';
import { systematicDrafts } from './systematic-drafts.js';
import { sampleString } from './value-sampling.js';

// Malformed requests made from the service's own OpenAPI document. A systematic pass gives each
// body field a wrong type and leaves out each required field and parameter; then each operation's
// schema and parameters are sampled into plausible requests and mutated one way at a time (huge,
// odd or unstorable strings, nested junk, broken or truncated JSON, wrong content types, hostile
// path ids, odd headers, bodies dropped halfway). Every request carries a verdict from a small
// model of the contract (schema, JSON-only bodies, the body limit, no NUL or lone surrogates, no
// deep nesting): `reject` means the service must refuse it with a 4xx, `any` that only the
// general rules apply (no 5xx, errors in the envelope), `none` that no reply can come. Everything
// comes from one seeded generator, so a seed and a request's index name a request exactly.

export { idKinds, type KnownIds, type ProtectedIds } from './item-ids.js';
export { operationsOf, type Operation, type Schema } from './openapi-operations.js';
export type { Verdict } from './contract-model.js';

export interface FuzzRequest {
  index: number;
  operation: string;
  kind: string;
  /** What was done, short enough to print: with the seed it names the request exactly. */
  label: string;
  method: string;
  /** Raw request target, sent as it is (no URL normalisation on the client side). */
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** Send only this many body bytes, then drop the connection. */
  abortAfter?: number;
  verdict: Verdict;
}

function pathFor(operation: Operation, ids: Record<string, string>): string {
  return operation.template.replace(/\{([^}]+)\}/g, (_, name: string) => ids[name] ?? 'x');
}

function randomIds(operation: Operation, rng: Rng): Record<string, string> {
  return Object.fromEntries(
    operation.pathParams.map((parameter) => [parameter.name, encodeURIComponent(sampleString(parameter.schema, parameter.name, rng))]),
  );
}

/**
 * `count` requests: first the systematic pass over every operation, then seeded mutations spread
 * evenly over the operations (in a seeded order). Generated lazily, so the multi-megabyte bodies
 * exist one at a time.
 */
export function* generateRequests(
  operations: readonly Operation[],
  count: number,
  seed: number,
  protectedIds: ProtectedIds,
  known: KnownIds = new Map(),
): Generator<FuzzRequest> {
  const rng = new Rng(seed, known);
  const order = [...operations];
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [order[i], order[j]] = [order[j] as Operation, order[i] as Operation];
  }
  const systematic = order.flatMap((operation) => Array.from(systematicDrafts(operation, rng), (draft) => ({ operation, draft })));
  for (let index = 0; index < count; index++) {
    const planned = systematic[index];
    const operation = planned?.operation ?? order[(index - systematic.length) % order.length];
    if (!operation) return;
    const read = operation.method === 'GET' || operation.method === 'DELETE';
    const seeded = !planned && !read && rng.chance(0.3) ? seededDraft(operation, rng, protectedIds) : undefined;
    const kinds = applicableKinds(operation, protectedIds);
    const draft =
      planned?.draft ?? seeded?.draft ?? (read ? queryDraft(operation, rng.pick(kinds), rng, protectedIds) : bodyDraft(operation, rng.pick(kinds), rng));
    const seededIds = seeded?.ids;
    const pathIds = seededIds ?? draft.pathIds ?? randomIds(operation, rng);
    const verdict = judgeDraft(operation, { ...draft, pathIds });
    const headers: Record<string, string> = { ...draft.headers };
    if (draft.contentType !== undefined) headers['content-type'] = draft.contentType;
    const path = pathFor(operation, pathIds) + (draft.query ? `?${draft.query}` : '');
    const method = draft.method ?? operation.method;
    yield {
      index,
      operation: operation.name,
      kind: draft.kind,
      label: `#${index} ${operation.name} [${draft.kind}] ${draft.detail} -> ${method} ${path.length > 120 ? `${path.slice(0, 120)}…(${path.length})` : path}`,
      method,
      path,
      headers,
      body: draft.body,
      ...(draft.abortAfter === undefined ? {} : { abortAfter: draft.abortAfter }),
      verdict,
    };
  }
}
