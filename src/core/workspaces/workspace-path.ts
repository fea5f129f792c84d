import { constants } from 'node:fs';
import { access, readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, resolve, sep } from 'node:path';
import { AppError } from '../errors/app-error.js';
import type { Config } from '../config/load-config.js';
import { isPathInside } from '../paths/path-inside.js';
import { registrationProblem, servicePaths } from './workspace-rules.js';

/**
 * Top-level directories that never become a workspace (CONTRACT §1), besides every `/lib*` (read as
 * the glob it is written as: lib, lib32, lib64, libx32, and any other top-level name starting "lib").
 */
const systemDirectories = ['etc', 'usr', 'bin', 'sbin', 'boot', 'proc', 'sys', 'dev'];

const refuse = (message: string) => new AppError('WORKSPACE_ERROR', message);

function isSystemName(name: string): boolean {
  return systemDirectories.includes(name) || name.startsWith('lib');
}

/**
 * The system directories as they are spelled and as they resolve: on merged-/usr systems `/bin`
 * is a link to `/usr/bin`, and a system directory could itself be a link elsewhere, so a path is
 * refused when it lies under either spelling.
 */
async function systemRoots(): Promise<string[]> {
  const names = (await readdir('/').catch(() => [] as string[])).filter(isSystemName);
  const spelled = [...new Set([...systemDirectories, ...names])].map((name) => `/${name}`);
  const resolved = await Promise.all(spelled.map((path) => realpath(path).catch(() => path)));
  return [...new Set([...spelled, ...resolved])].filter((path) => path !== '/');
}

/** A system path: `/` itself, or a path whose real location is a system directory or below one. */
export async function isSystemPath(realPath: string): Promise<boolean> {
  if (realPath === sep) return true;
  const top = realPath.split(sep)[1] ?? '';
  if (isSystemName(top)) return true;
  return (await systemRoots()).some((root) => isPathInside(realPath, root));
}

/** Whether a real path lies at or below one of the allowed roots (compared by their real paths). */
export async function isUnderAllowedRoot(realPath: string, allowedRoots: readonly string[]): Promise<boolean> {
  for (const root of allowedRoots) {
    const realRoot = await realpath(resolve(root)).catch(() => null);
    if (realRoot !== null && isPathInside(realPath, realRoot)) return true;
  }
  return false;
}

/**
 * Checks a path offered as a workspace and returns its real path, which is what gets stored: the
 * same directory reached through a link or a `..` is then recognised as a duplicate, and the
 * system-directory and allowed-roots checks judge where the path really leads.
 */
export async function resolveWorkspacePath(path: string, config: Pick<Config, 'DATABASE_URL' | 'WORKSPACE_ALLOWED_ROOTS'>): Promise<string> {
  const allowedRoots = config.WORKSPACE_ALLOWED_ROOTS;
  if (!isAbsolute(path)) throw refuse(`Workspace path must be absolute: ${path}`);
  let realPath: string;
  try {
    realPath = await realpath(path);
  } catch {
    throw refuse(`Workspace path does not exist: ${path}`);
  }
  const info = await stat(realPath).catch(() => null);
  if (!info?.isDirectory()) throw refuse(`Workspace path is not a directory: ${path}`);
  try {
    // Listing needs read and search permission on the directory.
    await access(realPath, constants.R_OK | constants.X_OK);
  } catch {
    throw refuse(`Workspace path is not readable: ${path}`);
  }
  if (await isSystemPath(realPath)) throw refuse(`A system directory cannot be a workspace: ${realPath}`);
  const problem = registrationProblem(realPath, servicePaths(config));
  if (problem !== null) throw refuse(`Not allowed as a workspace: ${problem}`);
  if (allowedRoots.length > 0 && !(await isUnderAllowedRoot(realPath, allowedRoots))) {
    throw refuse(`Workspace path is outside WORKSPACE_ALLOWED_ROOTS: ${realPath}`);
  }
  return realPath;
}
