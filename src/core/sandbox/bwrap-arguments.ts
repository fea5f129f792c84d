import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { isPathInside } from '../paths/path-inside.js';
import { pinnedBindArguments } from './launch-prefix.js';
import type { PinnedBinds } from './pinned-binds.js';
import { nodeRuntimeArguments, systemViewArguments } from './system-view.js';

// How every confined process is started (CONTRACT §11): terminal shells, the model's file
// helper and the service's own Git calls share the namespaces, the privilege rules and the
// read-only system built here, and differ only in what of the workspaces they see.

/** How commands reach the network (SANDBOX_NETWORK). */
export type NetworkMode = 'proxy' | 'none' | 'host';

export interface Isolation {
  network: NetworkMode;
  /**
   * A user namespace of its own, with further ones disabled inside (`--disable-userns`). As root
   * the sandbox's uid 0 is still the host's uid 0, so this alone grants nothing; what it buys is
   * that no command can make namespaces of its own. The start-up probe decides whether the host
   * allows it.
   */
  userNamespace: boolean;
}

/** Namespaces and privilege: the same for every confined process. */
export function isolationArguments({ network, userNamespace }: Isolation): string[] {
  return [
    ...(userNamespace ? ['--unshare-user', '--disable-userns'] : []),
    // A PID namespace: the service's processes (and their /proc/<pid>/environ, which holds its
    // API keys) are invisible and cannot be signalled or traced; ending the namespace's first
    // process ends every process in it.
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    // With `proxy` the sandbox's only way out is the proxy socket bound in; abstract Unix sockets
    // belong to the network namespace too, so the host's are out of reach as well.
    ...(network === 'host' ? [] : ['--unshare-net']),
    // As root, bubblewrap would otherwise keep every capability and `/` could be remounted writable.
    '--cap-drop',
    'ALL',
    '--die-with-parent',
  ];
}

/**
 * A fresh /proc for the PID namespace, with the files that change the whole host made
 * read-only: uid 0 inside is the host's uid 0, and procfs grants writes to kernel settings by uid
 * alone (`/proc/sys`), as it does for the magic SysRq key and IRQ routing. Files that leak kernel
 * addresses or other tenants' keys are masked.
 */
export function procArguments(): string[] {
  const args = ['--proc', '/proc'];
  for (const path of ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs']) args.push('--ro-bind-try', path, path);
  for (const path of ['/proc/kcore', '/proc/keys', '/proc/timer_list', '/proc/sched_debug', '/proc/latency_stats']) {
    if (existsSync(path)) args.push('--ro-bind', '/dev/null', path);
  }
  for (const path of ['/proc/acpi', '/proc/scsi']) {
    if (existsSync(path)) args.push('--tmpfs', path, '--remount-ro', path);
  }
  return args;
}

/** `/dev` with the usual devices only, its shared-memory folder sized like /tmp. */
function deviceArguments(tmpBytes: number): string[] {
  return ['--dev', '/dev', '--size', String(tmpBytes), '--tmpfs', '/dev/shm'];
}

/**
 * Where /etc/resolv.conf points into /run (systemd-resolved), that one file is brought back into
 * the sandbox's empty /run: only needed when commands share the host's network.
 */
function resolverArguments(network: NetworkMode): string[] {
  if (network !== 'host') return [];
  try {
    const resolver = realpathSync('/etc/resolv.conf');
    return isPathInside(resolver, '/run') ? ['--ro-bind', resolver, resolver] : [];
  } catch {
    return [];
  }
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A folder of the service bound into the sandbox (the command pipe's, the proxy socket's). */
export interface RuntimeFolder {
  source: string;
  /** Where it appears inside: under /run, which is the sandbox's own. */
  target: string;
}

export interface TerminalLayout {
  isolation: Isolation;
  /** SANDBOX_TMP_MB in bytes: the size of the private /tmp, /var/tmp, /dev/shm and home. */
  tmpBytes: number;
  /**
   * The workspaces (and, with restriction off, the terminal's own folder), opened by the service
   * and bound by descriptor with their Git metadata protected: see pinned-binds.ts.
   */
  pins: PinnedBinds;
  /**
   * Made as empty folders: a start folder outside the workspaces that may not be opened (with
   * restriction off, `/var` or the service's own folder), so the shell can start there and find
   * nothing of the host's.
   */
  emptyFolders: readonly string[];
  /** The service user's home: replaced by an empty private one (~/.ssh, tokens unseen). */
  serviceHome: string;
  /** The shell's HOME; its `.gitconfig` comes from the service user's, read-only, when they match. */
  home: string;
  /** Service-owned paths no command may read (the SQLite folder, the .env file) should a bound folder hold them. */
  hidden: readonly string[];
  runtime: readonly RuntimeFolder[];
  workingDirectory: string;
}

/**
 * A private home: the service user's own is never visible (only its Git identity, so commits
 * work), and whatever commands leave in it goes with the terminal.
 */
function homeArguments(layout: TerminalLayout): string[] {
  const { serviceHome, home, tmpBytes } = layout;
  if (serviceHome === '/' || serviceHome === '') return [];
  const args = ['--size', String(tmpBytes), '--tmpfs', serviceHome];
  const gitconfig = join(serviceHome, '.gitconfig');
  let isFile = false;
  try {
    isFile = lstatSync(gitconfig).isFile();
  } catch {
    // No identity to carry over.
  }
  if (home === serviceHome && isFile) args.push('--ro-bind', gitconfig, gitconfig);
  return args;
}

/** bubblewrap's arguments for a terminal's shell, up to and including `--`. */
export function terminalSandboxArguments(layout: TerminalLayout): string[] {
  const { isolation, tmpBytes } = layout;
  const args = [
    ...isolationArguments(isolation),
    ...deviceArguments(tmpBytes),
    ...procArguments(),
    ...systemViewArguments({ etc: true }),
    '--ro-bind',
    '/sys',
    '/sys',
    // The host's cgroup tree names every terminal (their ids) and every service process.
    '--tmpfs',
    '/sys/fs/cgroup',
    '--remount-ro',
    '/sys/fs/cgroup',
    '--size',
    String(tmpBytes),
    '--tmpfs',
    '/tmp',
    '--size',
    String(tmpBytes),
    '--tmpfs',
    '/var/tmp',
    '--size',
    String(1024 * 1024),
    '--tmpfs',
    '/run',
    ...resolverArguments(isolation.network),
    ...homeArguments(layout),
    ...nodeRuntimeArguments(),
  ];
  // Workspaces follow the home mask, so a workspace under home stays reachable.
  args.push(...pinnedBindArguments(layout.pins));
  for (const path of layout.emptyFolders) args.push('--dir', path);
  // The service's own files are masked last: even a folder bound around them must not expose the
  // database or .env to commands.
  const writable = layout.pins.binds.filter((bind) => bind.writable).map((bind) => bind.target);
  for (const path of layout.hidden) {
    if (!writable.some((folder) => isPathInside(path, folder))) continue;
    if (isDirectory(path)) args.push('--tmpfs', path, '--remount-ro', path);
    else if (existsSync(path)) args.push('--ro-bind', '/dev/null', path);
  }
  for (const folder of layout.runtime) args.push('--ro-bind', folder.source, folder.target);
  // Nothing may be created beside the bound folders: the root itself is an empty tmpfs.
  args.push('--remount-ro', '/', '--chdir', layout.workingDirectory, '--');
  return args;
}

/**
 * bubblewrap's arguments for a process that works on one workspace alone (the file helper, the
 * service's Git calls): no network, the programs and libraries read-only, that workspace (pinned
 * by descriptor, writable only when asked, with its Git metadata protected) and nothing else of
 * the host, not even /etc: whatever a link swapped in mid-call leads to, there is nothing else to
 * read or write. Up to and including `--`.
 */
export function workspaceSandboxArguments(options: {
  userNamespace: boolean;
  workspace: string;
  pins: PinnedBinds;
  tmpBytes: number;
  /** Extra folders of the service's, read-only (the helper's script). */
  runtime?: readonly RuntimeFolder[];
}): string[] {
  const { workspace, tmpBytes } = options;
  const args = [
    ...isolationArguments({ network: 'none', userNamespace: options.userNamespace }),
    '--new-session',
    ...deviceArguments(tmpBytes),
    ...procArguments(),
    ...systemViewArguments({ etc: false }),
    '--size',
    String(tmpBytes),
    '--tmpfs',
    '/tmp',
    ...nodeRuntimeArguments(),
    ...pinnedBindArguments(options.pins),
  ];
  for (const folder of options.runtime ?? []) args.push('--ro-bind', folder.source, folder.target);
  args.push('--remount-ro', '/', '--chdir', workspace, '--');
  return args;
}
