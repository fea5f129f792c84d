import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Real folders for terminal and sandbox tests. They live under /var/tmp, not /tmp: inside the
// sandbox /tmp is private, and the risk analysis treats /tmp as neither inside nor outside, so a
// test about "outside the workspaces" needs a place that is plainly outside.

export interface Folder extends Disposable {
  path: string;
  file(relativePath: string, content: string, mode?: number): string;
}

export function makeFolder(prefix = 'assistant-test-'): Folder {
  const path = realpathSync(mkdtempSync(join('/var/tmp', prefix)));
  return {
    path,
    file(relativePath, content, mode) {
      const target = join(path, relativePath);
      mkdirSync(join(target, '..'), { recursive: true });
      writeFileSync(target, content, mode === undefined ? {} : { mode });
      return target;
    },
    [Symbol.dispose]() {
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** `git init` with one commit, run with a fixed identity so no global config is needed. */
export function initRepository(path: string): void {
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd: path, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(path, 'README.md'), '# fixture\n');
  git('add', '.');
  git('commit', '-q', '-m', 'initial');
}
