import { row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable('wrappers are unwrapped and what they run is analysed', [
  // Wrappers are unwrapped and what they run is analysed.
  row('timeout 5 sudo rm -rf /', 'critical', 'removes the root directory'),
  row('nohup rm -rf ~ &', 'critical', 'removes the home directory'),
  row('env -i LD_PRELOAD=/x ls', 'high', 'dangerous environment variable: LD_PRELOAD'),
  row("env -S 'rm -rf /'", 'critical', 'removes the root directory'),
  row('nice -n 10 rm -rf ~', 'critical', 'removes the home directory'),
  row('command rm -rf /', 'critical', 'removes the root directory'),
  row('command -v rm', 'low', 'read-only inspection'),
  row('exec rm -rf ~', 'critical', 'removes the home directory'),
  row('builtin eval "rm -rf /"', 'critical', 'removes the root directory'),
  row("su -c 'rm -rf /'", 'critical', 'removes the root directory'),
  row('xargs rm -rf < list', 'high', 'runs another program: xargs'),
  row('xargs -0 -n 1 reboot', 'critical', 'shuts down or reboots'),
  row('find . -exec rm -rf / \\;', 'critical', 'removes the root directory'),
  row('find . -name "*.o" -exec rm {} +', 'high', 'runs another program: find -exec'),
  row('find / -exec rm -rf {} \\;', 'critical', 'removes the root directory'),
  row("watch 'rm -rf ~'", 'critical', 'removes the home directory'),
  row('busybox rm -rf /', 'critical', 'removes the root directory'),
  row('git bisect run rm -rf /', 'critical', 'removes the root directory'),
]);
