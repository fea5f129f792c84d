import { readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { AppError } from '../errors/app-error.js';
import { isPathInside } from '../paths/path-inside.js';

export interface ConfinedPath {
  /** The workspace root's real path. */
  root: string;
  /** Where the path really leads: the real path of its longest existing prefix plus the rest. */
  target: string;
  /** `target` relative to the root ("." for the root itself), for replies. */
  relative: string;
}

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

const outside = (path: string) => new AppError('SECURITY_VIOLATION', `Path is outside the workspace: ${path}`);

async function realRoot(root: string): Promise<string> {
  try {
    return await realpath(root);
  } catch {
    throw new AppError('WORKSPACE_ERROR', `Workspace directory is missing: ${root}`);
  }
}

/**
 * The real path of the longest existing prefix of an absolute, normalised path, plus the
 * components below it that do not exist yet. A component that exists but cannot be resolved is a
 * dangling symbolic link: where it points decides between "outside" and "not found".
 */
async function resolveExistingPrefix(path: string, root: string): Promise<string> {
  const missing: string[] = [];
  for (let current = path; ; current = dirname(current)) {
    try {
      return join(await realpath(current), ...missing);
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ELOOP') throw new AppError('WORKSPACE_ERROR', `Too many symbolic links: ${path}`);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      // readlink fails (EINVAL, ENOENT) unless `current` is a link; it may have changed since
      // realpath looked, and then it is simply treated as what it is now.
      const link = await readlink(current).catch(() => null);
      if (link !== null) {
        if (!isPathInside(resolve(dirname(current), link), root)) throw outside(path);
        throw new AppError('WORKSPACE_ERROR', `Path runs through a broken symbolic link: ${path}`);
      }
      // The file-system root always resolves, so this loop ends there at the latest.
      missing.unshift(basename(current));
    }
  }
}

/**
 * Resolves a path given relative to a workspace root (or absolute, inside it) to where it really
 * leads, and refuses anything outside the root with SECURITY_VIOLATION: `..` past the root, an
 * absolute path elsewhere, a symbolic link anywhere in the path that points out.
 *
 * `..` is applied to the spelling first, so the rest of the path never climbs; every existing
 * component is then resolved by realpath, so no link can lead out unseen. Callers operate on
 * `target`, the path that was checked, never on the caller's spelling.
 */
export async function resolveInsideWorkspace(workspaceRoot: string, path: string): Promise<ConfinedPath> {
  if (path.includes('\0')) throw AppError.invalid('Path must not contain NUL characters');
  const root = await realRoot(workspaceRoot);
  const spelled = isAbsolute(path) ? resolve(path) : resolve(root, path);
  const target = await resolveExistingPrefix(spelled, root);
  if (!isPathInside(target, root)) throw outside(path);
  return { root, target, relative: relative(root, target) || '.' };
}
