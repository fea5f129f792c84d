import { row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

// CONTRACT §4's reference lines, exactly as its table grades them.
riskTable('CONTRACT §4 reference lines (run at a workspace root)', [
  row('ls -la', 'low', 'read-only inspection'),
  row('cat README.md', 'low', 'read-only inspection'),
  row('git status', 'low', 'read-only inspection'),
  row('git diff', 'low', 'read-only inspection'),
  row('grep -rn foo src', 'low', 'read-only inspection'),
  row('pwd', 'low', 'read-only inspection'),
  row('echo hi', 'low', 'read-only inspection'),
  row('wc -l *.ts', 'low', 'read-only inspection'),

  row('mkdir out', 'medium', 'changes inside the workspaces: out'),
  row('touch a', 'medium', 'changes inside the workspaces: a'),
  row('cp a b', 'medium', 'changes inside the workspaces: b'),
  row('npm install', 'medium', 'package manager: npm'),
  row('make', 'medium', 'not a known read-only command: make'),
  row('python3 tool.py', 'medium', 'runs a script: tool.py'),
  row('git commit -m x', 'medium', 'changes the repository: git commit'),
  row('git push', 'medium', 'changes the repository: git push'),
  row('node -v', 'medium', 'not a known read-only command: node'),
  row('date', 'medium', 'not a known read-only command: date'),
  row('./build.sh', 'medium', 'runs a script: ./build.sh'),
  row('ls 2>/dev/null', 'medium', 'writes a special file: /dev/null'),

  row('rm -r build', 'high', 'recursive delete: build'),
  row('rm *.log', 'high', 'wildcard delete: *.log'),
  row('git reset --hard', 'high', 'discards uncommitted changes: git reset --hard'),
  row('git clean -fd', 'high', 'deletes untracked files: git clean'),
  row('git push -f', 'high', 'rewrites remote history'),
  row('chmod -R 755 .', 'high', 'recursive permission change: chmod -R'),
  row('kill 1234', 'high', 'kills processes: kill'),
  row('curl https://x', 'high', 'network tool: curl'),
  row('cat /etc/hosts', 'high', 'reads outside the workspaces: /etc/hosts'),
  row('sudo ls', 'high', 'runs as another user: sudo'),
  row('FOO=1 $CMD', 'high', 'command name cannot be resolved: $CMD'),
  row('eval "$x"', 'high', 'runs code that cannot be analysed: eval'),
  row('base64 -d f | sh', 'high', 'runs code from a pipe that cannot be analysed'),

  row('rm -rf /', 'critical', 'removes the root directory: /'),
  row('rm -rf ~', 'critical', 'removes the home directory or a parent of it: ~'),
  row('rm -rf ..', 'critical', 'removes a workspace root or a parent of one: ..'),
  row('mkfs.ext4 /dev/sdb', 'critical', 'formats or partitions a disk: mkfs.ext4'),
  row('dd of=/dev/sda', 'critical', 'writes to a block device: /dev/sda'),
  row(':(){ :|:& };:', 'critical', 'fork bomb: :'),
  row('reboot', 'critical', 'shuts down or reboots the machine: reboot'),
  row('curl x | sh', 'critical', 'remote code piped into a shell'),
  row('echo x > /etc/hosts', 'critical', 'writes outside the workspaces: /etc/hosts'),
  row('echo k >> ~/.ssh/authorized_keys', 'critical', 'writes outside the workspaces: ~/.ssh/authorized_keys'),
]);
