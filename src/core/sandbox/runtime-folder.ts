import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

// Where the service keeps what it makes for its terminals and helpers: each terminal's command
// pipe (command-pipe.ts) and egress proxy socket (terminal-confinement.ts), and under tsx the file
// helper's bundled program (helper-script.ts). Whoever could write there could feed a shell
// commands that skip the analysis and the audit, or stand in for the program every workspace's
// file helper runs; so they all live in ONE private root per process, which the workspace rules
// refuse by name and by identity (workspace-rules.ts) for this instance and any other.
//
// The root is in the temporary folder rather than the data folder: PostgreSQL deployments have no
// data folder, a Unix socket's path must stay under 108 bytes (a data folder may be deep), and a
// reboot empties /tmp. mkdtemp makes it (and each folder in it) mode 0700. It holds an `owner`
// file naming the process, so a later start can sweep the roots of processes that died without a
// clean stop (kill -9) and leave a live instance's alone.

/** The root's name; what the sweep removes and the workspace rules refuse. */
export const RUNTIME_ROOT_PREFIX = 'assistant-runtime-';

/**
 * Every name the service's runtime folders are given or were given: the root, and what earlier
 * versions made directly in the temporary folder (an instance of one may still be running).
 */
const RUNTIME_NAME = /^assistant-(runtime|shell|net|file-helper)-/;

const OWNER_FILE = 'owner';

/** What the root's owner file records: the process, and when it started (a pid is reused). */
export interface RuntimeOwner {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat), null where unreadable. */
  started: string | null;
  /** The boot it ran in: a root left from an earlier boot (a /tmp that survives) is dead for sure. */
  boot: string | null;
  /** Its PID namespace: a pid of another one (a container sharing /tmp) cannot be looked up here. */
  namespace: string | null;
}

/** Whether a folder's name is one the service gives its runtime folders. */
export function isRuntimeFolderName(name: string): boolean {
  return RUNTIME_NAME.test(name);
}

let root: string | null = null;
let holders = 0;
/** Folders made for one terminal and not yet removed by it; the root stays while any is left. */
const inUse = new Set<string>();
/** The last holder let go while a terminal's folder was still in use: the root goes with that folder. */
let removeWhenUnused = false;
let exitHooked = false;

function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The name in field 2 may hold spaces and parentheses: fields are counted after its last `)`,
    // from field 3; the start time is field 22.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function readOrNull(read: () => string): string | null {
  try {
    return read().trim();
  } catch {
    return null;
  }
}

const currentBoot = () => readOrNull(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'));
const currentNamespace = () => readOrNull(() => readlinkSync('/proc/self/ns/pid'));

/** The owner record of a process of this PID namespace, as the root's owner file holds it. */
export function ownerRecord(pid: number): string {
  const owner: RuntimeOwner = { pid, started: processStart(pid), boot: currentBoot(), namespace: currentNamespace() };
  return `${JSON.stringify(owner)}\n`;
}

function removeRoot(): void {
  removeWhenUnused = false;
  if (root === null) return;
  rmSync(root, { recursive: true, force: true });
  root = null;
}

function currentRoot(): string {
  if (root !== null) return root;
  const made = mkdtempSync(join(tmpdir(), RUNTIME_ROOT_PREFIX));
  try {
    writeFileSync(join(made, OWNER_FILE), ownerRecord(process.pid), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    rmSync(made, { recursive: true, force: true });
    throw error;
  }
  root = made;
  if (!exitHooked) {
    exitHooked = true;
    // A process that ends without its service's stop (an uncaught error, a test worker): the
    // root goes with it. Only kill -9 leaves it, for the next start's sweep.
    process.once('exit', removeRoot);
  }
  return made;
}

/** This process's runtime root if it has been made, else null. */
export function runtimeRootPath(): string | null {
  return root;
}

/**
 * A new private folder in this process's runtime root, for `kind` (`shell`, `net`,
 * `file-helper`). Its owner removes it with removeRuntimeFolder; a `cache` (the file helper's
 * bundle, made again when missing) is not waited for and goes with the root.
 */
export function runtimeFolder(kind: string, options: { cache?: boolean } = {}): string {
  let folder: string;
  try {
    folder = mkdtempSync(join(currentRoot(), `${kind}-`));
  } catch (error) {
    // Removed under the service (a cleaner of old temporary files): a new root is made.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    root = null;
    folder = mkdtempSync(join(currentRoot(), `${kind}-`));
  }
  if (options.cache !== true) inUse.add(folder);
  return folder;
}

export function removeRuntimeFolder(folder: string): void {
  rmSync(folder, { recursive: true, force: true });
  inUse.delete(folder);
  if (removeWhenUnused && holders === 0 && inUse.size === 0) removeRoot();
}

/**
 * Held by a running service (app.ts): the release, at its clean stop, removes the root once no
 * other service of this process holds it and no terminal's folder is left in it.
 */
export function holdRuntimeRoot(): () => void {
  holders += 1;
  removeWhenUnused = false;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    holders -= 1;
    if (holders > 0) return;
    if (inUse.size === 0) removeRoot();
    else removeWhenUnused = true;
  };
}

function readOwner(folder: string): RuntimeOwner | null {
  const file = join(folder, OWNER_FILE);
  try {
    // A plain file only: reading a planted pipe would block the start.
    if (!lstatSync(file).isFile()) return null;
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<RuntimeOwner>;
    const { pid } = parsed;
    if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return null;
    const text = (value: unknown) => (typeof value === 'string' ? value : null);
    return { pid, started: text(parsed.started), boot: text(parsed.boot), namespace: text(parsed.namespace) };
  } catch {
    return null;
  }
}

/**
 * Whether the process that made a root may still run: the same pid, started at the same time, in
 * this boot. A process of another PID namespace counts as alive: it cannot be looked up here.
 */
export function ownerAlive(owner: RuntimeOwner): boolean {
  const boot = currentBoot();
  if (owner.boot !== null && boot !== null && owner.boot !== boot) return false;
  const namespace = currentNamespace();
  if (owner.namespace === null || namespace === null || owner.namespace !== namespace) return true;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: a live process of another user.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  if (owner.started === null) return true;
  const started = processStart(owner.pid);
  return started === null || started === owner.started;
}

/** The folders in `parent` named like runtime folders (roots, and earlier versions' folders). */
export function runtimeFoldersIn(parent: string): string[] {
  try {
    return readdirSync(parent, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && isRuntimeFolderName(entry.name))
      .map((entry) => join(parent, entry.name));
  } catch {
    return [];
  }
}

/**
 * At start-up: removes the runtime roots in `parent` whose process is gone (a service killed
 * with kill -9 leaves its terminals' folders behind). Only roots of this user with a readable
 * owner record are touched: a root whose owner still runs, one still being made, and anything
 * another user planted stay. Returns the roots removed.
 */
export function sweepRuntimeRoots(parent: string = tmpdir()): string[] {
  const uid = process.getuid?.();
  const removed: string[] = [];
  for (const folder of runtimeFoldersIn(parent)) {
    if (folder === root || !basename(folder).startsWith(RUNTIME_ROOT_PREFIX)) continue;
    try {
      const info = lstatSync(folder);
      if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) continue;
    } catch {
      continue;
    }
    const owner = readOwner(folder);
    if (owner === null || ownerAlive(owner)) continue;
    rmSync(folder, { recursive: true, force: true });
    removed.push(folder);
  }
  return removed;
}
