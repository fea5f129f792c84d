import { lstatSync, readdirSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { isPathInside } from '../paths/path-inside.js';

// What every confined process sees of the machine (CONTRACT §11): the programs and libraries, and
// /etc, read-only, and nothing else of the host. Building the root from these few folders instead
// of binding `/` read-only is what keeps the rest of the host out of reach rather than merely
// unwritable: the host's Unix sockets (a read-only mount does not stop a connect()), the service's
// own folder and database, other users' homes, /var/lib, /srv, /mnt.

/** Top-level folders of the system view: programs and libraries, then their configuration. */
const PROGRAM_FOLDERS = ['usr', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];
const SYSTEM_FOLDERS = [...PROGRAM_FOLDERS, 'etc'];

/** /etc is read recursively once to find what the system keeps from ordinary users; bounded. */
const MAX_ETC_ENTRIES = 20_000;
const MAX_ETC_DEPTH = 8;

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/**
 * Entries of /etc that other users may not read (`/etc/shadow`, `/etc/ssl/private`, SSH host keys,
 * a Redis config with its password, pg_hba.conf). Commands run as uid 0 without capabilities, so
 * owner permissions alone would let them read such files: they are masked instead. A private
 * folder is masked whole and not descended into.
 */
function privateEntries(root: string): { files: string[]; folders: string[] } {
  const files: string[] = [];
  const folders: string[] = [];
  let seen = 0;
  const walk = (folder: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return;
    }
    for (const name of names) {
      if (++seen > MAX_ETC_ENTRIES) return;
      const path = join(folder, name);
      const info = lstatOrNull(path);
      if (info === null || info.isSymbolicLink()) continue;
      const othersMayRead = (info.mode & 0o004) !== 0;
      if (info.isDirectory()) {
        if (!othersMayRead) folders.push(path);
        else if (depth < MAX_ETC_DEPTH) walk(path, depth + 1);
      } else if (info.isFile() && !othersMayRead) {
        files.push(path);
      }
    }
  };
  walk(root, 1);
  return { files, folders };
}

/** Where the running Node.js lives when it is not part of /usr (nvm, a tarball under /opt). */
function nodePrefix(): string | null {
  try {
    const prefix = dirname(dirname(realpathSync(process.execPath)));
    return SYSTEM_FOLDERS.some((name) => isPathInside(prefix, `/${name}`)) ? null : prefix;
  } catch {
    return null;
  }
}

const cached = new Map<boolean, string[]>();

/**
 * bubblewrap arguments that lay out the read-only system in an empty root: merged-/usr links are
 * recreated as links, the other folders bound read-only, /etc's private entries masked. Without
 * `etc`, only programs and libraries: what a process working on one workspace needs (the file
 * helper, Git), so a race in it can reach no configuration of the host's. Computed once per
 * process: the system does not change under a running service.
 */
export function systemViewArguments({ etc }: { etc: boolean }): string[] {
  const known = cached.get(etc);
  if (known) return known;
  const args: string[] = [];
  for (const name of etc ? SYSTEM_FOLDERS : PROGRAM_FOLDERS) {
    const path = `/${name}`;
    const info = lstatOrNull(path);
    if (info === null) continue;
    if (info.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else if (info.isDirectory()) args.push('--ro-bind', path, path);
  }
  if (etc) {
    const { files, folders } = privateEntries('/etc');
    for (const folder of folders) args.push('--tmpfs', folder, '--remount-ro', folder);
    for (const file of files) args.push('--ro-bind', '/dev/null', file);
  }
  cached.set(etc, args);
  return args;
}

/**
 * The Node.js installation, read-only, when it lives outside the system view (in the service
 * user's home with nvm, say): the file helper runs on it. Placed after any mask of that home.
 */
export function nodeRuntimeArguments(): string[] {
  const prefix = nodePrefix();
  return prefix === null ? [] : ['--ro-bind', prefix, prefix];
}
