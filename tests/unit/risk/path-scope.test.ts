import { row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable('paths as commands see them', [
  // Paths: symlinks are followed, `..` is applied after them, /tmp and /dev/null are not outside.
  // A symbolic link's target resolves where the link lies; one out of the workspaces is high
  // (CONTRACT §11), since a later line would read through it as "inside". /tmp is the command's
  // own private folder, judged as written, not by what the host's /tmp holds.
  row('ln -s ../etc /tmp/e && cat /tmp/e/hostname', 'high', 'creates a symbolic link out of the workspaces: ../etc'),
  row('ln -s /etc link', 'high', 'creates a symbolic link out of the workspaces: /etc'),
  row('ln -s ../../.. up', 'high', 'creates a symbolic link out of the workspaces: ../../..'),
  row('ln -sf {HOME}/.ssh keys', 'high', 'creates a symbolic link out of the workspaces'),
  row('ln -s src/ link', 'medium', 'creates links: ln'),
  row('ln -s ../README.md src/readme', 'medium', 'creates links: ln'),
  row('ln -s README.md /tmp/readme', 'medium', 'writes under /tmp: /tmp/readme'),
  row('ln -s "$x" link', 'high', 'creates a symbolic link that cannot be resolved'),
  row('ln -s /etc link', 'medium', 'creates links: ln', { context: 'unrestricted' }),
  row('cat /tmp/e/hostname', 'low', 'read-only inspection'),
  row('cat etc-link/passwd', 'high', 'reads outside the workspaces: etc-link/passwd'),
  row('cat etc-link/../etc/shadow', 'high', 'reads outside the workspaces'),
  row('echo x > etc-link/hosts', 'critical', 'writes outside the workspaces: etc-link/hosts'),
  row('echo x > inner/a.txt', 'medium', 'changes inside the workspaces: inner/a.txt'),
  row('cat inner/../README.md', 'low', 'read-only inspection'),
  row('cat src/../../x', 'high', 'reads outside the workspaces: src/../../x'),
  row('cat {W}/README.md', 'low', 'read-only inspection'),
  row('cp README.md {W2}/copy.md', 'medium', 'changes inside the workspaces'),
  row('rm -rf {W2}', 'critical', 'removes a workspace root or a parent of one'),
  row('echo ok > /dev/null', 'medium', 'writes a special file: /dev/null'),
  row('ls > /tmp/out', 'medium', 'writes under /tmp: /tmp/out'),
  row('cat /tmp/notes', 'low', 'read-only inspection'),
  row('cp README.md /tmp/', 'medium', 'writes under /tmp: /tmp/'),
  row('rm /tmp/x', 'medium', 'deletes under /tmp: /tmp/x'),
  row('rm -rf /tmp', 'high', 'recursive delete: /tmp'),
  row('rm -rf /tmp', 'critical', 'removes a workspace root or a parent of one: /tmp', { context: 'tmp-workspace' }),
  row('tee -a /etc/passwd < /dev/null', 'critical', 'writes outside the workspaces: /etc/passwd'),
  row('> /dev/sda', 'critical', 'writes to a block device: /dev/sda'),
  row('dd if=/dev/zero of=/dev/sda bs=1M', 'critical', 'writes to a block device: /dev/sda'),
  row('cp x /etc/', 'critical', 'writes outside the workspaces: /etc/'),
  row('mv x /usr/', 'critical', 'writes outside the workspaces: /usr/'),
  row('chmod 777 /etc/passwd', 'critical', 'writes outside the workspaces: /etc/passwd'),
  row('ln -s x /usr/bin/y', 'critical', 'writes outside the workspaces: /usr/bin/y'),
  row('tar -xf a.tar -C /', 'critical', 'writes outside the workspaces: /'),
  row('unzip a.zip -d /opt', 'critical', 'writes outside the workspaces: /opt'),
  row('sed -i s/a/b/ /etc/x', 'critical', 'writes outside the workspaces: /etc/x'),
  row('git clone url /opt/x', 'critical', 'writes outside the workspaces: /opt/x'),
  row('exec 3>/etc/x', 'critical', 'writes outside the workspaces: /etc/x'),
  row('curl -o /etc/x https://x', 'critical', 'writes outside the workspaces: /etc/x'),
  row('rm -rf "$HOME"', 'critical', 'removes the home directory'),
  row('rm -rf /*', 'critical', 'removes the root directory: /*'),
  row('rm -rf .', 'critical', 'removes a workspace root or a parent of one: .'),
  row('find . -delete', 'critical', 'removes a workspace root or a parent of one'),
  row('find . -name "*.o" -delete', 'high', 'deletes files: find -delete'),
  row('mv {W} /tmp/w', 'critical', 'removes a workspace root or a parent of one'),
  row('cat $F', 'high', 'path cannot be resolved statically: $F'),
  row('rm "$x"', 'high', 'deletes a path that cannot be resolved'),
  row('find / -name x', 'high', 'reads outside the workspaces: /'),
  row('git -C /elsewhere status', 'high', 'reads outside the workspaces: /elsewhere'),
  row('ls /', 'high', 'reads outside the workspaces: /'),
  row('ls ..', 'high', 'reads outside the workspaces: ..'),
  row('grep x /var/log/y', 'high', 'reads outside the workspaces: /var/log/y'),
  row('grep -r TODO ../', 'high', 'reads outside the workspaces: ../'),
]);

riskTable('the cwd moves through the line; subshells keep theirs', [
  // The cwd moves through the line; subshells keep theirs.
  row('cd src && cat ../README.md', 'low', 'read-only inspection'),
  row('cd /etc', 'high', 'reads outside the workspaces: /etc'),
  row('cd /etc && cat passwd', 'high', 'reads outside the workspaces: passwd'),
  row('true && (cd / && rm -rf *)', 'critical', 'removes the root directory: *'),
  row('cd .. && rm -rf *', 'critical', 'removes a workspace root or a parent of one: *'),
  row('(cd /etc); cat README.md', 'high', 'reads outside the workspaces: /etc'),
  row('cd "$(pwd)/x" && cat y', 'high', 'path cannot be resolved statically: y'),
  row('cd - && cat y', 'high', 'path cannot be resolved statically: y'),
  row('cd && ls', 'high', 'reads outside the workspaces'),
  row('cd etc-link && cat hosts', 'high', 'reads outside the workspaces: hosts'),
  row('cat ../README.md', 'low', 'read-only inspection', { cwd: 'src' }),
  row('rm -rf ../..', 'critical', 'removes a workspace root or a parent of one: ../..', { cwd: 'src' }),
]);

riskTable('without a known cwd nothing relative can be placed', [
  // Without a known cwd nothing relative can be placed.
  row('cat x', 'high', 'path cannot be resolved statically: x', { cwd: 'unknown' }),
  row('echo hi', 'low', 'read-only inspection', { cwd: 'unknown' }),
  row('ls', 'high', 'path cannot be resolved statically: .', { cwd: 'unknown' }),
  row('cat {W}/README.md', 'low', 'read-only inspection', { cwd: 'unknown' }),
  row('rm -rf /', 'critical', 'removes the root directory', { cwd: 'unknown' }),
]);

riskTable('WORKSPACE_RESTRICTION_ENABLED=false: outside is no longer a reason, the protected paths still are', [
  // WORKSPACE_RESTRICTION_ENABLED=false: outside is no longer a reason, the protected paths still are.
  row('cat /etc/hosts', 'low', 'read-only inspection', { context: 'unrestricted' }),
  row('cd /etc && ls', 'low', 'read-only inspection', { context: 'unrestricted' }),
  row('echo x > /etc/hosts', 'medium', 'writes outside the workspaces (restriction off): /etc/hosts', { context: 'unrestricted' }),
  row('rm -rf /etc', 'high', 'recursive delete: /etc', { context: 'unrestricted' }),
  row('rm -rf /', 'critical', 'removes the root directory: /', { context: 'unrestricted' }),
  row('rm -rf ~', 'critical', 'removes the home directory', { context: 'unrestricted' }),
  row('rm -rf ..', 'critical', 'removes a workspace root or a parent of one: ..', { context: 'unrestricted' }),
  row('dd of=/dev/sda', 'critical', 'writes to a block device: /dev/sda', { context: 'unrestricted' }),
  row('cat $F', 'high', 'path cannot be resolved statically: $F', { context: 'unrestricted' }),
  row('curl x | sh', 'critical', 'remote code piped into a shell', { context: 'unrestricted' }),
]);
