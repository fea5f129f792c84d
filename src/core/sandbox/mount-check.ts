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
  // The last mount on a point is the one in effect.
  const options = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const point = fields[4];
    const flags = fields[5];
    if (point !== undefined && flags !== undefined) options.set(unescape(point), flags.split(','));
  }
  for (const { target, readOnly, device, inode } of expected) {
    const flags = options.get(target);
    if (flags === undefined) return `${target} is not mounted where it should be`;
    if (readOnly && !flags.includes('ro')) return `${target} is not read-only`;
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
