import { gzipSync } from 'node:zlib';
import { slotsOf, type Slot } from './body-slots.js';
import { BODY_LIMIT } from './contract-model.js';
import {
  brokenJson,
  contentTypes,
  deepNesting,
  formBody,
  hugeString,
  multipartBody,
  outOfRangeFor,
  specialKeys,
  specialStrings,
  wrongTypeFor,
} from './hostile-ingredients.js';
import { childAt, deleteAt, encode, RawJson, setAt, setOwn, type Key, type Value } from './json-value.js';
import { types, type Operation } from './openapi-operations.js';
import { jsonType, weirdIds, withOddHeader, type Draft } from './request-draft.js';
import type { Rng } from './seeded-random.js';
import { sample } from './value-sampling.js';

export function bodyDraft(operation: Operation, kind: string, rng: Rng, aim?: (base: Value) => void): Draft {
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
      // Not one the path has (PUT /api/policies is a real operation beside GET).
      const method = rng.pick(['PUT', 'PATCH', 'TRACE'].filter((candidate) => !operation.pathMethods.has(candidate)));
      return { ...asJson(base, method, { method }), verdict: 'reject' };
    }
    default:
      break;
  }
  return asJson(base, kind === 'valid' ? '' : `(no slot for ${kind})`, { kind: 'valid' });
}
