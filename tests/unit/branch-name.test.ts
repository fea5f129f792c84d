import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { branchNameProblem, isValidBranchName, MAX_BRANCH_NAME_LENGTH } from '../../src/core/workspaces/branch-name.js';

// The checker must agree with Git's own `git check-ref-format --branch`, except where it is
// deliberately stricter ("@", which Git expands to the current branch, and over-long names).

const samples = [
  'main', 'feature/x', 'release-1.2', 'ü-branch', 'héllo', 'a@b', 'refs/heads/x', 'x_y', 'a.b', 'a/b/c',
  'a..b', '..', '../x', '-f', '--orphan', '-', 'a b', ' a', 'a\tb', 'a\u007fb', 'a\u0001b', 'x.lock', 'x/y.lock/z',
  'a/.b', '.a', 'a/', '/a', 'a//b', 'a.', 'a/b.', 'a@{1', '@{-1}', 'HEAD', 'a~1', 'a^', 'a:b', 'a?', 'a*', 'a[b', 'a\\b', '',
];

// Outside any repository: inside one, Git expands `@{-1}` to the previously checked-out branch.
const outsideRepository = mkdtempSync(join(tmpdir(), 'branch-name-'));
afterAll(() => {
  rmSync(outsideRepository, { recursive: true, force: true });
});

function gitAccepts(name: string): boolean {
  return spawnSync('git', ['check-ref-format', '--branch', name], { cwd: outsideRepository, stdio: 'ignore' }).status === 0;
}

describe('branchNameProblem', () => {
  it.each(samples)('agrees with git check-ref-format --branch on %j', (name) => {
    expect(isValidBranchName(name)).toBe(gitAccepts(name));
  });

  it('refuses "@", which Git would expand to the checked-out branch', () => {
    expect(branchNameProblem('@')).toMatch(/@/);
  });

  it('refuses names longer than the limit and accepts one at it', () => {
    expect(isValidBranchName('a'.repeat(MAX_BRANCH_NAME_LENGTH))).toBe(true);
    expect(branchNameProblem('a'.repeat(MAX_BRANCH_NAME_LENGTH + 1))).toMatch(/at most/);
  });

  it('names the rule that failed', () => {
    expect(branchNameProblem('-f')).toMatch(/start with "-"/);
    expect(branchNameProblem('a..b')).toMatch(/"\.\."/);
    expect(branchNameProblem('a b')).toMatch(/spaces/);
    expect(branchNameProblem('x.lock')).toMatch(/\.lock/);
  });
});
