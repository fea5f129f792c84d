import { realpathSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/load-config.js';
import { isPathInside } from '../paths/path-inside.js';
import { serviceFiles } from '../sandbox/service-files.js';

// Which folders may be workspaces (CONTRACT §11, "Workspace registration"). A workspace is
// writable by every terminal and by the model's write_file, so a folder that is, holds or lies
// inside the service's own code, data or keys, the system, or the service user's secrets would
// hand those to commands: the service's code planted in `dist/` runs as the service at its next
// start; its database holds every user's conversations; `~/.ssh` holds keys; a crontab in
// /var/spool runs as root. The same rules decide which folders a terminal may make writable when
// WORKSPACE_RESTRICTION_ENABLED=false.

/**
 * Folders that are never a workspace, nor inside one, nor around one: the system and its state
 * (the contract's list, and the rest of /var that programs of the host read and run).
 */
const FORBIDDEN_FOLDERS = [
  '/root', '/etc', '/usr', '/bin', '/sbin', '/boot', '/proc', '/sys', '/dev', '/run',
  '/var/lib', '/var/log', '/var/spool', '/var/cache', '/var/mail', '/var/backups',
];

/**
 * Folders shared by many: never a workspace themselves nor inside one, but a project folder may
 * lie in them. The temporary folder holds every terminal's command pipe and proxy socket.
 */
const SHARED_PARENTS = ['/home', '/srv', '/opt', '/mnt', '/media', '/var/tmp', '/tmp'];

/** The folder this code was installed in: src/core/workspaces → the package root (dist likewise). */
const installationFolder = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');

interface Identity {
  path: string;
  dev: number;
  ino: number;
}

export interface ServicePaths {
  /** The service's own folders and files and the system's: never inside a workspace, never around one. */
  guarded: string[];
  /** Their identities, so a bind mount of one elsewhere is recognised too. */
  guardedIdentities: Identity[];
  /** Folders that may hold a workspace but neither be one nor lie in one. */
  shared: string[];
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

function identityOf(path: string): Identity | null {
  try {
    const info = statSync(path);
    return { path, dev: info.dev, ino: info.ino };
  } catch {
    return null;
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
    const guardedIdentities = guarded.flatMap((path) => identityOf(path) ?? []);
    const shared = [...new Set([...SHARED_PARENTS, tmpdir()].flatMap(bothSpellings))];
    paths = { guarded, guardedIdentities, shared, home: homedir() };
    computed.set(config.DATABASE_URL, paths);
  }
  return paths;
}

/** `/lib`, `/lib64`, `/libx32`, … (read as the glob the contract writes). */
function isLibraryFolder(path: string): boolean {
  return /^\/lib[^/]*(\/|$)/.test(path);
}

/**
 * A guarded folder reached by another path (a bind mount of the data folder, say): the path or
 * one of its parents is the same folder on disk.
 */
function mountedGuardedFolder(realPath: string, paths: ServicePaths): string | null {
  for (let folder = realPath; ; folder = dirname(folder)) {
    const identity = identityOf(folder);
    const match = identity && paths.guardedIdentities.find((guarded) => guarded.dev === identity.dev && guarded.ino === identity.ino);
    if (match) return match.path;
    if (folder === sep) return null;
  }
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
  for (const shared of paths.shared) {
    if (isPathInside(shared, realPath)) return `${realPath} is or holds ${shared}, which is shared: register a folder inside it`;
  }
  const home = paths.home;
  if (home !== '' && home !== sep) {
    if (isPathInside(home, realPath)) return `${realPath} is or holds the service user's home (${home})`;
    if (isPathInside(realPath, home)) {
      const first = realPath.slice(home.length + 1).split(sep)[0] ?? '';
      if (first.startsWith('.')) return `${realPath} lies in a hidden folder of the service user's home (${join(home, first)})`;
    }
  }
  const mounted = mountedGuardedFolder(realPath, paths);
  if (mounted !== null) return `${realPath} is ${mounted} reached by another path, which commands must not reach`;
  return null;
}
