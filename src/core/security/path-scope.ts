import { realpathSync } from 'node:fs';
import { posix } from 'node:path';
import { isPathInside } from '../paths/path-inside.js';

/**
 * Where a path points, for the risk rules:
 * - `inside`: a workspace root or below one;
 * - `tmp`: /tmp or below (the sandbox gives each shell a private one);
 * - `special`: /dev/null, /dev/std*, /dev/tty, /dev/fd/*, … — harmless to read or write;
 * - `network`: bash's /dev/tcp/… and /dev/udp/… pseudo-files;
 * - `device`: any other /dev path (`blockDevice` tells disks apart);
 * - `outside`: everything else.
 */
export type PathZone = 'inside' | 'tmp' | 'special' | 'network' | 'device' | 'outside';

export interface LocatedPath {
  zone: PathZone;
  /** The absolute path with symlinks followed. */
  real: string;
  blockDevice: boolean;
}

/** What a removal would take away that must never go: the root, home, or a workspace (or a parent of one). */
export type Protected = 'root' | 'home' | 'workspace';

export interface PathPolicy {
  readonly workspaceRoots: readonly string[];
  /** The real home directory, or null when the line changed HOME. */
  readonly home: string | null;
  /** Follows symlinks; receives an absolute path that may still contain `.` and `..`. */
  readonly resolve: (absolute: string) => string;
}

const specialPaths: ReadonlySet<string> = new Set([
  '/dev/null', '/dev/stdin', '/dev/stdout', '/dev/stderr', '/dev/tty', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom',
]);
const specialPrefixes = ['/dev/fd/', '/proc/self/fd/', '/proc/thread-self/fd/'];

/**
 * A special file that reopens a descriptor other than the command's own output: its standard
 * input (the terminal) or one it inherited (the shell's command input, for one).
 */
export function isInheritedDescriptor(path: string): boolean {
  if (path === '/dev/stdin') return true;
  const number = /^\/(?:dev|proc\/self|proc\/thread-self)\/fd\/(\d+)$/.exec(path)?.[1];
  return number !== undefined && (Number(number) === 0 || Number(number) >= 3);
}
const networkPrefixes = ['/dev/tcp/', '/dev/udp/'];
const blockDevicePattern = /^\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|loop|dm-|md|nbd|zram|mapper\/|disk\/)/;
const tmpRoots = ['/tmp', '/private/tmp'];

/**
 * `text` made absolute against the cwd, with its `..` left in place for the resolver (see
 * resolveRealPath); null when it is relative and the cwd is unknown.
 */
export function absolutePath(text: string, cwd: string | null): string | null {
  if (text.startsWith('/')) return text;
  if (cwd === null) return null;
  return text === '' ? cwd : `${cwd}/${text}`;
}

/**
 * The directory a pattern's matches live in: the literal text before the first pattern character,
 * cut back to its last `/` (`*.ts` → `.`, `/etc/*.conf` → `/etc/`, `../*` → `../`, `src/a*` → `src/`).
 */
export function patternDirectory(text: string, glob: number): string {
  const prefix = text.slice(0, glob);
  const slash = prefix.lastIndexOf('/');
  return slash < 0 ? '.' : prefix.slice(0, slash + 1);
}

/**
 * Realpath of the longest existing prefix plus the rest. A `..` is applied after the part before it
 * has been resolved, as the kernel does: handled lexically, `etc-link/../etc/shadow` would look like
 * a path inside the workspace while it opens /etc/shadow.
 */
export function resolveRealPath(absolute: string): string {
  let current = '/';
  let pending: string[] = [];
  for (const segment of absolute.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      current = posix.dirname(realPrefix(posix.join(current, ...pending)));
      pending = [];
    } else {
      pending.push(segment);
    }
  }
  return realPrefix(posix.join(current, ...pending));
}

function realPrefix(path: string): string {
  const rest: string[] = [];
  let head = path;
  for (;;) {
    try {
      return posix.join(realpathSync.native(head), ...rest);
    } catch {
      if (head === '/') return path;
      rest.unshift(posix.basename(head));
      head = posix.dirname(head);
    }
  }
}

function lexicalZone(path: string): { zone: PathZone; blockDevice: boolean } | null {
  if (specialPaths.has(path) || specialPrefixes.some((prefix) => path.startsWith(prefix))) return { zone: 'special', blockDevice: false };
  if (networkPrefixes.some((prefix) => path.startsWith(prefix))) return { zone: 'network', blockDevice: false };
  if (blockDevicePattern.test(path)) return { zone: 'device', blockDevice: true };
  return null;
}

/**
 * Classifies an absolute path: special files by name first (they are links into /proc), then by
 * real path. Under /tmp (outside the workspaces) a command sees its own private folder, not the
 * host's: the host's /tmp says nothing of it (its links could lead anywhere on the host while the
 * command's lead elsewhere), so such a path is the private /tmp as written.
 */
export function locatePath(absolute: string, policy: PathPolicy): LocatedPath {
  const lexical = posix.resolve(absolute);
  const byName = lexicalZone(lexical);
  if (byName !== null) return { ...byName, real: lexical };
  const inWorkspace = policy.workspaceRoots.some((root) => isPathInside(lexical, root));
  if (!inWorkspace && tmpRoots.some((root) => isPathInside(lexical, root))) return { zone: 'tmp', real: lexical, blockDevice: false };
  const real = policy.resolve(absolute);
  const byTarget = lexicalZone(real);
  if (byTarget !== null) return { ...byTarget, real };
  if (policy.workspaceRoots.some((root) => isPathInside(real, root))) return { zone: 'inside', real, blockDevice: false };
  if (tmpRoots.some((root) => isPathInside(real, root))) return { zone: 'tmp', real, blockDevice: false };
  if (isPathInside(real, '/dev')) return { zone: 'device', real, blockDevice: false };
  return { zone: 'outside', real, blockDevice: false };
}

/** Whether removing `real` would remove `/`, home, a workspace root, or a directory holding one of them. */
export function protectedByRemoval(real: string, policy: PathPolicy): Protected | null {
  if (real === '/') return 'root';
  if (policy.workspaceRoots.some((root) => isPathInside(root, real))) return 'workspace';
  if (policy.home !== null && isPathInside(policy.home, real)) return 'home';
  return null;
}

/** Whether removing every entry of directory `real` (a pattern like `dir/*`) would hit a protected directory. */
export function protectedByRemovingEntries(real: string, policy: PathPolicy): Protected | null {
  if (real === '/') return 'root';
  if (policy.workspaceRoots.some((root) => root !== real && isPathInside(root, real))) return 'workspace';
  if (policy.home !== null && isPathInside(policy.home, real)) return 'home';
  return null;
}
