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
  /**
   * Folders under which this process may make groups: v1 one per controller, v2 one. `cpu` is
   * used when it is there: sandboxes then weigh less than the service for the processor.
   */
  parents: { memory: string; pids: string; cpu?: string };
}

/** A sandbox's share of the processor against the service's own (v1 cpu.shares; the default is 1024). */
const CPU_SHARES = 128;
/** The same for v2's cpu.weight (default 100). */
const CPU_WEIGHT = 12;

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

function v1Parent(controller: 'memory' | 'pids' | 'cpu', own: Map<string, string>): string | null {
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
    if (!/\bcpu\b/.test(enabled)) {
      try {
        writeFileSync(join(parent, 'cgroup.subtree_control'), '+cpu');
      } catch {
        // No cpu controller to hand down: sandboxes then share the processor evenly.
      }
    }
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
  const cpu = v1Parent('cpu', own);
  if (memory !== null && pids !== null) candidates.push({ version: 1, parents: { memory, pids, ...(cpu === null ? {} : { cpu }) } });
  const unified = v2Parent(own);
  if (unified !== null) candidates.push({ version: 2, parents: { memory: unified, pids: unified, cpu: unified } });
  for (const support of candidates) {
    try {
      const probe = SandboxCgroup.create(support, `probe-${process.pid}`, { memoryBytes: 64 * 1024 * 1024, processes: 16 });
      void probe.remove();
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
  for (const parent of new Set(Object.values(support.parents))) {
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

/** One sandbox's group(s) (a terminal's, a file helper's, a Git call's): a memory limit and a process limit, and the files that join them. */
export class SandboxCgroup {
  private removed = false;

  private constructor(
    /** v1: one folder per controller; v2: the one group. */
    private readonly folders: { memory: string; pids: string; cpu: string | null },
    private readonly processes: number,
  ) {}

  static create(support: CgroupSupport, name: string, limits: TerminalLimits): SandboxCgroup {
    const folderName = `${GROUP_PREFIX}${name}`;
    const { memory, pids, cpu } = support.parents;
    const memoryFolder = join(memory, folderName);
    const pidsFolder = join(pids, folderName);
    const group = new SandboxCgroup({ memory: memoryFolder, pids: pidsFolder, cpu: null }, limits.processes);
    try {
      for (const folder of new Set([memoryFolder, pidsFolder])) mkdirSync(folder);
      const bytes = String(limits.memoryBytes);
      const processes = String(limits.processes);
      if (support.version === 1) {
        writeFileSync(join(memoryFolder, 'memory.limit_in_bytes'), bytes);
        // Without it a sandbox could push its pages out to swap and grow past the limit.
        const withSwap = join(memoryFolder, 'memory.memsw.limit_in_bytes');
        if (existsSync(withSwap)) writeFileSync(withSwap, bytes);
      } else {
        writeFileSync(join(memoryFolder, 'memory.max'), bytes);
        const swap = join(memoryFolder, 'memory.swap.max');
        if (existsSync(swap)) writeFileSync(swap, '0');
      }
      writeFileSync(join(pidsFolder, 'pids.max'), processes);
    } catch (error) {
      void group.remove();
      throw error;
    }
    return cpu === undefined ? group : group.withCpu(join(cpu, folderName), support.version);
  }

  /** The processor weight is a nicety: without it the sandbox works, sharing the processor evenly. */
  private withCpu(folder: string, version: 1 | 2): SandboxCgroup {
    const own = folder === this.folders.memory;
    try {
      if (!own) mkdirSync(folder);
      writeFileSync(join(folder, version === 1 ? 'cpu.shares' : 'cpu.weight'), String(version === 1 ? CPU_SHARES : CPU_WEIGHT));
      return new SandboxCgroup({ ...this.folders, cpu: folder }, this.processes);
    } catch {
      try {
        if (!own) rmdirSync(folder);
      } catch {
        // Never made.
      }
      return this;
    }
  }

  private allFolders(): string[] {
    return [...new Set([this.folders.memory, this.folders.pids, ...(this.folders.cpu === null ? [] : [this.folders.cpu])])];
  }

  /** The `cgroup.procs` files a process writes its pid into to join (before it starts the sandbox). */
  procsFiles(): string[] {
    return this.allFolders().map((folder) => join(folder, 'cgroup.procs'));
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
   * ones linger a moment), so it is tried again for a few seconds. Resolves when it is gone or
   * given up on (the next start removes what is left, see removeEmptyGroups).
   */
  remove(): Promise<void> {
    if (this.removed) return Promise.resolve();
    this.removed = true;
    let folders = this.allFolders();
    return new Promise((resolve) => {
      const attempt = (left: number) => {
        folders = folders.filter((folder) => {
          try {
            rmdirSync(folder);
            return false;
          } catch (error) {
            return (error as NodeJS.ErrnoException).code !== 'ENOENT';
          }
        });
        if (folders.length === 0 || left === 0) {
          resolve();
          return;
        }
        this.killAll();
        setTimeout(() => {
          attempt(left - 1);
        }, 100);
      };
      attempt(40);
    });
  }
}
