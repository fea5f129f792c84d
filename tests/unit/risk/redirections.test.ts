import { row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable("the shell's own descriptors", [
  // The shell keeps its own descriptors from 10 up: its command input is one.
  row('exec 10<&-', 'high', 'changes a descriptor the shell may use itself: 10<&-'),
  row('x=10; exec {x}<&-', 'high', 'changes a descriptor the shell may use itself: {x}<&-'),
  row('cat >/dev/fd/10', 'high', 'writes an inherited descriptor: /dev/fd/10'),
  row('cat >/proc/self/fd/0', 'high', 'writes an inherited descriptor: /proc/self/fd/0'),
  row('cat >&10', 'high', 'uses an inherited descriptor: >&10'),
  row('echo done >&2', 'low', 'read-only inspection'),
  row('echo done >/dev/stderr', 'medium', 'writes a special file: /dev/stderr'),
]);
