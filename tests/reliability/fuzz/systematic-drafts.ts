import { slotsOf } from './body-slots.js';
import { wrongTypeFor } from './hostile-ingredients.js';
import { deleteAt, encode, setAt } from './json-value.js';
import { types, type Operation, type Schema } from './openapi-operations.js';
import { encodePairs, sampleQuery } from './query-drafts.js';
import { jsonType, type Draft } from './request-draft.js';
import type { Rng } from './seeded-random.js';
import { sample } from './value-sampling.js';

/** The most branches any `anyOf` in the schema has: the systematic pass samples each of them. */
function branchCount(schema: Schema): number {
  const children = [...Object.values(schema.properties ?? {}), ...(schema.items ? [schema.items] : []), ...(schema.anyOf ?? [])];
  return Math.max(schema.anyOf?.length ?? 1, ...children.map(branchCount));
}

/** A query value the parameter's schema refuses, when there is one. */
function wrongQueryValue(schema: Schema): string | undefined {
  const target = schema.anyOf?.find((branch) => branch.enum) ?? schema;
  const [type] = types(target);
  if (type === 'integer' || type === 'number') return 'abc';
  if (target.enum) return 'not-an-option';
  if (target.maxLength !== undefined) return 'm'.repeat(target.maxLength + 1);
  return undefined;
}

/**
 * The systematic pass: one request per field and fault. Each body field (under every `anyOf`
 * branch) gets a value of a wrong type, each required field is left out, each query parameter
 * gets a value its schema refuses and, when required, is left out.
 */
export function* systematicDrafts(operation: Operation, rng: Rng): Generator<Draft> {
  if (operation.method === 'GET' || operation.method === 'DELETE') {
    for (const parameter of operation.queryParams) {
      const others = sampleQuery(operation, rng).filter(([key]) => key !== parameter.name);
      const wrong = wrongQueryValue(parameter.schema);
      if (wrong !== undefined) {
        yield { kind: 'wrong-type', detail: `${parameter.name}=${wrong.slice(0, 20)}`, query: encodePairs([...others, [parameter.name, wrong]]) };
      }
      if (parameter.required) yield { kind: 'missing-required', detail: `without ${parameter.name}`, query: encodePairs(others) };
    }
    return;
  }
  if (!operation.body) return;
  const done = new Set<string>();
  for (let branch = 0; branch < branchCount(operation.body); branch++) {
    const probe = sample(operation.body, 'body', rng, branch);
    for (const slot of slotsOf(operation.body, probe)) {
      const where = slot.path.join('.');
      const wrong = wrongTypeFor(slot.schema, rng);
      if (wrong !== undefined && !done.has(`type ${where}`)) {
        done.add(`type ${where}`);
        const body = structuredClone(probe);
        setAt(body, slot.path, wrong);
        yield { kind: 'wrong-type', detail: `${where}=${encode(wrong).slice(0, 30)}`, contentType: jsonType, body: Buffer.from(encode(body)) };
      }
      if (slot.required && typeof slot.path.at(-1) === 'string' && !done.has(`missing ${where}`)) {
        done.add(`missing ${where}`);
        const body = structuredClone(probe);
        deleteAt(body, slot.path);
        yield { kind: 'missing-required', detail: `without ${where}`, contentType: jsonType, body: Buffer.from(encode(body)) };
      }
    }
  }
}
