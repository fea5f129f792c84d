import { row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable('quoting and escaping still name the command', [
  // Quoting and escaping still name the command; anything that needs expansion does not.
  row('"r"m -rf /', 'critical', 'removes the root directory: /'),
  row('\\rm -rf ~', 'critical', 'removes the home directory'),
  row("'rm' -rf ~/", 'critical', 'removes the home directory'),
  row('r\\m -rf ~', 'critical', 'removes the home directory'),
  row('/bin/rm -rf /', 'critical', 'removes the root directory'),
  row("rm -rf '~'", 'high', 'recursive delete'),
  row('cat$IFS/etc/passwd', 'high', 'command name cannot be resolved'),
  row('rm${IFS}-rf${IFS}/', 'high', 'command name cannot be resolved'),
  row('{rm,-rf,/}', 'high', 'command name cannot be resolved: {rm,-rf,/}'),
  row("$'\\x72m' -rf /", 'high', 'command name cannot be resolved'),
  row('X=rm; $X -rf /', 'high', 'command name cannot be resolved: $X'),
  row('$(echo rm) -rf /', 'high', 'command name cannot be resolved'),
  row('`echo rm` -rf /', 'high', 'command name cannot be resolved'),
  row('/bin/r? -rf /', 'high', 'command name cannot be resolved'),
  row('~root/bin/x', 'high', 'command name cannot be resolved'),
]);
