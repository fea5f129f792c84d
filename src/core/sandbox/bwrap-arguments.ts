import { existsSync, lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { isPathInside } from '../paths/path-inside.js';

// How a terminal's shell is confined (CONTRACT §4): the whole file system read-only, the
// workspaces writable, a private /tmp and home, every capability dropped, its own PID namespace,
// gone with its parent. The PTY is allocated by the service for this one process tree, so job
// control, Ctrl-C and resize work; `--new-session` is deliberately absent because it would cut
// the shell off from that PTY as its controlling terminal.

export interface SandboxLayout {
  /** Directories made writable: every registered workspace, and more when restriction is off. */
  writable: readonly string[];
  /** The service user's home: always replaced by an empty private one (~/.ssh, tokens unseen). */
  serviceHome: string;
  /** The shell's HOME; its `.gitconfig` comes from the service user's, read-only, when they match. */
  home: string;
  /** Service-owned paths no command may read (the SQLite folder, the .env file). */
  hidden: readonly string[];
  network: boolean;
  workingDirectory: string;
}

/** The namespace and privilege flags, shared by the start-up probe and every shell. */
export function isolationArguments({ network }: { network: boolean }): string[] {
  return [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    // A PID namespace: the service's own processes (and their /proc/<pid>/environ, which holds its
    // API keys) are invisible, and ending the namespace's first process ends every process in it.
    '--unshare-pid',
    '--unshare-ipc',
    ...(network ? [] : ['--unshare-net']),
    // As root, bubblewrap would otherwise keep every capability and `/` could be remounted writable.
    '--cap-drop', 'ALL',
    '--die-with-parent',
  ];
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * /run holds the host's sockets (Docker's, D-Bus, the databases'), which a read-only mount does
 * not stop anyone from connecting to; it is replaced by an empty one. Where /etc/resolv.conf
 * points into it (systemd-resolved), that one file is brought back so names still resolve.
 */
function runMask(): string[] {
  const args = ['--tmpfs', '/run'];
  try {
    const resolver = realpathSync('/etc/resolv.conf');
    if (isPathInside(resolver, '/run')) args.push('--ro-bind', resolver, resolver);
  } catch {
    // No resolver file: nothing to keep.
  }
  return args;
}

/**
 * A repository's `.git` is pinned as a mount point, so it cannot be renamed and replaced by one
 * with a config of the command's choosing, and its hooks and config are read-only, so nothing a
 * command plants there runs for the next user. A `.git` that is a file (a worktree) or a hooks
 * entry that is not a plain folder is left alone rather than failing the terminal.
 */
function gitProtection(root: string): string[] {
  const gitDir = join(root, '.git');
  if (!isDirectory(gitDir)) return [];
  const binds = ['--bind', gitDir, gitDir];
  const hooks = join(gitDir, 'hooks');
  try {
    // A missing hooks folder could be created from inside; an empty one made now is bound read-only.
    if (!existsSync(hooks)) mkdirSync(hooks);
  } catch {
    // Another process made it meanwhile, or the folder is not ours to change: checked below.
  }
  if (isDirectory(hooks)) binds.push('--ro-bind', hooks, hooks);
  const config = join(gitDir, 'config');
  if (lstatSafe(config)?.isFile() === true) binds.push('--ro-bind', config, config);
  return binds;
}

function lstatSafe(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** bubblewrap's arguments up to and including `--`; the shell command follows. */
export function bwrapArguments(layout: SandboxLayout): string[] {
  const args = [...isolationArguments({ network: layout.network }), ...runMask()];
  if (layout.serviceHome !== '/' && isDirectory(layout.serviceHome)) {
    args.push('--tmpfs', layout.serviceHome);
    const gitconfig = join(layout.serviceHome, '.gitconfig');
    // The user's Git identity stays visible (read-only), so commits inside work.
    if (layout.home === layout.serviceHome && lstatSafe(gitconfig)?.isFile() === true) args.push('--ro-bind', gitconfig, gitconfig);
  }
  // Workspace binds follow the home mask, so a workspace under home stays reachable.
  const writable = layout.writable.filter(isDirectory);
  for (const path of writable) args.push('--bind', path, path);
  for (const path of writable) args.push(...gitProtection(path));
  // The service's own files are masked last: even a workspace registered around them (the
  // service's own folder, say) must not expose the database or .env to commands.
  for (const path of layout.hidden) {
    if (isDirectory(path)) args.push('--tmpfs', path);
    else if (existsSync(path)) args.push('--ro-bind', '/dev/null', path);
  }
  args.push('--chdir', layout.workingDirectory, '--');
  return args;
}
