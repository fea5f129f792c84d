import { types, type Operation, type Schema } from './openapi-operations.js';

// The contract model: does a decoded input satisfy the schema the way zod would read it? Its
// verdict: `reject` means the service must refuse the request with a 4xx, `any` that only the
// general rules apply (no 5xx, errors in the envelope), `none` that no reply can come.

export type Verdict = 'reject' | 'any' | 'none';

export const BODY_LIMIT = 1024 * 1024;
const MAX_DEPTH = 64;

/** zod's reading of a JSON value: lengths in UTF-16 units, integers safe, numbers finite. */
export function conforms(schema: Schema, value: unknown): boolean {
  if (schema.anyOf) return schema.anyOf.some((branch) => conforms(branch, value));
  if (schema.enum && !schema.enum.includes(value)) return false;
  const allowed = types(schema);
  if (allowed.length === 0) return value !== undefined;
  return allowed.some((type) => conformsAs(type, schema, value));
}

function conformsAs(type: string, schema: Schema, value: unknown): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      // Some fields are trimmed before they are checked (zod's .trim(), which the document cannot
      // show), so a value that passes either way is not held against the service.
      return typeof value === 'string' && (stringConforms(schema, value) || stringConforms(schema, value.trim()));
    case 'integer':
    case 'number':
      return (
        typeof value === 'number' &&
        Number.isFinite(value) &&
        (type === 'number' || Number.isSafeInteger(value)) &&
        value >= (schema.minimum ?? -Infinity) &&
        value <= (schema.maximum ?? Infinity)
      );
    case 'array':
      return (
        Array.isArray(value) &&
        value.length >= (schema.minItems ?? 0) &&
        value.length <= (schema.maxItems ?? Infinity) &&
        value.every((item) => (schema.items ? conforms(schema.items, item) : true))
      );
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
      const record = value as Record<string, unknown>;
      for (const key of schema.required ?? []) if (!Object.hasOwn(record, key)) return false;
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        if (Object.hasOwn(record, key) && !conforms(child, record[key])) return false;
      }
      const extra = schema.additionalProperties;
      if (typeof extra === 'object') {
        for (const [key, child] of Object.entries(record)) {
          // zod drops a record's `__proto__` key unread (its guard against prototype pollution),
          // so whatever it holds is not refused; the test checks that nothing got polluted.
          if (schema.properties?.[key] || key === '__proto__') continue;
          if (schema.propertyNames && !conforms(schema.propertyNames, key)) return false;
          if (!conforms(extra, child)) return false;
        }
      }
      return true;
    }
    default:
      return true;
  }
}

function stringConforms(schema: Schema, value: string): boolean {
  return (
    value.length >= (schema.minLength ?? 0) &&
    value.length <= (schema.maxLength ?? Infinity) &&
    (schema.pattern === undefined || new RegExp(schema.pattern, 'u').test(value))
  );
}

export const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const unstorable = (text: string) => text.includes('\u0000') || loneSurrogate.test(text);

/** CONTRACT-level refusals before any schema: NUL or lone surrogates anywhere, nesting past 64. */
function unstorableInput(input: unknown): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value: input, depth: 0 }];
  for (let item = pending.pop(); item; item = pending.pop()) {
    if (typeof item.value === 'string') {
      if (unstorable(item.value)) return true;
      continue;
    }
    if (item.value === null || typeof item.value !== 'object') continue;
    if (item.depth >= MAX_DEPTH) return true;
    for (const [key, child] of Object.entries(item.value)) {
      if (unstorable(key)) return true;
      pending.push({ value: child, depth: item.depth + 1 });
    }
  }
  return false;
}

/** A media type that is plainly not JSON (no Content-Type at all counts): its body must be refused. */
const plainlyNotJson = (contentType: string | undefined) => !/json/i.test(contentType ?? '');
const jsonMediaType = /^application\/([\w.+-]*\+)?json\s*(;|$)/i;

/** A path segment that routes to the operation itself: no slash, no dot segment. */
function plainSegment(raw: string): boolean {
  return raw !== '' && !raw.includes('/') && !/^(\.|%2e){1,2}$/i.test(raw);
}

function decodedParams(operation: Operation, raw: Record<string, string>): Record<string, string> | null | 'elsewhere' {
  const params: Record<string, string> = {};
  for (const parameter of operation.pathParams) {
    const segment = raw[parameter.name] ?? '';
    if (!plainSegment(segment)) return 'elsewhere';
    try {
      params[parameter.name] = decodeURIComponent(segment);
    } catch {
      return null;
    }
  }
  return params;
}

/** Query parameters arrive as strings and the procedures coerce numbers (z.coerce.number). */
function queryConforms(schema: Schema, value: string | string[]): boolean | 'unsure' {
  if (schema.anyOf) {
    const results = schema.anyOf.map((branch) => queryConforms(branch, value));
    return results.includes(true) ? true : results.includes('unsure') ? 'unsure' : false;
  }
  const [type] = types(schema);
  if (type === 'integer' || type === 'number') return conforms(schema, typeof value === 'string' ? Number(value) : NaN);
  if (type === 'string') return conforms(schema, value);
  return 'unsure';
}

export function judgeQuery(operation: Operation, raw: Record<string, string>, query: string): Verdict {
  const params = decodedParams(operation, raw);
  if (params === null) return 'reject';
  if (params === 'elsewhere') return 'any';
  const values: Record<string, string | string[]> = {};
  const search = new URLSearchParams(query);
  for (const key of new Set(search.keys())) {
    const all = search.getAll(key);
    values[key] = all.length === 1 ? (all[0] ?? '') : all;
  }
  delete values.access_token;
  const input: Record<string, unknown> = { ...values, ...params };
  if (unstorableInput(input)) return 'reject';
  for (const parameter of operation.pathParams) if (!conforms(parameter.schema, params[parameter.name])) return 'reject';
  for (const parameter of operation.queryParams) {
    const value = values[parameter.name];
    if (value === undefined ? parameter.required : queryConforms(parameter.schema, value) === false) return 'reject';
  }
  return 'any';
}

export function judgeBody(operation: Operation, raw: Record<string, string>, contentType: string | undefined, body: Buffer | undefined): Verdict {
  const params = decodedParams(operation, raw);
  if (params === null) return 'reject';
  if (params === 'elsewhere') return 'any';
  if (body && body.length > BODY_LIMIT) return 'reject';
  const text = body?.toString('utf8') ?? '';
  let value: unknown = {};
  if (!/^[ \t\r\n]*$/.test(text)) {
    if (plainlyNotJson(contentType)) return 'reject';
    if (!jsonMediaType.test(contentType ?? '')) return 'any';
    try {
      value = JSON.parse(text);
    } catch {
      return 'reject';
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'reject';
  }
  const input: Record<string, unknown> = { ...(value as Record<string, unknown>), ...params };
  if (unstorableInput(input)) return 'reject';
  const schema: Schema = {
    type: 'object',
    properties: { ...operation.body?.properties, ...Object.fromEntries(operation.pathParams.map((p) => [p.name, p.schema])) },
    required: [...(operation.body?.required ?? []), ...operation.pathParams.map((p) => p.name)],
  };
  if (operation.body?.additionalProperties !== undefined) schema.additionalProperties = operation.body.additionalProperties;
  return conforms(schema, input) ? 'any' : 'reject';
}
