import { conforms } from './contract-model.js';
import { RawJson, type Key, type Value } from './json-value.js';
import type { Schema } from './openapi-operations.js';

/** Where a body can be changed: every property (set or not) and array item, with its schema. */
export interface Slot {
  path: Key[];
  schema: Schema;
  required: boolean;
}

export function slotsOf(schema: Schema, value: Value, path: Key[] = [], slots: Slot[] = []): Slot[] {
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
