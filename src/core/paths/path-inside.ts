import { sep } from 'node:path';

/** Whether absolute, normalised `path` is `root` or lies below it (no I/O: resolve links first). */
export function isPathInside(path: string, root: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return path.startsWith(prefix);
}
