import type { ProtectedIds } from './item-ids.js';
import type { Operation } from './openapi-operations.js';

// The mutations a random request draws from; a kind listed twice is drawn twice as often.

export const bodyKinds = [
  'valid', 'valid', 'valid', 'valid', 'wrong-type', 'wrong-type', 'missing-required', 'out-of-range', 'special-string', 'special-string',
  'special-key', 'huge-string', 'large-string', 'nested-junk', 'raw-json', 'top-level', 'truncated', 'truncated',
  'content-type', 'content-type', 'encoding', 'aborted', 'path-id', 'path-id', 'wrong-method', 'odd-header',
] as const;
export const queryKinds = [
  'valid', 'valid', 'query-value', 'query-value', 'query-missing', 'query-repeated', 'query-brackets', 'query-special',
  'query-percent', 'query-huge', 'unknown-query', 'body-on-read', 'path-id', 'path-id', 'wrong-method', 'seeded-read', 'odd-header',
] as const;

export function applicableKinds(operation: Operation, protectedIds: ProtectedIds): readonly string[] {
  const hasIds = operation.pathParams.length > 0;
  if (operation.method !== 'GET' && operation.method !== 'DELETE') return bodyKinds.filter((kind) => hasIds || kind !== 'path-id');
  const seedable = operation.method === 'GET' && hasIds && operation.pathParams.every((parameter) => protectedIds[parameter.name]?.length);
  return queryKinds.filter(
    (kind) =>
      (hasIds || kind !== 'path-id') &&
      (seedable || kind !== 'seeded-read') &&
      (operation.queryParams.some((parameter) => parameter.required) || kind !== 'query-missing'),
  );
}
