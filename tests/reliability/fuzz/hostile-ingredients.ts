import { conforms } from './contract-model.js';
import { encode, RawJson, type Value } from './json-value.js';
import { types, type Schema } from './openapi-operations.js';
import type { Rng } from './seeded-random.js';

// Hostile material: special strings and keys, path ids, query values, content types, broken
// JSON and odd headers, and the huge, deep or wrongly typed values built from a schema.

export const specialStrings = [
  'a\u0000b', '\u0000', '\ud800', 'x\udc00y', '\udbff\udfff', '🙂'.repeat(60),
  'Z\u0324\u0354\u0367\u0311\u0313a\u0308\u0356\u032d', '\u202egnp.exe', '\ufeffbom', '\u200b\u200c\u200d',
  '𝕳𝖊𝖑𝖑𝖔 𝔀𝓸𝓻𝓵𝓭', '../../../../etc/passwd', '..\\..\\..\\windows\\system32', '/proc/self/environ',
  '~/.ssh/id_rsa', '%00', '%2e%2e%2f%2e%2e%2f', '${jndi:ldap://127.0.0.1/x}', '{{7*7}}',
  "'; DROP TABLE \"Conversation\"; --", '" OR ""="', '<script>alert(1)</script>', 'value\r\nX-Injected: 1',
  'line one\nline two', '%s%s%s%n', '\\', ' ', '', 'null', 'NaN', '-0', '1e309', '__proto__',
  String.fromCharCode(...Array.from({ length: 31 }, (_, code) => code + 1)),
];
export const specialKeys = ['', ' ', '__proto__', 'constructor', 'prototype', 'a\u0000b', '\ud800', '🙂', '$where', 'a.b', 'x'.repeat(300)];
export const pathIds = [
  '..', '.', '%2e%2e', '%2E', '..%2F..%2Fstatus', '..%2f..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f%2e%2e%2fconversations', '..%5c..%5cwindows', '%252e%252e%252f', '....%2F%2F....%2F%2F',
  '../status', 'a/b', '%00', 'abc%00def', '%ZZ', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%F0%9F%98%80',
  '%E2%80%AE', '%20', '%0A', 'current', 'undefined', 'null', '0', '-1', '*', '%25', "'%20OR%20'1'%3D'1",
  '00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
  '%7B00000000-0000-4000-8000-000000000000%7D',
];
export const queryOddities = ['abc', '', ' ', '-1', '0', '1.5', '1e3', '0x1A', 'Infinity', 'NaN', 'null', 'true', '[]', '{}', '9'.repeat(30), '１２', '٣', '+5', '5 ', '1_000'];
export const rawPercent = ['%', '%zz', '%E0%A4%A', '%C0%AF', '%FF', '%ED%A0%80', '%00', '%F0%9F%98%80', '%2B', '+'];
export const contentTypes: (string | undefined)[] = [
  undefined, '', 'text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=fuzzboundary', 'application/xml', 'application/octet-stream',
  'application/javascript', 'image/png', 'json', 'application/json; charset=utf-8', 'APPLICATION/JSON',
  'application/vnd.api+json', 'application/json; charset=utf-16le', 'application/json, text/plain',
  'application/jsonx', 'text/json',
];
export const brokenJson = [
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
export const oddHeaders: readonly [string, string][] = [
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
export function hugeString(chars: number, rng: Rng): string {
  const alphabet = rng.pick(alphabets);
  const unit = Array.from({ length: 64 }, () => rng.pick(alphabet)).join('');
  return unit.repeat(Math.ceil(chars / unit.length));
}

export function deepNesting(depth: number, rng: Rng): RawJson {
  const shape = rng.int(0, 2);
  if (shape === 0) return new RawJson('['.repeat(depth) + ']'.repeat(depth));
  if (shape === 1) return new RawJson('{"a":'.repeat(depth) + 'null' + '}'.repeat(depth));
  return new RawJson('[{"a":'.repeat(depth) + '1' + '}]'.repeat(depth));
}

export function wrongTypeFor(schema: Schema, rng: Rng): Value | undefined {
  const candidates: Value[] = [null, true, false, 0, -1, 1.5, 'text', '', [], [1, 'a'], {}, { nested: { x: 1 } }, 1e21];
  const wrong = candidates.filter((candidate) => !conforms(schema, candidate));
  return wrong.length > 0 ? rng.pick(wrong) : undefined;
}

export function outOfRangeFor(schema: Schema, rng: Rng): Value | undefined {
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

export function formBody(value: Value): string {
  if (value === null || typeof value !== 'object' || value instanceof RawJson || Array.isArray(value)) return 'value=1';
  return new URLSearchParams(Object.entries(value).map(([key, child]): [string, string] => [key, typeof child === 'string' ? child : encode(child)])).toString();
}

export function multipartBody(value: Value): string {
  const entries = value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof RawJson) ? Object.entries(value) : [];
  const parts = entries.map(([key, child]) => `--fuzzboundary\r\nContent-Disposition: form-data; name="${key}"\r\n\r\n${encode(child)}\r\n`);
  return `${parts.join('')}--fuzzboundary--\r\n`;
}
