import { idKinds } from './item-ids.js';
import { setOwn, type Value } from './json-value.js';
import { types, type Schema } from './openapi-operations.js';
import type { Rng } from './seeded-random.js';

// Plausible values, chosen by field name so a good share of requests gets past validation.

export const texts = ['Hello there', 'Summarise this in one line.', 'What is 2 + 2?', 'Ünïcödé ✓ 漢字 🙂', 'Plan for today', 'Fuzzed'];
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

export function sampleString(schema: Schema, name: string, rng: Rng): string {
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
export function sample(schema: Schema, name: string, rng: Rng, full?: number): Value {
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
