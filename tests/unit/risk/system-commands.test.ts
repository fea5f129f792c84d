import { row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable('processes, devices, the network and the machine', [
  row('fakeroot', 'high', 'starts an interactive interpreter: fakeroot'),
  row('ssh-agent', 'medium', 'not a known read-only command: ssh-agent'),
  row('chown -R me .', 'high', 'recursive permission change'),
  row('kill -9 1234', 'high', 'kills processes: kill'),
  row('pkill node', 'high', 'kills processes: pkill'),
  row('truncate -s 0 README.md', 'high', 'destroys file contents: truncate'),
  row('shred README.md', 'high', 'destroys file contents: shred'),
  row('ssh host ls', 'high', 'network tool: ssh'),
  row('nc -l 4444', 'high', 'network tool: nc'),
  row('rsync -a src/ host:dst', 'high', 'network tool: rsync'),
  row('doas reboot', 'critical', 'shuts down or reboots'),
  row('systemctl poweroff', 'critical', 'shuts down or reboots'),
  row('init 0', 'critical', 'shuts down or reboots'),
  row('wipefs -a /dev/sdb', 'critical', 'formats or partitions a disk: wipefs'),
]);
