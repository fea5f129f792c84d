import { loneSurrogate } from './contract-model.js';
import { deepNesting, queryOddities, rawPercent, specialKeys, specialStrings } from './hostile-ingredients.js';
import type { ProtectedIds } from './item-ids.js';
import { encode, type Value } from './json-value.js';
import type { Operation } from './openapi-operations.js';
import { jsonType, weirdIds, withOddHeader, type Draft } from './request-draft.js';
import type { Rng } from './seeded-random.js';
import { sample, texts } from './value-sampling.js';

export function sampleQuery(operation: Operation, rng: Rng): [string, string][] {
  const pairs: [string, string][] = [];
  for (const parameter of operation.queryParams) {
    if (!parameter.required && !rng.chance(0.5)) continue;
    const schema = parameter.schema.anyOf?.find((branch) => branch.enum) ?? parameter.schema;
    const sampled = schema.enum?.length ? (rng.pick(schema.enum) as Value) : sample(schema, parameter.name, rng);
    pairs.push([parameter.name, typeof sampled === 'string' || typeof sampled === 'number' || typeof sampled === 'boolean' ? String(sampled) : encode(sampled)]);
  }
  return pairs;
}

export const encodePairs = (pairs: [string, string][]) => pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&');

export function queryDraft(operation: Operation, kind: string, rng: Rng, protectedIds: ProtectedIds): Draft {
  const pairs = sampleQuery(operation, rng);
  const named = operation.queryParams.map((parameter) => parameter.name);
  const anyName = () => (named.length > 0 ? rng.pick(named) : rng.pick(['limit', 'q', 'offset']));
  const draft = (query: string, detail: string, extra: Partial<Draft> = {}): Draft => ({ kind, detail, query, ...extra });
  switch (kind) {
    case 'query-value': {
      const name = anyName();
      const value = rng.pick(queryOddities);
      return draft(encodePairs([...pairs.filter(([key]) => key !== name), [name, value]]), `${name}=${JSON.stringify(value)}`);
    }
    case 'query-missing': {
      const required = operation.queryParams.filter((parameter) => parameter.required);
      if (required.length === 0) break;
      const name = rng.pick(required).name;
      return draft(encodePairs(pairs.filter(([key]) => key !== name)), `without ${name}`);
    }
    case 'query-repeated': {
      const name = anyName();
      return draft(`${encodePairs(pairs)}&${name}=1&${name}=2`, `${name} twice`);
    }
    case 'query-brackets': {
      const name = anyName();
      const raw = rng.pick([`${name}[]=1`, `${name}[$gt]=0`, `${name}[0]=x`, '__proto__[fuzzPolluted]=yes', 'constructor[prototype][fuzzPolluted]=yes', `${name}.x=1`]);
      return draft(`${encodePairs(pairs)}&${raw}`, raw);
    }
    case 'query-special': {
      const name = anyName();
      const value = rng.pick(specialStrings.filter((text) => !loneSurrogate.test(text)));
      return draft(encodePairs([...pairs.filter(([key]) => key !== name), [name, value]]), `${name}=${JSON.stringify(value).slice(0, 30)}`);
    }
    case 'query-percent': {
      const name = anyName();
      const raw = rng.pick(rawPercent);
      return draft(`${encodePairs(pairs.filter(([key]) => key !== name))}&${name}=${raw}`, `${name}=${raw}`);
    }
    case 'query-huge': {
      // Long enough to break any length limit, short enough to stay under Node's 16 KB header cap
      // now and then above it: the reply must be the envelope either way.
      const name = anyName();
      const size = rng.pick([600, 4000, 12_000, 20_000, 70_000]);
      return draft(`${encodePairs(pairs)}&${name}=${'q'.repeat(size)}`, `${name} of ${size} chars`);
    }
    case 'unknown-query':
      return draft(`${encodePairs(pairs)}&${encodeURIComponent(rng.pick(specialKeys.filter((key) => !loneSurrogate.test(key))))}=${encodeURIComponent(rng.pick(texts))}&junk=1`, 'unknown parameters');
    case 'body-on-read': {
      const text = rng.pick(['{"a":1}', '{', 'not json', '[]', encode(deepNesting(5000, rng))]);
      return draft(encodePairs(pairs), `body ${JSON.stringify(text.slice(0, 20))}`, { contentType: rng.pick([jsonType, 'text/plain']), body: Buffer.from(text) });
    }
    case 'path-id':
      if (operation.pathParams.length === 0) break;
      return draft(encodePairs(pairs), '', { pathIds: weirdIds(operation, rng) });
    case 'wrong-method':
      // Not one the path has (PUT /api/policies is a real operation beside GET).
      return draft(encodePairs(pairs), '', { method: rng.pick(['PUT', 'PATCH', 'TRACE'].filter((candidate) => !operation.pathMethods.has(candidate))), verdict: 'reject' });
    case 'odd-header':
      return withOddHeader(draft(encodePairs(pairs), ''), rng);
    case 'seeded-read': {
      // Reads of the protected items are harmless and exercise real rows; deletes never get them.
      if (operation.method !== 'GET') break;
      const ids: Record<string, string> = {};
      for (const parameter of operation.pathParams) {
        const pool = protectedIds[parameter.name];
        if (!pool?.length) return draft(encodePairs(pairs), '', { kind: 'valid' });
        ids[parameter.name] = encodeURIComponent(rng.pick(pool));
      }
      if (operation.pathParams.length === 0) break;
      return draft(encodePairs(pairs), 'seeded id', { pathIds: ids });
    }
    default:
      break;
  }
  return draft(encodePairs(pairs), '', { kind: 'valid' });
}
