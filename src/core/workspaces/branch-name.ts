/** Longer names are refused before Git sees them; Git's own limit is the file system's. */
export const MAX_BRANCH_NAME_LENGTH = 255;

// Characters `git check-ref-format` refuses anywhere: ASCII control characters and DEL, space,
// and ~ ^ : ? * [ \ (range syntax, globs and Windows path separators).
// eslint-disable-next-line no-control-regex
const forbiddenCharacter = /[\u0000-\u001f\u007f ~^:?*[\\]/;

/**
 * Why `name` is not a valid local branch name, or null when it is. Follows the rules of
 * `git check-ref-format --branch`, and refuses "HEAD" as `git branch` does. Checked before any Git
 * call, so a name can never be read as an option (`-f`, `--orphan`) or a range (`a..b`).
 */
export function branchNameProblem(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_BRANCH_NAME_LENGTH) return `must be at most ${MAX_BRANCH_NAME_LENGTH} characters`;
  if (name.startsWith('-')) return 'must not start with "-"';
  if (name === '@' || name === 'HEAD') return `must not be "${name}"`;
  if (forbiddenCharacter.test(name)) return 'must not contain control characters, spaces or any of ~ ^ : ? * [ \\';
  if (name.includes('..')) return 'must not contain ".."';
  if (name.includes('@{')) return 'must not contain "@{"';
  if (name.startsWith('/') || name.endsWith('/')) return 'must not start or end with "/"';
  if (name.includes('//')) return 'must not contain "//"';
  if (name.endsWith('.')) return 'must not end with "."';
  for (const component of name.split('/')) {
    if (component.startsWith('.')) return 'no part between slashes may start with "."';
    if (component.endsWith('.lock')) return 'no part between slashes may end with ".lock"';
  }
  return null;
}

export function isValidBranchName(name: string): boolean {
  return branchNameProblem(name) === null;
}
