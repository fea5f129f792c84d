import { gzipSync } from 'node:zlib';

// Malformed requests made from the service's own OpenAPI document. A systematic pass gives each
// body field a wrong type and leaves out each required field and parameter; then each operation's
// schema and parameters are sampled into plausible requests and mutated one way at a time (huge,
// odd or unstorable strings, nested junk, broken or truncated JSON, wrong content types, hostile
// path ids, odd headers, bodies dropped halfway). Every request carries a verdict from a small
// model of the contract (schema, JSON-only bodies, the body limit, no NUL or lone surrogates, no
// deep nesting): `reject` means the service must refuse it with a 4xx, `any` that only the
// general rules apply (no 5xx, errors in the envelope), `none` that no reply can come. Everything
// comes from one seeded generator, so a seed and a request's index name a request exactly.

export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  anyOf?: Schema[];
  additionalProperties?: Schema | boolean;
  propertyNames?: Schema;
  default?: unknown;
}

interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  method: string;
  template: string;
  /** `POST /api/conversation/{id}/rename`, as the coverage count and the labels name it. */
  name: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  /** The JSON request body's schema; absent when the operation documents no body. */
  body: Schema | undefined;
}

export type Verdict = 'reject' | 'any' | 'none';

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

/** Ids the fuzzer may only use in requests that must be refused, so they cannot be changed. */
export type ProtectedIds = Partial<Record<string, readonly string[]>>;

/**
 * Ids the service handed out during the run, by kind (`conversation`, `terminal`, `stream`, …),
 * filled in by the caller from the replies. Valid-looking requests use them half the time, so
 * they reach real terminals, streams and held commands instead of a 404. (A replay with the same
 * seed sends the same requests, up to the ids the service hands out.)
 */
export type KnownIds = Map<string, string[]>;

/** The kind of item an id field or path parameter names. */
export const idKinds: Partial<Record<string, string>> = {
  id: 'conversation',
  conversation_id: 'conversation',
  conversationId: 'conversation',
  orderId: 'order',
  workspaceId: 'workspace',
  terminalId: 'terminal',
  streamId: 'stream',
  commandId: 'command',
};

const BODY_LIMIT = 1024 * 1024;
const MAX_DEPTH = 64;

/** xorshift32 (Marsaglia): tiny, fast and fully determined by its seed. */
class Rng {
  private state: number;

  constructor(
    seed: number,
    private readonly known: KnownIds = new Map(),
  ) {
    this.state = seed >>> 0 || 0x6d2b79f5;
    for (let warm = 0; warm < 8; warm++) this.next();
  }

  next(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 0x1_0000_0000;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** An id for a field or parameter of this name: one the service handed out, or a fresh unknown one. */
  id(name: string): string {
    const kind = idKinds[name];
    const ids = kind === undefined ? undefined : this.known.get(kind);
    return ids?.length && this.chance(0.5) ? this.pick(ids) : this.uuid();
  }

  uuid(): string {
    const hex = Array.from({ length: 32 }, () => this.int(0, 15).toString(16));
    hex[12] = '4';
    hex[16] = (8 + this.int(0, 3)).toString(16);
    const s = hex.join('');
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }
}

/** Every operation of the document, with its parameters and JSON body schema. */
export function operationsOf(document: { paths: Record<string, Record<string, any>> }): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const parameters = (operation.parameters ?? []) as Parameter[];
      operations.push({
        method: method.toUpperCase(),
        template,
        name: `${method.toUpperCase()} ${template}`,
        pathParams: parameters.filter((parameter) => parameter.in === 'path'),
        queryParams: parameters.filter((parameter) => parameter.in === 'query'),
        body: operation.requestBody?.content?.['application/json']?.schema as Schema | undefined,
      });
    }
  }
  return operations;
}

// ---------------------------------------------------------------------------------------------
// JSON values, with raw fragments for what JSON.stringify cannot write (1e999, 100,000 brackets).

class RawJson {
  constructor(readonly text: string) {}
}

type Value = null | boolean | number | string | RawJson | Value[] | { [key: string]: Value };
type Key = string | number;

function encode(value: Value): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(encode).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, child]) => `${JSON.stringify(key)}:${encode(child)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Defines the key as an own property: `__proto__` must stay data, not change the prototype. */
function setOwn(target: Record<string, Value> | Value[], key: Key, value: Value): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function childAt(root: Value, path: readonly Key[]): Value | undefined {
  let node: Value | undefined = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || node instanceof RawJson) return undefined;
    node = (node as Record<Key, Value>)[key];
  }
  return node;
}

function setAt(root: Value, path: readonly Key[], value: Value): void {
  const parent = childAt(root, path.slice(0, -1));
  const key = path.at(-1);
  if (key !== undefined && parent !== null && typeof parent === 'object' && !(parent instanceof RawJson)) setOwn(parent, key, value);
}

function deleteAt(root: Value, path: readonly Key[]): void {
  const parent = childAt(root, path.slice(0, -1));
  const key = path.at(-1);
  if (key !== undefined && parent !== null && typeof parent === 'object' && !(parent instanceof RawJson) && !Array.isArray(parent)) {
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- the field under test is removed by name
    delete parent[key];
  }
}

// ---------------------------------------------------------------------------------------------
// The contract model: does a decoded input satisfy the schema the way zod would read it?

function types(schema: Schema): string[] {
  if (schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

/** zod's reading of a JSON value: lengths in UTF-16 units, integers safe, numbers finite. */
function conforms(schema: Schema, value: unknown): boolean {
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

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
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

function judgeQuery(operation: Operation, raw: Record<string, string>, query: string): Verdict {
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

function judgeBody(operation: Operation, raw: Record<string, string>, contentType: string | undefined, body: Buffer | undefined): Verdict {
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

// ---------------------------------------------------------------------------------------------
// Plausible values, chosen by field name so a good share of requests gets past validation.

const texts = ['Hello there', 'Summarise this in one line.', 'What is 2 + 2?', 'Ünïcödé ✓ 漢字 🙂', 'Plan for today', 'Fuzzed'];
const stringsByName: Record<string, readonly string[]> = {
  message: texts,
  content: texts,
  title: ['Fuzzed title', 'Notes', 'Plan ✓', ''],
  name: ['Fuzzed order', 'fuzz-workspace', 'llama3.2', 'no-such-model:latest'],
  description: ['made by the fuzzer', ''],
  model: ['llama3.2', 'ollama/llama3.2', 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5', 'gpt-4o', 'no-such-model'],
  modelName: ['llama3.2', 'gpt-4o-mini', 'claude-sonnet-4-5', 'tinyllama', 'no-such-model'],
  apiKey: ['sk-fuzz-key', 'sk-ant-fuzz'],
  path: ['/var/tmp/fuzz-missing-folder', 'relative/folder', '/nonexistent/fuzz'],
  workingDirectory: ['/var/tmp/fuzz-missing-folder', 'sub', '.'],
  command: ['echo fuzz', 'pwd', 'ls -la'],
  branchName: ['main', 'feature/fuzz', 'no-such-branch'],
  role: ['user', 'assistant'],
};
const validSections: Value[] = [
  { type: 'system', content: 'Answer briefly.' },
  { type: 'workspace_context', enabled: false },
  { type: 'conversation_history' },
  { type: 'user_message' },
];

function fitLength(text: string, schema: Schema): string {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Infinity;
  const padded = text.length < min ? text + 'x'.repeat(min - text.length) : text;
  return padded.length > max ? padded.slice(0, max) : padded;
}

function sampleString(schema: Schema, name: string, rng: Rng): string {
  if (idKinds[name]) return rng.id(name);
  return fitLength(rng.pick(stringsByName[name] ?? ['fuzz', 'value', 'x']), schema);
}

function sampleNumber(schema: Schema, name: string, integer: boolean, rng: Rng): number {
  if (name === 'temperature') return rng.int(0, 20) / 10;
  const min = schema.minimum ?? 0;
  const max = Math.min(schema.maximum ?? min + 100, min + (name === 'maxTokens' ? 256 : 100));
  const value = rng.int(min, max);
  return integer || rng.chance(0.5) ? value : Math.min(max, value + 0.5);
}

/**
 * A plausible value for the schema. With `full` (a branch number) every property is present, every
 * array has an item and each `anyOf` takes that branch: the systematic pass changes each field in turn.
 */
function sample(schema: Schema, name: string, rng: Rng, full?: number): Value {
  if (schema.anyOf?.length) return sample(full === undefined ? rng.pick(schema.anyOf) : (schema.anyOf[full % schema.anyOf.length] ?? {}), name, rng, full);
  if (schema.enum?.length) return rng.pick(schema.enum) as Value;
  if (name === 'sections' && full === undefined && rng.chance(0.8)) return structuredClone(validSections);
  const [type] = types(schema);
  switch (type) {
    case 'object': {
      const out: Record<string, Value> = {};
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        // An id field names an unknown item (404), so it is left out more often than other fields.
        const keep = full !== undefined || schema.required?.includes(key) || rng.chance(idKinds[key] ? 0.2 : 0.5);
        if (keep) setOwn(out, key, sample(child, key, rng, full));
      }
      if (typeof schema.additionalProperties === 'object') {
        for (let count = full === undefined ? rng.int(0, 2) : 1; count > 0; count--) {
          setOwn(out, rng.pick(['FUZZ_VAR', 'LANG_HINT', 'source', 'tags']), sample(schema.additionalProperties, 'extra', rng, full));
        }
      }
      return out;
    }
    case 'array': {
      const min = Math.max(schema.minItems ?? 0, full === undefined ? 0 : 1);
      const count = full === undefined ? rng.int(min, Math.min(schema.maxItems ?? min + 3, min + 3)) : min;
      return Array.from({ length: count }, () => sample(schema.items ?? {}, name, rng, full));
    }
    case 'string':
      return sampleString(schema, name, rng);
    case 'integer':
    case 'number':
      return sampleNumber(schema, name, type === 'integer', rng);
    case 'boolean':
      return rng.chance(0.5);
    default:
      return rng.pick<Value>(['free text', 42, true, { note: 'fuzz' }, ['a', 1]]);
  }
}

/** Where a body can be changed: every property (set or not) and array item, with its schema. */
interface Slot {
  path: Key[];
  schema: Schema;
  required: boolean;
}

function slotsOf(schema: Schema, value: Value, path: Key[] = [], slots: Slot[] = []): Slot[] {
  const branch = schema.anyOf ? (schema.anyOf.find((candidate) => conforms(candidate, value)) ?? schema.anyOf[0]) : schema;
  if (!branch) return slots;
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      const items = branch.items ?? {};
      slots.push({ path: [...path, index], schema: items, required: true });
      slotsOf(items, item, [...path, index], slots);
    });
  } else if (value !== null && typeof value === 'object' && !(value instanceof RawJson)) {
    for (const [key, child] of Object.entries(branch.properties ?? {})) {
      slots.push({ path: [...path, key], schema: child, required: branch.required?.includes(key) ?? false });
      const present = value[key];
      if (present !== undefined) slotsOf(child, present, [...path, key], slots);
    }
  }
  return slots;
}

// ---------------------------------------------------------------------------------------------
// Hostile material.

const specialStrings = [
  'a\u0000b', '\u0000', '\ud800', 'x\udc00y', '\udbff\udfff', '🙂'.repeat(60),
  'Z\u0324\u0354\u0367\u0311\u0313a\u0308\u0356\u032d', '\u202egnp.exe', '\ufeffbom', '\u200b\u200c\u200d',
  '𝕳𝖊𝖑𝖑𝖔 𝔀𝓸𝓻𝓵𝓭', '../../../../etc/passwd', '..\\..\\..\\windows\\system32', '/proc/self/environ',
  '~/.ssh/id_rsa', '%00', '%2e%2e%2f%2e%2e%2f', '${jndi:ldap://127.0.0.1/x}', '{{7*7}}',
  "'; DROP TABLE \"Conversation\"; --", '" OR ""="', '<script>alert(1)</script>', 'value\r\nX-Injected: 1',
  'line one\nline two', '%s%s%s%n', '\\', ' ', '', 'null', 'NaN', '-0', '1e309', '__proto__',
  String.fromCharCode(...Array.from({ length: 31 }, (_, code) => code + 1)),
];
const specialKeys = ['', ' ', '__proto__', 'constructor', 'prototype', 'a\u0000b', '\ud800', '🙂', '$where', 'a.b', 'x'.repeat(300)];
const pathIds = [
  '..', '.', '%2e%2e', '%2E', '..%2F..%2Fstatus', '..%2f..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f%2e%2e%2fconversations', '..%5c..%5cwindows', '%252e%252e%252f', '....%2F%2F....%2F%2F',
  '../status', 'a/b', '%00', 'abc%00def', '%ZZ', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%F0%9F%98%80',
  '%E2%80%AE', '%20', '%0A', 'current', 'undefined', 'null', '0', '-1', '*', '%25', "'%20OR%20'1'%3D'1",
  '00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
  '%7B00000000-0000-4000-8000-000000000000%7D',
];
const queryOddities = ['abc', '', ' ', '-1', '0', '1.5', '1e3', '0x1A', 'Infinity', 'NaN', 'null', 'true', '[]', '{}', '9'.repeat(30), '１２', '٣', '+5', '5 ', '1_000'];
const rawPercent = ['%', '%zz', '%E0%A4%A', '%C0%AF', '%FF', '%ED%A0%80', '%00', '%F0%9F%98%80', '%2B', '+'];
const contentTypes: (string | undefined)[] = [
  undefined, '', 'text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=fuzzboundary', 'application/xml', 'application/octet-stream',
  'application/javascript', 'image/png', 'json', 'application/json; charset=utf-8', 'APPLICATION/JSON',
  'application/vnd.api+json', 'application/json; charset=utf-16le', 'application/json, text/plain',
  'application/jsonx', 'text/json',
];
const brokenJson = [
  '{"a":1,}', "{'a':1}", '{a:1}', '{"a":NaN}', '{"a":Infinity}', '{"a":undefined}', '{"a":1}{"b":2}',
  '{"a":1} trailing', '{"a":"\u0000"}', '{"a":"\u0001\u001f"}', '/* comment */ {"a":1}', '{"a":01}',
  '{"a":.5}', '{"a":"\\x41"}', '{"a":"\\u12"}', '{"a":"\\ud800"}', '{"a":"unterminated}', '{"a" "b"}',
  '{,}', '{"a":[1,2,]}',
];

const alphabets: readonly (readonly string[])[] = [
  Array.from({ length: 36 }, (_, index) => index.toString(36)),
  ['α', 'β', 'γ', '漢', '字', '🙂', ' '],
  ['"', '\\', '/', '\b', '\f', '\n', '\r', '\t'],
  ['A'],
];

/** Headers the service reads or echoes, with odd values; Node's client sends Latin-1 at most. */
const oddHeaders: readonly [string, string][] = [
  ['last-event-id', 'junk'], ['last-event-id', '99999999999999999999'], ['last-event-id', 'abc:-1'],
  ['last-event-id', 'caf\xe9\xff'], ['x-request-id', 'x'.repeat(200)],
  ['x-request-id', '../../etc/passwd'], ['x-request-id', 'caf\xe9'], ['accept', 'application/xml'],
  ['accept', 'text/event-stream'], ['accept-encoding', 'gzip;q=x, br, junk'],
  ['accept-language', '\xff'.repeat(50)], ['authorization', 'Bearer junk.junk.junk'],
  ['authorization', 'Basic Zm9vOmJhcg=='], ['authorization', 'x'.repeat(8000)],
  ['x-forwarded-for', '1.2.3.4, junk, ::1'], ['x-forwarded-host', 'evil.example'],
  ['origin', 'http://evil.example'], ['origin', 'null'], ['cookie', `a=${'b'.repeat(4000)}`],
  ['expect', '100-continue'], ['host', 'localhost'], ['host', 'evil.example'],
  ['host', 'localhost:1@evil.example'],
];

/** At least `chars` characters, from a seeded 64-character unit (cheap to build, never a split pair). */
function hugeString(chars: number, rng: Rng): string {
  const alphabet = rng.pick(alphabets);
  const unit = Array.from({ length: 64 }, () => rng.pick(alphabet)).join('');
  return unit.repeat(Math.ceil(chars / unit.length));
}

function deepNesting(depth: number, rng: Rng): RawJson {
  const shape = rng.int(0, 2);
  if (shape === 0) return new RawJson('['.repeat(depth) + ']'.repeat(depth));
  if (shape === 1) return new RawJson('{"a":'.repeat(depth) + 'null' + '}'.repeat(depth));
  return new RawJson('[{"a":'.repeat(depth) + '1' + '}]'.repeat(depth));
}

function wrongTypeFor(schema: Schema, rng: Rng): Value | undefined {
  const candidates: Value[] = [null, true, false, 0, -1, 1.5, 'text', '', [], [1, 'a'], {}, { nested: { x: 1 } }, 1e21];
  const wrong = candidates.filter((candidate) => !conforms(schema, candidate));
  return wrong.length > 0 ? rng.pick(wrong) : undefined;
}

function outOfRangeFor(schema: Schema, rng: Rng): Value | undefined {
  const options: Value[] = [];
  if (schema.enum?.length) options.push('not-an-option', String(schema.enum[0]).toUpperCase(), ` ${String(schema.enum[0])}`);
  if (schema.maxLength !== undefined && schema.maxLength < 200_000) options.push('y'.repeat(schema.maxLength + rng.int(1, 40)));
  if (schema.minLength !== undefined && schema.minLength > 0) options.push('');
  if (schema.maximum !== undefined) options.push(schema.maximum + 1, schema.maximum * 10 + 7);
  if (schema.minimum !== undefined) options.push(schema.minimum - 1, -1e9);
  if (types(schema).includes('integer')) options.push(2.5, 2 ** 53 + 2);
  if (schema.minItems !== undefined && schema.minItems > 0) options.push([]);
  if (schema.maxItems !== undefined && schema.maxItems < 1000) options.push(Array.from({ length: schema.maxItems + 1 }, () => ({ type: 'custom' })));
  return options.length > 0 ? rng.pick(options) : undefined;
}

function formBody(value: Value): string {
  if (value === null || typeof value !== 'object' || value instanceof RawJson || Array.isArray(value)) return 'value=1';
  return new URLSearchParams(Object.entries(value).map(([key, child]): [string, string] => [key, typeof child === 'string' ? child : encode(child)])).toString();
}

function multipartBody(value: Value): string {
  const entries = value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof RawJson) ? Object.entries(value) : [];
  const parts = entries.map(([key, child]) => `--fuzzboundary\r\nContent-Disposition: form-data; name="${key}"\r\n\r\n${encode(child)}\r\n`);
  return `${parts.join('')}--fuzzboundary--\r\n`;
}

// ---------------------------------------------------------------------------------------------
// Requests.

interface Draft {
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

const jsonType = 'application/json';
const bodyKinds = [
  'valid', 'valid', 'valid', 'valid', 'wrong-type', 'wrong-type', 'missing-required', 'out-of-range', 'special-string', 'special-string',
  'special-key', 'huge-string', 'large-string', 'nested-junk', 'raw-json', 'top-level', 'truncated', 'truncated',
  'content-type', 'content-type', 'encoding', 'aborted', 'path-id', 'path-id', 'wrong-method', 'odd-header',
] as const;
const queryKinds = [
  'valid', 'valid', 'query-value', 'query-value', 'query-missing', 'query-repeated', 'query-brackets', 'query-special',
  'query-percent', 'query-huge', 'unknown-query', 'body-on-read', 'path-id', 'path-id', 'wrong-method', 'seeded-read', 'odd-header',
] as const;

/** An odd header on an otherwise plausible request; a foreign Host must be refused (CONTRACT §2). */
function withOddHeader(draft: Draft, rng: Rng): Draft {
  const [name, value] = rng.pick(oddHeaders);
  const foreignHost = name === 'host' && value !== 'localhost';
  return { ...draft, detail: `${name}: ${value.slice(0, 24)}`, headers: { ...draft.headers, [name]: value }, ...(foreignHost ? { verdict: 'reject' as const } : {}) };
}

function applicableKinds(operation: Operation, protectedIds: ProtectedIds): readonly string[] {
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

function pathFor(operation: Operation, ids: Record<string, string>): string {
  return operation.template.replace(/\{([^}]+)\}/g, (_, name: string) => ids[name] ?? 'x');
}

function randomIds(operation: Operation, rng: Rng): Record<string, string> {
  return Object.fromEntries(
    operation.pathParams.map((parameter) => [parameter.name, encodeURIComponent(sampleString(parameter.schema, parameter.name, rng))]),
  );
}

function bodyDraft(operation: Operation, kind: string, rng: Rng, aim?: (base: Value) => void): Draft {
  const schema = operation.body ?? { type: 'object', properties: {} };
  const base = sample(schema, 'body', rng);
  aim?.(base);
  const slots = slotsOf(schema, base);
  const asJson = (value: Value, detail: string, extra: Partial<Draft> = {}): Draft => ({
    kind,
    detail,
    contentType: jsonType,
    body: Buffer.from(encode(value)),
    ...extra,
  });
  const stringSlots = slots.filter((slot) => types(slot.schema).includes('string') || types(slot.schema).length === 0);
  const objectPaths: Key[][] = [[], ...slots.filter((slot) => types(slot.schema).includes('object')).map((slot) => slot.path)].filter(
    (path) => {
      const node = childAt(base, path);
      return node !== null && typeof node === 'object' && !Array.isArray(node) && !(node instanceof RawJson);
    },
  );
  const anyPath = (candidates: Slot[]): Key[] => (candidates.length > 0 ? rng.pick(candidates).path : ['unexpected']);

  switch (kind) {
    case 'wrong-type': {
      const typed = slots.filter((slot) => wrongTypeFor(slot.schema, rng) !== undefined);
      if (typed.length === 0) break;
      const slot = rng.pick(typed);
      const value = wrongTypeFor(slot.schema, rng) ?? null;
      setAt(base, slot.path, value);
      return asJson(base, `${slot.path.join('.')}=${encode(value).slice(0, 30)}`);
    }
    case 'missing-required': {
      const required = slots.filter((slot) => slot.required && typeof slot.path.at(-1) === 'string');
      if (required.length === 0) break;
      const slot = rng.pick(required);
      deleteAt(base, slot.path);
      return asJson(base, `without ${slot.path.join('.')}`);
    }
    case 'out-of-range': {
      const ranged = slots.filter((slot) => outOfRangeFor(slot.schema, rng) !== undefined);
      if (ranged.length === 0) break;
      const slot = rng.pick(ranged);
      const value = outOfRangeFor(slot.schema, rng) ?? null;
      setAt(base, slot.path, value);
      return asJson(base, `${slot.path.join('.')}=${encode(value).slice(0, 30)}`);
    }
    case 'special-string': {
      const path = anyPath(stringSlots);
      const value = rng.pick(specialStrings);
      setAt(base, path, value);
      return asJson(base, `${path.join('.')}=${JSON.stringify(value).slice(0, 30)}`);
    }
    case 'special-key': {
      const path = rng.pick(objectPaths);
      const key = rng.pick(specialKeys);
      const parent = childAt(base, path);
      const value: Value = key === '__proto__' || key === 'constructor' ? { fuzzPolluted: 'yes', prototype: { fuzzPolluted: 'yes' } } : 'v';
      if (parent !== null && typeof parent === 'object' && !(parent instanceof RawJson)) setOwn(parent, key, value);
      return asJson(base, `key ${JSON.stringify(key).slice(0, 20)} at ${path.join('.') || 'top'}`);
    }
    case 'huge-string': {
      const path = anyPath(stringSlots);
      const size = rng.int(BODY_LIMIT + 50_000, 5 * BODY_LIMIT);
      setAt(base, path, hugeString(size, rng));
      // Chunked now and then: the limit must hold without a Content-Length to check up front.
      return asJson(base, `${path.join('.')} ${size} chars`, rng.chance(0.3) ? { headers: { 'transfer-encoding': 'chunked' } } : {});
    }
    case 'large-string': {
      const path = anyPath(stringSlots);
      const size = rng.int(100_000, BODY_LIMIT - 20_000);
      setAt(base, path, hugeString(size, rng));
      return asJson(base, `${path.join('.')} ${size} chars`);
    }
    case 'nested-junk': {
      const path = anyPath(slots);
      const choice = rng.int(0, 3);
      const value: Value =
        choice === 0
          ? deepNesting(rng.pick([65, 100, 1000, 20_000]), rng)
          : choice === 1
            ? Object.fromEntries(Array.from({ length: rng.int(1000, 20_000) }, (_, i) => [`k${i}`, i]))
            : choice === 2
              ? Array.from({ length: rng.int(1000, 50_000) }, (_, i) => (i % 3 === 0 ? null : i % 3 === 1 ? [i] : { i }))
              : [[{}], { '': [null, [[]]] }, deepNesting(30, rng)];
      setAt(base, path, value);
      return asJson(base, `${path.join('.')} ${['deep', 'wide object', 'long array', 'mixed'][choice] ?? ''}`);
    }
    case 'raw-json': {
      const choice = rng.int(0, 3);
      const text = encode(base);
      if (choice === 0) {
        const slot = slots.find((candidate) => typeof candidate.path[0] === 'string' && candidate.path.length === 1);
        const key = JSON.stringify(slot?.path[0] ?? 'dup');
        const duplicate = `${key}:${encode(wrongTypeFor(slot?.schema ?? {}, rng) ?? null)}`;
        // JSON.parse keeps the last duplicate: before the real key it is overridden, after it wins.
        const spliced = rng.chance(0.5) ? `{${duplicate},${text.slice(1)}` : `${text.slice(0, -1)},${duplicate}}`;
        return { kind, detail: `duplicate ${key}`, contentType: jsonType, body: Buffer.from(spliced.replace('{,', '{').replace(',}', '}')) };
      }
      if (choice === 1) {
        const numeric = slots.filter((slot) => types(slot.schema).some((type) => type === 'number' || type === 'integer'));
        const literal = rng.pick(['1e999', '-1e999', '1E400', '1e-400', '123456789012345678901234567890', '-0', '0e0']);
        setAt(base, anyPath(numeric), new RawJson(literal));
        return asJson(base, `number ${literal}`);
      }
      if (choice === 2) {
        // A BOM before JSON: RFC 8259 lets a parser ignore it or refuse it.
        return { kind, detail: 'BOM', contentType: jsonType, body: Buffer.from(`\ufeff${text}`), verdict: 'any' };
      }
      const broken = rng.pick(brokenJson);
      return { kind, detail: JSON.stringify(broken).slice(0, 30), contentType: jsonType, body: Buffer.from(broken) };
    }
    case 'top-level': {
      const text = rng.pick(['[]', `[${encode(base)}]`, '"text"', '123', 'null', 'true', '""', '-0', '[{}]']);
      return { kind, detail: text.slice(0, 30), contentType: jsonType, body: Buffer.from(text) };
    }
    case 'truncated': {
      const text = encode(base);
      const cut = text.length > 1 ? rng.int(1, text.length - 1) : 0;
      return { kind, detail: `${cut}/${text.length} bytes`, contentType: jsonType, body: Buffer.from(text.slice(0, cut)) };
    }
    case 'content-type': {
      const contentType = rng.pick(contentTypes);
      const text =
        contentType?.startsWith('application/x-www-form-urlencoded') === true
          ? formBody(base)
          : contentType?.startsWith('multipart/') === true
            ? multipartBody(base)
            : contentType === 'application/xml'
              ? '<body><message>hi</message></body>'
              : encode(base);
      const bytes = contentType?.includes('utf-16') === true ? Buffer.from(text, 'utf16le') : Buffer.from(text);
      // Whether a charset other than UTF-8 is honoured, or refused, is the service's choice.
      return { kind, detail: `content-type ${JSON.stringify(contentType ?? null)}`, contentType, body: bytes, ...(contentType?.includes('utf-16') ? { verdict: 'any' as const } : {}) };
    }
    case 'encoding': {
      const choice = rng.int(0, 2);
      if (choice === 0) {
        const path = anyPath(stringSlots);
        setAt(base, path, 'fuzz\u0001sentinel');
        const bytes = Buffer.from(encode(base).replace('\\u0001sentinel', '\u0001SENTINEL'));
        const at = bytes.indexOf('\u0001SENTINEL');
        const bad = Buffer.from(rng.pick([[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82]]));
        const body = at >= 0 ? Buffer.concat([bytes.subarray(0, at), bad, bytes.subarray(at + 9)]) : bytes;
        // Invalid UTF-8 may be refused or read with replacement characters; either is fair.
        return { kind, detail: `invalid UTF-8 in ${path.join('.')}`, contentType: jsonType, body, verdict: 'any' };
      }
      const encoding = rng.pick(['gzip', 'deflate', 'br', 'x-fuzz', 'identity']);
      const text = Buffer.from(encode(base));
      const body = choice === 1 && encoding === 'gzip' ? gzipSync(text) : text;
      return { kind, detail: `content-encoding ${encoding}${body === text ? ' (plain body)' : ''}`, contentType: jsonType, headers: { 'content-encoding': encoding }, body, verdict: 'any' };
    }
    case 'aborted': {
      const body = Buffer.from(encode(base));
      return { kind, detail: `drop after ${Math.floor(body.length / 2)} of ${body.length} bytes`, contentType: jsonType, body, abortAfter: Math.floor(body.length / 2), verdict: 'none' };
    }
    case 'path-id':
      if (operation.pathParams.length === 0) break;
      return asJson(base, '', { pathIds: weirdIds(operation, rng) });
    case 'odd-header':
      return withOddHeader(asJson(base, ''), rng);
    case 'wrong-method': {
      const method = rng.pick(['PUT', 'PATCH', 'TRACE']);
      return { ...asJson(base, method, { method }), verdict: 'reject' };
    }
    default:
      break;
  }
  return asJson(base, kind === 'valid' ? '' : `(no slot for ${kind})`, { kind: 'valid' });
}

function weirdIds(operation: Operation, rng: Rng): Record<string, string> {
  return Object.fromEntries(
    operation.pathParams.map((parameter) => {
      const choice = rng.int(0, 3);
      const id = choice === 0 ? 'a'.repeat(rng.int(300, 6000)) : choice === 1 ? encodeURIComponent(rng.pick(texts)) : rng.pick(pathIds);
      return [parameter.name, id];
    }),
  );
}

function sampleQuery(operation: Operation, rng: Rng): [string, string][] {
  const pairs: [string, string][] = [];
  for (const parameter of operation.queryParams) {
    if (!parameter.required && !rng.chance(0.5)) continue;
    const schema = parameter.schema.anyOf?.find((branch) => branch.enum) ?? parameter.schema;
    const sampled = schema.enum?.length ? (rng.pick(schema.enum) as Value) : sample(schema, parameter.name, rng);
    pairs.push([parameter.name, typeof sampled === 'string' || typeof sampled === 'number' || typeof sampled === 'boolean' ? String(sampled) : encode(sampled)]);
  }
  return pairs;
}

const encodePairs = (pairs: [string, string][]) => pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&');

function queryDraft(operation: Operation, kind: string, rng: Rng, protectedIds: ProtectedIds): Draft {
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
      return draft(encodePairs(pairs), '', { method: rng.pick(['PUT', 'PATCH']), verdict: 'reject' });
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
function seededDraft(operation: Operation, rng: Rng, protectedIds: ProtectedIds): { draft: Draft; ids: Record<string, string> } | undefined {
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

function judgeDraft(operation: Operation, draft: Draft): Verdict {
  if (draft.verdict) return draft.verdict;
  const ids = draft.pathIds ?? {};
  if (operation.method === 'GET' || operation.method === 'DELETE') return judgeQuery(operation, ids, draft.query ?? '');
  return judgeBody(operation, ids, draft.contentType, draft.body);
}

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
function* systematicDrafts(operation: Operation, rng: Rng): Generator<Draft> {
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
