/** A caller's procedure by its dotted path (`terminals.execute`), as the route table and other instances name it. */
export function procedureAtPath(caller: object, dottedPath: string): (input: unknown) => Promise<unknown> {
  let target: unknown = caller;
  for (const segment of dottedPath.split('.')) {
    target = typeof target === 'object' || typeof target === 'function' ? (target as Record<string, unknown> | null)?.[segment] : undefined;
  }
  if (typeof target !== 'function') throw new TypeError(`no procedure at ${dottedPath}`);
  return target as (input: unknown) => Promise<unknown>;
}
