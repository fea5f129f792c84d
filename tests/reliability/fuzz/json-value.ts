// JSON values, with raw fragments for what JSON.stringify cannot write (1e999, 100,000 brackets).

export class RawJson {
  constructor(readonly text: string) {}
}

export type Value = null | boolean | number | string | RawJson | Value[] | { [key: string]: Value };
export type Key = string | number;

export function encode(value: Value): string {
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
export function setOwn(target: Record<string, Value> | Value[], key: Key, value: Value): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export function childAt(root: Value, path: readonly Key[]): Value | undefined {
  let node: Value | undefined = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || node instanceof RawJson) return undefined;
    node = (node as Record<Key, Value>)[key];
  }
  return node;
}

export function setAt(root: Value, path: readonly Key[], value: Value): void {
  const parent = childAt(root, path.slice(0, -1));
  const key = path.at(-1);
  if (key !== undefined && parent !== null && typeof parent === 'object' && !(parent instanceof RawJson)) setOwn(parent, key, value);
}

export function deleteAt(root: Value, path: readonly Key[]): void {
  const parent = childAt(root, path.slice(0, -1));
  const key = path.at(-1);
  if (key !== undefined && parent !== null && typeof parent === 'object' && !(parent instanceof RawJson) && !Array.isArray(parent)) {
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- the field under test is removed by name
    delete parent[key];
  }
}
