import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Per-terminal limits that no command can lift (CONTRACT §11): memory (tmpfs pages included,
// which the kernel charges to the cgroup that wrote them) and the number of processes. As root
// the limits that rlimits offer do not hold: RLIMIT_NPROC is not enforced for uid 0, and
// RLIMIT_AS bounds one process, not a fork bomb of them. A cgroup bounds the whole terminal.
// cgroup v1 (separate `memory` and `pids` hierarchies) and v2 (one unified hierarchy) are both
// understood; which one the host gives root is found at start-up by making a test group.

/** Every group this service makes is named so; a terminal's is followed by its id. */
const GROUP_PREFIX = 'assistant-';

export interface CgroupSupport {
  version: 1 | 2;
  /** Folders under which this process may make groups: v1 one per controller, v2 one. */
  parents: { memory: string; pids: string };
}

export interface TerminalLimits {
  memoryBytes: number;
  processes: number;
}

interface Mount {
  path: string;
  type: string;
  options: string[];
}

function mounts(): Mount[] {
  let text: string;
  try {
    text = readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields.length >= 4)
    .map(([, path = '', type = '', options = '']) => ({ path: path.replace(/\\040/g, ' '), type, options: options.split(',') }));
}

/** This process's own group per hierarchy (`/proc/self/cgroup`): "memory" → "/a/b", "" (v2) → "/c". */
function ownGroups(): Map<string, string> {
  const groups = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return groups;
  }
  for (const line of text.split('\n')) {
    const [, controllers = '', ...rest] = line.split(':');
    const path = rest.join(':');
    if (path === '') continue;
    for (const controller of controllers.split(',')) groups.set(controller, path);
  }
  return groups;
}

function v1Parent(controller: 'memory' | 'pids', own: Map<string, string>): string | null {
  const mount = mounts().find((entry) => entry.type === 'cgroup' && entry.options.includes(controller));
  const group = own.get(controller);
  return mount && group !== undefined ? join(mount.path, group) : null;
}

function v2Parent(own: Map<string, string>): string | null {
  const mount = mounts().find((entry) => entry.type === 'cgroup2');
  const group = own.get('');
  if (!mount || group === undefined) return null;
  const parent = join(mount.path, group);
  // v2 hands controllers down only when the parent lists them in its subtree_control.
  try {
    const enabled = readFileSync(join(parent, 'cgroup.subtree_control'), 'utf8');
    if (!/\bmemory\b/.test(enabled) || !/\bpids\b/.test(enabled)) writeFileSync(join(parent, 'cgroup.subtree_control'), '+memory +pids');
  } catch {
    return null;
  }
  return parent;
}

/**
 * The cgroup hierarchy this process can make limited groups in, proven by making one with both
 * limits set; null when there is none (then limits are per process, and /api/status says so).
 */
export function detectCgroups(): CgroupSupport | null {
  const own = ownGroups();
  const memory = v1Parent('memory', own);
  const pids = v1Parent('pids', own);
  const candidates: CgroupSupport[] = [];
  if (memory !== null && pids !== null) candidates.push({ version: 1, parents: { memory, pids } });
  const unified = v2Parent(own);
  if (unified !== null) candidates.push({ version: 2, parents: { memory: unified, pids: unified } });
  for (const support of candidates) {
    try {
      const probe = TerminalCgroup.create(support, `probe-${process.pid}`, { memoryBytes: 64 * 1024 * 1024, processes: 16 });
      probe.remove();
      removeEmptyGroups(support);
      return support;
    } catch {
      // This hierarchy is read-only here, or lacks a controller: try the next.
    }
  }
  return null;
}

/**
 * Groups left by a service that was killed (its sandboxes died with it, so they are empty). The
 * kernel refuses to remove a group that still holds processes, so another instance's live
 * terminals on the same host are left alone (one made that very moment, before its shell joined
 * it, could go: that terminal's start then fails and can be retried).
 */
function removeEmptyGroups(support: CgroupSupport): void {
  for (const parent of new Set([support.parents.memory, support.parents.pids])) {
    let names: string[];
    try {
      names = readdirSync(parent).filter((name) => name.startsWith(GROUP_PREFIX));
    } catch {
      continue;
    }
    for (const name of names) {
      try {
        rmdirSync(join(parent, name));
      } catch {
        // In use: a live terminal of another instance.
      }
    }
  }
}

/** One terminal's group(s): a memory limit and a process limit, and the files that join them. */
export class TerminalCgroup {
  private removed = false;

  private constructor(
    /** v1: the memory and the pids group; v2: the one group, twice. */
    private readonly folders: { memory: string; pids: string },
    private readonly processes: number,
  ) {}

  static create(support: CgroupSupport, name: string, limits: TerminalLimits): TerminalCgroup {
    const folderName = `${GROUP_PREFIX}${name}`;
    const folders = { memory: join(support.parents.memory, folderName), pids: join(support.parents.pids, folderName) };
    const group = new TerminalCgroup(folders, limits.processes);
    try {
      for (const folder of new Set([folders.memory, folders.pids])) mkdirSync(folder);
      const memory = String(limits.memoryBytes);
      const processes = String(limits.processes);
      if (support.version === 1) {
        writeFileSync(join(folders.memory, 'memory.limit_in_bytes'), memory);
        // Without it a terminal could push its pages out to swap and grow past the limit.
        const withSwap = join(folders.memory, 'memory.memsw.limit_in_bytes');
        if (existsSync(withSwap)) writeFileSync(withSwap, memory);
        writeFileSync(join(folders.pids, 'pids.max'), processes);
      } else {
        writeFileSync(join(folders.memory, 'memory.max'), memory);
        const swap = join(folders.memory, 'memory.swap.max');
        if (existsSync(swap)) writeFileSync(swap, '0');
        writeFileSync(join(folders.pids, 'pids.max'), processes);
      }
    } catch (error) {
      group.remove();
      throw error;
    }
    return group;
  }

  /** The `cgroup.procs` files a process writes its pid into to join (before it starts the sandbox). */
  procsFiles(): string[] {
    return [...new Set([this.folders.memory, this.folders.pids])].map((folder) => join(folder, 'cgroup.procs'));
  }

  /** Whether the group holds as many processes as it may (a fork bomb, say). */
  atProcessLimit(): boolean {
    try {
      const current = Number(readFileSync(join(this.folders.pids, 'pids.current'), 'utf8'));
      return current >= this.processes;
    } catch {
      return false;
    }
  }

  /** SIGKILL to every process in the group, wherever it moved inside the sandbox. */
  killAll(): void {
    let text: string;
    try {
      text = readFileSync(join(this.folders.pids, 'cgroup.procs'), 'utf8');
    } catch {
      return;
    }
    for (const pid of text.split('\n').filter((line) => line !== '')) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Ended between the read and the signal.
      }
    }
  }

  /**
   * Removes the group once its processes are gone; the kernel refuses while any remain (dying
   * ones linger a moment), so it is tried again for a few seconds before being left behind.
   */
  remove(): void {
    if (this.removed) return;
    this.removed = true;
    const folders = [...new Set([this.folders.memory, this.folders.pids])];
    const attempt = (left: number) => {
      const remaining = folders.filter((folder) => {
        try {
          rmdirSync(folder);
          return false;
        } catch (error) {
          return (error as NodeJS.ErrnoException).code !== 'ENOENT';
        }
      });
      folders.splice(0, folders.length, ...remaining);
      if (folders.length > 0 && left > 0) {
        this.killAll();
        setTimeout(() => {
          attempt(left - 1);
        }, 200).unref();
      }
    };
    attempt(25);
  }

}
