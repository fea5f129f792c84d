import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

// How a terminal's shell is confined (CONTRACT §4): the whole file system read-only, the
// workspaces writable, a private /tmp and home, every capability dropped, its own PID namespace,
// gone with its parent. The PTY is allocated by the service for this one process tree, so job
// control, Ctrl-C and resize work; `--new-session` is deliberately absent because it would cut
// the shell off from that PTY as its controlling terminal.

export interface SandboxLayout {
  /** Directories made writable: every registered workspace, and more when restriction is off. */
  writable: readonly string[];
  /** The shell's HOME: replaced by an empty private directory so ~/.ssh and tokens stay unseen. */
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
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Read-only binds over a repository's hooks and config, so no command can plant a hook the service's own Git calls or a later user would run. */
function gitProtection(root: string): string[] {
  const gitDir = join(root, '.git');
  if (!isDirectory(gitDir)) return [];
  const hooks = join(gitDir, 'hooks');
  // A missing hooks folder could be created from inside; an empty one made now is bound read-only.
  if (!existsSync(hooks)) mkdirSync(hooks);
  const binds = ['--ro-bind', hooks, hooks];
  const config = join(gitDir, 'config');
  if (existsSync(config)) binds.push('--ro-bind', config, config);
  return binds;
}

/** bubblewrap's arguments up to and including `--`; the shell command follows. */
export function bwrapArguments(layout: SandboxLayout): string[] {
  const args = isolationArguments({ network: layout.network });
  if (layout.home !== '/' && isDirectory(layout.home)) {
    args.push('--tmpfs', layout.home);
    const gitconfig = join(layout.home, '.gitconfig');
    // The user's Git identity stays visible (read-only), so commits inside work.
    if (existsSync(gitconfig)) args.push('--ro-bind', gitconfig, gitconfig);
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
