import { bodyDraft } from './body-drafts.js';
import { conforms } from './contract-model.js';
import type { ProtectedIds } from './item-ids.js';
import { RawJson, setOwn, type Value } from './json-value.js';
import { types, type Operation, type Schema } from './openapi-operations.js';
import { judgeDraft, type Draft } from './request-draft.js';
import type { Rng } from './seeded-random.js';

/** Kinds whose body is refused by construction most of the time; the verdict is still checked. */
const refusingKinds = ['wrong-type', 'missing-required', 'out-of-range', 'truncated', 'top-level', 'nested-junk', 'special-string', 'content-type', 'raw-json'];

/**
 * Points a sampled body at protected items: every id field the schema has (a nested `id` takes
 * its parent's pool, `order.id` the orderId one) is set to one of them.
 */
function aimAt(schema: Schema, value: Value, protectedIds: ProtectedIds, rng: Rng, parentKey = ''): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof RawJson) return false;
  let aimed = false;
  const branch = schema.anyOf?.find((candidate) => conforms(candidate, value)) ?? schema;
  for (const [key, child] of Object.entries(branch.properties ?? {})) {
    const pool = protectedIds[key === 'id' ? `${parentKey}Id` : key];
    if (pool?.length && types(child).includes('string')) {
      setOwn(value, key, rng.pick(pool));
      aimed = true;
    } else if (value[key] !== undefined) {
      aimed = aimAt(child, value[key], protectedIds, rng, key) || aimed;
    }
  }
  return aimed;
}

/**
 * A request aimed at a protected item (its id in the path, or in the body's id fields) with a
 * body the model says must be refused, so a service that acted before validating is caught.
 */
export function seededDraft(operation: Operation, rng: Rng, protectedIds: ProtectedIds): { draft: Draft; ids: Record<string, string> } | undefined {
  const paramNames = operation.pathParams.map((parameter) => parameter.name);
  if (paramNames.some((name) => !protectedIds[name]?.length)) return undefined;
  const ids = Object.fromEntries(paramNames.map((name) => [name, encodeURIComponent(rng.pick(protectedIds[name] ?? []))]));
  const schema = operation.body ?? {};
  for (let attempt = 0; attempt < 12; attempt++) {
    let aimed = paramNames.length > 0;
    const draft = bodyDraft(operation, rng.pick(refusingKinds), rng, (base) => {
      aimed = aimAt(schema, base, protectedIds, rng) || aimed;
    });
    if (!aimed) return undefined;
    if (judgeDraft(operation, { ...draft, pathIds: ids }) === 'reject') return { draft: { ...draft, detail: `seeded, ${draft.detail}` }, ids };
  }
  return undefined;
}
