import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/load-config.js';
import { isPathInside } from '../paths/path-inside.js';
import { serviceFiles } from '../sandbox/service-files.js';

// Which folders may be workspaces (CONTRACT §11, "Workspace registration"). A workspace is
// writable by every terminal and by the model's write_file, so a folder that is, holds or lies
// inside the service's own code, data or keys, the system, or the service user's secrets would
// hand those to commands: the service's code planted in `dist/` runs as the service at its next
// start; its database holds every user's conversations; `~/.ssh` holds keys.

/** Folders that are never a workspace, nor inside one, nor around one. */
const FORBIDDEN_FOLDERS = ['/root', '/etc', '/usr', '/bin', '/sbin', '/boot', '/proc', '/sys', '/dev', '/run', '/var/lib'];

/** The folder this code was installed in: src/core/workspaces → the package root (dist likewise). */
const installationFolder = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');

export interface ServicePaths {
  /** The service's own folders and files: never inside a workspace, never around one. */
  guarded: string[];
  /** The service user's home: a workspace may lie in it, not be it, hold it, or sit in a hidden folder of it. */
  home: string;
}

function bothSpellings(path: string): string[] {
  try {
    const real = realpathSync(path);
    return real === path ? [path] : [path, real];
  } catch {
    return [path];
  }
}

const computed = new Map<string, ServicePaths>();

/**
 * The paths the rules protect, as spelled and as they resolve (/bin may be a link to /usr/bin);
 * worked out once per database location, since every workspace use checks them.
 */
export function servicePaths(config: Pick<Config, 'DATABASE_URL'>): ServicePaths {
  let paths = computed.get(config.DATABASE_URL);
  if (paths === undefined) {
    const { directory, file } = serviceFiles(config);
    const own = [installationFolder, process.cwd(), file, ...(directory === undefined ? [] : [directory])];
    const guarded = [...new Set([...own, ...FORBIDDEN_FOLDERS].flatMap(bothSpellings))];
    paths = { guarded, home: homedir() };
    computed.set(config.DATABASE_URL, paths);
  }
  return paths;
}

/** `/lib`, `/lib64`, `/libx32`, … (read as the glob the contract writes). */
function isLibraryFolder(path: string): boolean {
  return /^\/lib[^/]*(\/|$)/.test(path);
}

/**
 * Why a real path may not be a workspace, or null when it may. "Holds" is checked too: `/var`
 * holds `/var/lib`, `/` holds everything.
 */
export function registrationProblem(realPath: string, paths: ServicePaths): string | null {
  if (realPath === sep) return 'the root folder cannot be a workspace';
  if (isLibraryFolder(realPath)) return `a system folder cannot be a workspace: ${realPath}`;
  if (realPath.split(sep).includes('.git')) return `a repository's .git folder cannot be a workspace: ${realPath}`;
  for (const guarded of paths.guarded) {
    if (isPathInside(realPath, guarded)) return `${realPath} lies inside ${guarded}, which commands must not reach`;
    if (isPathInside(guarded, realPath)) return `${realPath} holds ${guarded}, which commands must not reach`;
  }
  const home = paths.home;
  if (home !== '' && home !== sep) {
    if (isPathInside(home, realPath)) return `${realPath} is or holds the service user's home (${home})`;
    if (isPathInside(realPath, home)) {
      const first = realPath.slice(home.length + 1).split(sep)[0] ?? '';
      if (first.startsWith('.')) return `${realPath} lies in a hidden folder of the service user's home (${join(home, first)})`;
    }
  }
  return null;
}
