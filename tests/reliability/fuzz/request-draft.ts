import { judgeBody, judgeQuery, type Verdict } from './contract-model.js';
import { oddHeaders, pathIds } from './hostile-ingredients.js';
import type { Operation } from './openapi-operations.js';
import type { Rng } from './seeded-random.js';
import { texts } from './value-sampling.js';

// A request as the drafts describe it, before it gets its path ids and its verdict, and what body
// and query drafts share: odd headers, hostile path ids, and the verdict of the contract model.

export interface Draft {
  kind: string;
  detail: string;
  method?: string;
  pathIds?: Record<string, string>;
  query?: string;
  contentType?: string | undefined;
  headers?: Record<string, string>;
  body?: Buffer | undefined;
  abortAfter?: number;
  /** Set when the contract leaves the outcome open, whatever the model would say. */
  verdict?: Verdict;
}

export const jsonType = 'application/json';

/** An odd header on an otherwise plausible request; a foreign Host must be refused (CONTRACT §2). */
export function withOddHeader(draft: Draft, rng: Rng): Draft {
  const [name, value] = rng.pick(oddHeaders);
  const foreignHost = name === 'host' && value !== 'localhost';
  return { ...draft, detail: `${name}: ${value.slice(0, 24)}`, headers: { ...draft.headers, [name]: value }, ...(foreignHost ? { verdict: 'reject' as const } : {}) };
}

export function weirdIds(operation: Operation, rng: Rng): Record<string, string> {
  return Object.fromEntries(
    operation.pathParams.map((parameter) => {
      const choice = rng.int(0, 3);
      const id = choice === 0 ? 'a'.repeat(rng.int(300, 6000)) : choice === 1 ? encodeURIComponent(rng.pick(texts)) : rng.pick(pathIds);
      return [parameter.name, id];
    }),
  );
}

export function judgeDraft(operation: Operation, draft: Draft): Verdict {
  if (draft.verdict) return draft.verdict;
  const ids = draft.pathIds ?? {};
  if (operation.method === 'GET' || operation.method === 'DELETE') return judgeQuery(operation, ids, draft.query ?? '');
  return judgeBody(operation, ids, draft.contentType, draft.body);
}
