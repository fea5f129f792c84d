import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/load-config.js';
import { isPathInside } from '../paths/path-inside.js';
import { isRuntimeFolderName, runtimeFoldersIn } from '../sandbox/runtime-folder.js';
import { serviceFiles } from '../sandbox/service-files.js';

// Which folders may be workspaces (CONTRACT §11, "Workspace registration"). A workspace is
// writable by every terminal and by the model's write_file, so a folder that is, holds or lies
// inside the service's own code, data or keys, the system, or the service user's secrets would
// hand those to commands: the service's code planted in `dist/` runs as the service at its next
// start; its database holds every user's conversations; `~/.ssh` holds keys; a crontab in
// /var/spool runs as root; another user's `.bashrc` runs as that user; a terminal's command pipe
// (runtime-folder.ts) feeds its shell commands that nobody judged. The same rules decide which
// folders a terminal may make writable when WORKSPACE_RESTRICTION_ENABLED=false.

/**
 * Folders that are never a workspace, nor inside one, nor around one: the system and its state
 * (the contract's list, and all of /var, whose folders programs of the host read, serve and run:
 * /var/www, /var/opt, /var/local as much as /var/lib and /var/spool).
 */
const FORBIDDEN_FOLDERS = ['/root', '/etc', '/usr', '/bin', '/sbin', '/boot', '/proc', '/sys', '/dev', '/run', '/var'];

/** Inside a forbidden folder, yet shared like /tmp: a project folder may lie in /var/tmp. */
const OPEN_INSIDE_FORBIDDEN = ['/var/tmp'];

/**
 * Folders shared by many: never a workspace themselves nor inside one, but a project folder may
 * lie in them.
 */
const SHARED_PARENTS = ['/home', '/srv', '/opt', '/mnt', '/media', '/var/tmp', '/tmp'];

/**
 * Where this instance and others keep their runtime roots (runtime-folder.ts): the temporary
 * folder, whatever TMPDIR names, and the usual ones another instance may have been given.
 */
const TEMPORARY_FOLDERS = ['/tmp', '/var/tmp'];

/** Homes in /etc/passwd that name no home: the system's accounts. */
const NO_HOME = ['/', '/nonexistent'];

const PASSWD = '/etc/passwd';

/** The folder this code was installed in: src/core/workspaces → the package root (dist likewise). */
const installationFolder = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');

interface Identity {
  path: string;
  dev: number;
  ino: number;
}

/** A home directory from /etc/passwd, and whose it is. */
export interface AccountHome {
  user: string;
  home: string;
}

export interface ServicePaths {
  /** The service's own folders and files and the system's: never inside a workspace, never around one. */
  guarded: string[];
  /** Their identities, so a bind mount of one elsewhere is recognised too. */
  guardedIdentities: Identity[];
  /** Folders inside guarded ones that a workspace may lie in all the same (/var/tmp). */
  open?: string[];
  /** Folders that may hold a workspace but neither be one nor lie in one. */
  shared: string[];
  /** The service user's home: a workspace may lie in it, not be it, hold it, or sit in a hidden folder of it. */
  home: string;
  /** Every other home /etc/passwd lists, under the same rule (servicePaths fills it). */
  homes?: AccountHome[];
  /** Temporary folders, searched for runtime roots of this and other instances (servicePaths fills it). */
  temporary?: string[];
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

/**
 * The homes of /etc/passwd's text: `user:password:uid:gid:gecos:home:shell` lines; `/` and
 * `/nonexistent`, which system accounts give, and anything not absolute are no home.
 */
export function homesFromPasswd(text: string): AccountHome[] {
  const homes: AccountHome[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    const [user = '', , , , , home = ''] = fields;
    if (fields.length < 7 || line.startsWith('#') || !isAbsolute(home)) continue;
    const normalised = resolve(home);
    if (!NO_HOME.includes(normalised)) homes.push({ user, home: normalised });
  }
  return homes;
}

let passwdRead: { modified: number; size: number; homes: AccountHome[] } | null = null;

/** /etc/passwd's homes, read again whenever the file changes (an account added while the service runs). */
function passwdHomes(): AccountHome[] {
  try {
    const { mtimeMs, size } = statSync(PASSWD);
    if (passwdRead?.modified !== mtimeMs || passwdRead.size !== size) {
      const homes = homesFromPasswd(readFileSync(PASSWD, 'utf8')).flatMap(({ user, home }) => bothSpellings(home).map((path) => ({ user, home: path })));
      passwdRead = { modified: mtimeMs, size, homes };
    }
    return passwdRead.homes;
  } catch {
    return [];
  }
}

/**
 * The other accounts' homes that need the home rule: not the service user's (which has its own
 * message), nor those forbidden outright already (daemons living in /var/lib, /usr/sbin, /run).
 */
export function otherHomes(accounts: readonly AccountHome[], paths: ServicePaths): AccountHome[] {
  return accounts.filter(({ home }) => home !== paths.home && !isLibraryFolder(home) && guardingFolder(home, paths) === null);
}

const computed = new Map<string, ServicePaths>();

/**
 * The paths the rules protect, as spelled and as they resolve (/bin may be a link to /usr/bin);
 * worked out once per database location, since every workspace use checks them. The homes are
 * the passwd file's as it is now.
 */
export function servicePaths(config: Pick<Config, 'DATABASE_URL'>): ServicePaths {
  let paths = computed.get(config.DATABASE_URL);
  if (paths === undefined) {
    const { directory, file } = serviceFiles(config);
    const own = [installationFolder, process.cwd(), file, ...(directory === undefined ? [] : [directory])];
    const guarded = [...new Set([...own, ...FORBIDDEN_FOLDERS].flatMap(bothSpellings))];
    const guardedIdentities = guarded.flatMap((path) => identityOf(path) ?? []);
    const open = [...new Set(OPEN_INSIDE_FORBIDDEN.flatMap(bothSpellings))];
    const shared = [...new Set([...SHARED_PARENTS, tmpdir()].flatMap(bothSpellings))];
    const temporary = [...new Set([...TEMPORARY_FOLDERS, tmpdir()].flatMap(bothSpellings))];
    paths = { guarded, guardedIdentities, open, shared, home: homedir(), temporary };
    computed.set(config.DATABASE_URL, paths);
  }
  return { ...paths, homes: otherHomes(passwdHomes(), paths) };
}

/** `/lib`, `/lib64`, `/libx32`, … (read as the glob the contract writes). */
function isLibraryFolder(path: string): boolean {
  return /^\/lib[^/]*(\/|$)/.test(path);
}

/**
 * The guarded folder a path is or lies in, or null: a folder open inside it (/var/tmp in /var)
 * takes what lies in it out of that folder's guard, not out of another's.
 */
function guardingFolder(realPath: string, paths: ServicePaths): string | null {
  const openIn = (guarded: string) => (paths.open ?? []).some((folder) => folder !== guarded && isPathInside(folder, guarded) && isPathInside(realPath, folder));
  return paths.guarded.find((guarded) => isPathInside(realPath, guarded) && !openIn(guarded)) ?? null;
}

const sameFolder = (a: Identity | null, b: Identity) => a !== null && a.dev === b.dev && a.ino === b.ino;

/**
 * A guarded folder reached by another path (a bind mount of the data folder, say): the path or
 * one of its parents up to an open folder (the rest of /var stays guarded) is the same folder
 * on disk.
 */
function mountedGuardedFolder(realPath: string, paths: ServicePaths): string | null {
  for (let folder = realPath; ; folder = dirname(folder)) {
    const identity = identityOf(folder);
    const match = paths.guardedIdentities.find((guarded) => sameFolder(identity, guarded));
    if (match) return match.path;
    if (folder === sep || (paths.open ?? []).includes(folder)) return null;
  }
}

/** The mount points that lie strictly inside `realPath` (/proc/self/mountinfo, octal escapes undone). */
function mountPointsInside(realPath: string): string[] {
  let table: string;
  try {
    table = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  return table
    .split('\n')
    .map((line) => (line.split(' ')[4] ?? '').replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point) => point !== realPath && point.startsWith('/') && isPathInside(point, realPath));
}

/**
 * The runtime folders of this instance and others (runtime-folder.ts) in the temporary folders,
 * with their identities and those of the folders directly in them (a terminal's pipe folder),
 * looked up at each check: terminals come and go.
 */
function runtimeFolders(paths: ServicePaths): Identity[] {
  const found: Identity[] = [];
  for (const root of (paths.temporary ?? []).flatMap(runtimeFoldersIn)) {
    const identity = identityOf(root);
    if (identity === null) continue;
    found.push(identity);
    for (const inner of runtimeFoldersInside(root)) {
      const innerIdentity = identityOf(inner);
      if (innerIdentity !== null) found.push(innerIdentity);
    }
  }
  return found;
}

function runtimeFoldersInside(root: string): string[] {
  try {
    return readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(root, entry.name));
  } catch {
    // Another user's root: its own folder is all that can be told.
    return [];
  }
}

/**
 * Why a path reaches a runtime folder, or null: named like one (so any instance's, wherever its
 * TMPDIR, and the folders older versions made), holding one (by name, or through a temporary
 * folder or a runtime folder mounted inside it), or being one reached by another path (a bind
 * mount of a terminal's pipe folder, say).
 */
function runtimeProblem(realPath: string, paths: ServicePaths): string | null {
  const what = 'a runtime folder of this service or another instance of it (command pipes, proxy sockets, the file helper)';
  const parts = realPath.split(sep);
  const named = parts.findIndex(isRuntimeFolderName);
  if (named !== -1) return `${realPath} is or lies inside ${parts.slice(0, named + 1).join(sep)}, ${what}, which commands must not reach`;
  const runtime = runtimeFolders(paths);
  const held = [...runtime.map((folder) => folder.path), ...runtimeFoldersIn(realPath)].find((folder) => isPathInside(folder, realPath));
  if (held !== undefined) return `${realPath} holds ${held}, ${what}, which commands must not reach`;
  for (let folder = realPath; ; folder = dirname(folder)) {
    const identity = identityOf(folder);
    const match = runtime.find((candidate) => sameFolder(identity, candidate));
    if (match) return `${realPath} is ${match.path} reached by another path, ${what}, which commands must not reach`;
    if (folder === sep) break;
  }
  const temporary = (paths.temporary ?? []).flatMap((path) => identityOf(path) ?? []);
  for (const point of mountPointsInside(realPath)) {
    const identity = identityOf(point);
    const match = [...runtime, ...temporary, ...paths.guardedIdentities].find((candidate) => sameFolder(identity, candidate));
    if (match) return `${realPath} holds ${point}, where ${match.path} is mounted, which commands must not reach`;
  }
  return null;
}

/** The home rule: a workspace may lie in a home, not be it, hold it, or sit in one of its hidden folders. */
function homeProblem(realPath: string, home: string, whose: string): string | null {
  if (home === '' || home === sep) return null;
  if (isPathInside(home, realPath)) return `${realPath} is or holds ${whose} home (${home})`;
  if (isPathInside(realPath, home)) {
    const first = realPath.slice(home.length + 1).split(sep)[0] ?? '';
    if (first.startsWith('.')) return `${realPath} lies in a hidden folder of ${whose} home (${join(home, first)})`;
  }
  return null;
}

/**
 * Why a real path may not be a workspace, or null when it may. "Holds" is checked too: `/var`
 * holds `/var/lib`, `/` holds everything.
 */
export function registrationProblem(realPath: string, paths: ServicePaths): string | null {
  if (realPath === sep) return 'the root folder cannot be a workspace';
  if (isLibraryFolder(realPath)) return `a system folder cannot be a workspace: ${realPath}`;
  if (realPath.split(sep).includes('.git')) return `a repository's .git folder cannot be a workspace: ${realPath}`;
  const inside = guardingFolder(realPath, paths);
  if (inside !== null) return `${realPath} lies inside ${inside}, which commands must not reach`;
  const held = paths.guarded.find((guarded) => isPathInside(guarded, realPath));
  if (held !== undefined) return `${realPath} holds ${held}, which commands must not reach`;
  for (const shared of paths.shared) {
    if (isPathInside(shared, realPath)) return `${realPath} is or holds ${shared}, which is shared: register a folder inside it`;
  }
  const own = homeProblem(realPath, paths.home, "the service user's");
  if (own !== null) return own;
  for (const { user, home } of paths.homes ?? []) {
    const problem = homeProblem(realPath, home, `${user}'s`);
    if (problem !== null) return problem;
  }
  const runtime = runtimeProblem(realPath, paths);
  if (runtime !== null) return runtime;
  const mounted = mountedGuardedFolder(realPath, paths);
  if (mounted !== null) return `${realPath} is ${mounted} reached by another path, which commands must not reach`;
  return null;
}
