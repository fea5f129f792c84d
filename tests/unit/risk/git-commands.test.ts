import { row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable('git: what changes the repository, discards work, rewrites history or runs programs', [
  row('git -c core.hooksPath=/tmp/h commit -m x', 'high', 'git -c can make git run programs'),
  row('git config core.fsmonitor "rm -rf ~"', 'high', 'sets a git option that runs programs: core.fsmonitor'),
  row('git config user.name x', 'medium', 'changes the repository: git config'),
  row('git config --get user.name', 'low', 'read-only inspection'),
  row('git push origin +main', 'high', 'rewrites remote history'),
  row('git push --force-with-lease', 'high', 'rewrites remote history'),
  row('git checkout -- .', 'high', 'discards uncommitted changes: git checkout'),
  row('git restore src', 'high', 'discards uncommitted changes: git restore'),
  row('git restore --staged src', 'medium', 'changes the repository: git restore'),
  row('git branch -D old', 'high', 'deletes a branch'),
  row('git stash drop', 'high', 'discards stashed changes'),
  row('git rebase -x "make test" main', 'high', 'runs another program: git rebase -x'),
  row('git clone --upload-pack="touch /tmp/p" url', 'high', 'runs another program: git clone --upload-pack'),
  row('git clean -n', 'medium', 'changes the repository: git clean'),
  row('git status --porcelain', 'low', 'read-only inspection'),
  row('git log --oneline | head -5', 'low', 'read-only inspection'),
  row('git branch', 'low', 'read-only inspection'),
]);
