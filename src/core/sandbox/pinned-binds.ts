import { closeSync, constants, fstatSync, mkdirSync, openSync, type Stats } from 'node:fs';
import { join } from 'node:path';

// Folders and files a sandbox binds from inside a workspace are opened by the service first and
// handed to bubblewrap as open descriptors (`--bind-fd`), never by name (CONTRACT §11). bubblewrap
// resolves names later, following links, and anyone who can write the workspace can swap a
// folder for a link between a check and that moment: a name would then mount whatever the link
// points at (the host's /etc, writable). An open descriptor is the folder that was checked.
//
// Each step opens one name inside an already-open folder (through /proc/self/fd/N, with
// O_NOFOLLOW), so no link anywhere in the path is followed. The descriptors reach bubblewrap
// through the launch prefix (launch-prefix.ts), which reopens them from /proc/<service>/fd/N.

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * `.git` entries bound read-only: what Git reads as configuration or runs, what points it
 * elsewhere, and the submodules' and worktrees' own repositories (each a whole folder: Git nests
 * them by name, and a name may hold slashes).
 */
const PROTECTED_ENTRIES = ['config', 'config.worktree', 'commondir', 'hooks', 'info', 'worktrees', 'modules'];
/**
 * Folders made empty when a repository lacks them, so they can be protected: Git's own `init`
 * makes `hooks` and `info`; an empty `modules` is what Git has before the first submodule. Files
 * are never made (an empty `commondir` would break Git), nor `worktrees`, whose appearance after
 * registration marks the repository as tampered (workspace-integrity.ts).
 */
const MADE_WHEN_MISSING = ['hooks', 'info', 'modules'];

export interface PinnedBind {
  /** The service's own descriptor. */
  fd: number;
  /** What it is: the sandbox must show this very folder or file at `target`. */
  device: number;
  inode: number;
  /** Where it is mounted inside the sandbox. */
  target: string;
  writable: boolean;
}

export interface ExpectedMount {
  target: string;
  readOnly: boolean;
  device: number;
  inode: number;
}

/** The identity a workspace was registered with; a folder with another one is refused. */
export interface FolderIdentity {
  device: string;
  inode: string;
}

/**
 * What the sandboxes that run commands have bound below the workspaces (CONTRACT §11). bubblewrap
 * makes a bind's destination by name, following links, and creates it when missing (`creat`,
 * `mkdir`): a destination a running sandbox can rename or replace could be swapped for a link to
 * any host file at that moment, which would then be created or emptied as root. A destination
 * that is itself a mount point in every such sandbox cannot be renamed nor replaced there. So an
 * entry below a workspace is bound only when every sandbox that can write that workspace has it
 * bound too (or none runs): an entry made since one of them started is left unbound until they
 * have all ended. Process-wide, as the file system is.
 */
export class WriterBinds {
  private readonly writers = new Map<number, { writable: readonly string[]; targets: ReadonlySet<string> }>();
  private nextId = 1;

  /** Records a sandbox that runs commands; the returned function forgets it once it has ended. */
  register(writable: readonly string[], targets: readonly string[]): () => void {
    const id = this.nextId++;
    this.writers.set(id, { writable: [...writable], targets: new Set(targets) });
    return () => {
      this.writers.delete(id);
    };
  }

  /** Whether `target`, below `workspace`, is a mount point in every sandbox that can write `workspace`. */
  boundByAllWriters(workspace: string, target: string): boolean {
    for (const writer of this.writers.values()) {
      if (writer.writable.includes(workspace) && !writer.targets.has(target)) return false;
    }
    return true;
  }
}

export const writerBinds = new WriterBinds();

/** A pinned folder is not the one registered (replaced since, or not a plain folder). */
export class PinError extends Error {
  override name = 'PinError';
}

function openBeneath(parentFd: number, name: string, flags: number): { fd: number; info: Stats } | null {
  let fd: number;
  try {
    fd = openSync(`/proc/self/fd/${parentFd}/${name}`, flags);
  } catch {
    // Missing, a link (ELOOP), or not what was asked for (ENOTDIR): not bound.
    return null;
  }
  return { fd, info: fstatSync(fd) };
}

/** Descriptors of the folders and files one sandbox binds from the workspaces; close() when it has started. */
export class PinnedBinds {
  readonly binds: PinnedBind[] = [];
  private closed = false;

  constructor(private readonly registry: WriterBinds = writerBinds) {}

  /**
   * Pins a workspace folder (which must still have its registered identity when one is given),
   * and, when `protectGit`, its repository's `.git` (pinned writable, so it cannot be replaced)
   * and the entries Git reads as configuration (read-only).
   */
  addWorkspace(path: string, identity: FolderIdentity | null, options: { writable: boolean; protectGit: boolean }): void {
    let fd: number;
    try {
      fd = openSync(path, DIRECTORY_FLAGS);
    } catch (error) {
      throw new PinError(`${path} cannot be opened as a folder: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
    const info = fstatSync(fd);
    if (identity !== null && (String(info.dev) !== identity.device || String(info.ino) !== identity.inode)) {
      closeSync(fd);
      throw new PinError(`${path} is not the folder that was registered`);
    }
    this.binds.push({ fd, target: path, writable: options.writable, device: info.dev, inode: info.ino });
    if (options.protectGit) this.protectGit(fd, path);
  }

  private protectGit(workspaceFd: number, workspace: string): void {
    const gitPath = join(workspace, '.git');
    if (!this.registry.boundByAllWriters(workspace, gitPath)) return;
    const git = openBeneath(workspaceFd, '.git', DIRECTORY_FLAGS);
    if (git === null) return;
    this.binds.push({ fd: git.fd, target: gitPath, writable: true, device: git.info.dev, inode: git.info.ino });
    for (const name of PROTECTED_ENTRIES) {
      const target = join(gitPath, name);
      // Left unbound (and unmade) while a running sandbox could swap it: see WriterBinds.
      if (!this.registry.boundByAllWriters(workspace, target)) continue;
      let entry = openBeneath(git.fd, name, FILE_FLAGS);
      if (entry === null && MADE_WHEN_MISSING.includes(name)) {
        try {
          // Made through the open `.git`: a link planted under this name is not followed.
          mkdirSync(`/proc/self/fd/${git.fd}/${name}`);
        } catch {
          // Made meanwhile, or not ours to make: opened below if it is a folder now.
        }
        entry = openBeneath(git.fd, name, FILE_FLAGS);
      }
      if (entry === null) continue;
      if (entry.info.isFile() || entry.info.isDirectory()) {
        this.binds.push({ fd: entry.fd, target, writable: false, device: entry.info.dev, inode: entry.info.ino });
      } else closeSync(entry.fd);
    }
  }

  /** The mounts a started sandbox must show (what, where, and whether read-only), to be checked. */
  expectedMounts(): ExpectedMount[] {
    return this.binds.map((bind) => ({ target: bind.target, readOnly: !bind.writable, device: bind.device, inode: bind.inode }));
  }

  /** Closes the service's descriptors: once bubblewrap has mounted them, they are no longer needed. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const bind of this.binds) {
      try {
        closeSync(bind.fd);
      } catch {
        // Already closed.
      }
    }
  }
}
