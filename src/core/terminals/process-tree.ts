import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

// Linux /proc readings about a terminal's processes. They are the service's own view of the
// shell, which no command can forge (unlike anything the shell prints).

export interface ProcessStat {
  pid: number;
  comm: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Foreground process group of the controlling terminal. */
  tpgid: number;
  /** When it started (clock ticks since boot): with the pid, names one process for good. */
  startTime: number;
}

export function readProcessStat(pid: number): ProcessStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // `comm` sits in parentheses and may itself contain spaces or parentheses: split after the last ')'.
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  return {
    pid,
    comm: text.slice(text.indexOf('(') + 1, close),
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
    tpgid: Number(fields[5]),
    startTime: Number(fields[19]),
  };
}

/** A process's children (its main thread's), or none once it has ended. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((value) => value !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * The first process named `comm` in the tree under `root` (root included), breadth first. Under
 * bubblewrap the shell sits two levels down (bwrap → the namespace's init → bash).
 */
export function findDescendant(root: number, comm: string, maxDepth = 4): number | null {
  let level = [root];
  for (let depth = 0; depth <= maxDepth && level.length > 0; depth++) {
    for (const pid of level) if (readProcessStat(pid)?.comm === comm) return pid;
    level = level.flatMap(childrenOf);
  }
  return null;
}

/** A process's command line (arguments joined by spaces), or null once it has ended. */
export function commandLineOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').replaceAll('\0', ' ');
  } catch {
    return null;
  }
}

/** The file a process runs, as the kernel recorded it at exec (null once it has ended). */
export function executableOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '');
  } catch {
    return null;
  }
}

/** A process's arguments, or null once it has ended. */
export function argumentsOf(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0$/, '').split('\0');
  } catch {
    return null;
  }
}

/** The real current directory of a process, or null when it cannot be read (it has ended). */
export function currentDirectoryOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

/** Every process of a session: job control gives each job its own group, but all share the session. */
export function sessionMembers(session: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    if (readProcessStat(Number(entry))?.session === session) members.push(Number(entry));
  }
  return members;
}

/** SIGKILL to every process of a session; those already gone are skipped. */
export function killSession(session: number): void {
  for (const pid of sessionMembers(session)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Ended between the scan and the signal.
    }
  }
}

/** The PID namespace a process lives in (`pid:[inode]`), or null once it has ended. */
export function pidNamespaceOf(pid: number | 'self'): string | null {
  try {
    return readlinkSync(`/proc/${String(pid)}/ns/pid`);
  } catch {
    return null;
  }
}

/**
 * The inode of the TCP socket whose own port is `localPort` and whose peer's is `remotePort`, as
 * this network namespace lists them (/proc/net/tcp and tcp6), or null.
 */
export function tcpSocketInode(localPort: number, remotePort: number): string | null {
  const wanted = `:${localPort.toString(16).toUpperCase().padStart(4, '0')}`;
  const peer = `:${remotePort.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(wanted) && fields[2]?.endsWith(peer)) return fields[9] ?? null;
    }
  }
  return null;
}

/** Whether one of the processes chosen by `member` holds the socket with this inode. */
export function socketHeldBy(inode: string, member: (pid: number) => boolean): boolean {
  const target = `socket:[${inode}]`;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || !member(Number(entry))) continue;
    let descriptors: string[];
    try {
      descriptors = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const descriptor of descriptors) {
      try {
        if (readlinkSync(`/proc/${entry}/fd/${descriptor}`) === target) return true;
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return false;
}
