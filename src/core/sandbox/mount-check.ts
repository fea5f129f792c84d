import { lstatSync, readFileSync } from 'node:fs';
import type { ExpectedMount } from './pinned-binds.js';

/** `\040` and the other octal escapes mountinfo uses for spaces, tabs, newlines and backslashes. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * Checks, from the host, that a started sandbox shows its pinned binds where they were meant to
 * go (CONTRACT §11). bubblewrap mounts each pinned descriptor onto a path inside the sandbox, and
 * a workspace is writable by others while it starts: a folder swapped for a link at that moment
 * would carry a mount (a repository's read-only config) somewhere else. The kernel settles it:
 * through /proc/<pid>/root the path is looked up as the sandbox sees it, and must be the very
 * folder or file that was pinned, and read-only where it should be. Returns what is wrong, or null.
 */
export function misplacedMounts(pid: number, expected: readonly ExpectedMount[]): string | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/mountinfo`, 'utf8');
  } catch {
    return 'the sandbox ended before its mounts could be checked';
  }
  const flagProblem = mountFlagProblem(text, expected);
  if (flagProblem !== null) return flagProblem;
  for (const { target, device, inode } of expected) {
    let seen;
    try {
      seen = lstatSync(`/proc/${pid}/root${target}`);
    } catch {
      return `${target} cannot be seen inside the sandbox`;
    }
    if (seen.dev !== device || seen.ino !== inode) return `${target} inside the sandbox is not what was pinned`;
  }
  return null;
}

interface MountLine {
  id: string;
  parent: string;
  point: string;
  flags: string[];
}

/**
 * From a mountinfo text: each target is the mount in effect at its path, read-only where it
 * should be. The mount in effect is found as the kernel finds it, walking the path from the root
 * through the mount tree (each mount names its parent): a mount made later on a folder above a
 * target hides the target's own mount behind the folder's (a writable folder around a read-only
 * file would show the same file, writable), and a second mount on the same point hides the first.
 */
export function mountFlagProblem(mountinfo: string, expected: readonly ExpectedMount[]): string | null {
  const mounts: MountLine[] = [];
  for (const line of mountinfo.split('\n')) {
    const [id, parent, , , point, flags] = line.split(' ');
    if (id !== undefined && parent !== undefined && point !== undefined && flags !== undefined) {
      mounts.push({ id, parent, point: unescape(point), flags: flags.split(',') });
    }
  }
  for (const { target, readOnly } of expected) {
    const effective = mountInEffect(mounts, target);
    if (effective?.point !== target) {
      const own = mounts.some((mount) => mount.point === target);
      return own ? `${target} is covered by a later mount of ${effective?.point ?? 'an unknown folder'}` : `${target} is not mounted where it should be`;
    }
    if (readOnly && !effective.flags.includes('ro')) return `${target} is not read-only`;
  }
  return null;
}

/** The mount a lookup of `path` ends in: from the namespace's root, down each folder of the path. */
function mountInEffect(mounts: readonly MountLine[], path: string): MountLine | undefined {
  const ids = new Set(mounts.map((mount) => mount.id));
  let current = mounts.find((mount) => mount.point === '/' && !ids.has(mount.parent));
  if (current === undefined) return undefined;
  const stackOn = (point: string, base: MountLine): MountLine => {
    let top = base;
    for (;;) {
      const next = mounts.find((mount) => mount.point === point && mount.parent === top.id);
      if (next === undefined) return top;
      top = next;
    }
  };
  current = stackOn('/', current);
  const parts = path.split('/').filter((part) => part !== '');
  for (let index = 1; index <= parts.length; index += 1) {
    current = stackOn(`/${parts.slice(0, index).join('/')}`, current);
  }
  return current;
}
