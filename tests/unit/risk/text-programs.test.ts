import { row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable('text and data tools, and the read-only forms of their commands', [
  row('grep -rn TODO src | wc -l', 'low', 'read-only inspection'),
  row("find . -name '*.ts'", 'low', 'read-only inspection'),
  row('ls 2>&1', 'low', 'read-only inspection'),
  row('ls -la >&2', 'low', 'read-only inspection'),
  row('cat package.json | jq .scripts', 'low', 'read-only inspection'),
  row("sed -n '1,5p' README.md", 'low', 'read-only inspection'),
  row("awk '{print $1}' README.md", 'low', 'read-only inspection'),
  row('awk \'BEGIN{system("rm -rf ~")}\'', 'high', 'awk/sed program runs commands: awk'),
  row('awk \'{print | "sh"}\' README.md', 'high', 'awk/sed program runs commands: awk'),
  row('awk \'{print > "/etc/x"}\' README.md', 'critical', 'writes outside the workspaces: /etc/x'),
  row("sed 's/a/b/e' README.md", 'high', 'awk/sed program runs commands: sed'),
  row("sed '1e id' README.md", 'high', 'awk/sed program runs commands: sed'),
  row("sed 'w /etc/x' README.md", 'critical', 'writes outside the workspaces: /etc/x'),
  row("sed -i 's/a/b/' README.md", 'medium', 'changes inside the workspaces: README.md'),
  row('rg --pre ./x foo', 'high', 'runs another program: rg --pre'),
  row('tar --to-command=sh -xf a.tar', 'high', 'runs another program: tar --to-command'),
  row('tar xzf a.tgz', 'medium', 'extracts an archive: tar'),
  row('sort --compress-program=sh data', 'high', 'runs another program: sort --compress-program'),
  row('sort -o /etc/x data', 'critical', 'writes outside the workspaces: /etc/x'),
  row('rsync -e "sh -c id" a host:b', 'high', 'runs another program: rsync -e'),
  row('zip -TT "sh -c id" a.zip README.md', 'high', 'runs another program: zip -TT'),
  row('rsync -a src/ out/', 'medium', 'copies files: rsync'),
]);
