import type { PinnedBinds } from './pinned-binds.js';

// What runs on the host between the service and bubblewrap, as one small bash program that execs
// the next step (CONTRACT §11):
// 1. closes every descriptor but 0–2 it inherited: whatever the service itself inherited without
//    close-on-exec (a launcher's pipe, say) must not reach commands;
// 2. joins the sandbox's cgroups, so every process the sandbox makes is counted in them;
// 3. reopens the pinned folders (pinned-binds.ts) from /proc/<service>/fd/N as descriptors 10, 11,
//    … for bubblewrap's `--bind-fd`: reopening a descriptor's magic link gives the same folder,
//    whatever its name leads to now;
// 4. sets the rlimits through util-linux's prlimit, then execs bubblewrap.

const FIRST_PINNED_FD = 10;

const SCRIPT = [
  'for f in /proc/$$/fd/*; do n=${f##*/}; if [ "$n" -gt 2 ] 2>/dev/null; then eval "exec $n>&-"; fi; done',
  'while [ "$1" != -- ]; do echo $$ > "$1" || exit 126; shift; done; shift',
  `fd=${FIRST_PINNED_FD}; while [ "$1" != -- ]; do eval "exec $fd<\\"\\$1\\"" || exit 126; fd=$((fd+1)); shift; done; shift`,
  'exec "$@"',
].join('\n');

export interface LaunchSettings {
  /** `cgroup.procs` files to join. */
  cgroupFiles: readonly string[];
  pins: PinnedBinds | null;
  /** prlimit's path, or null when it is missing (then no rlimit is set). */
  prlimit: string | null;
  /** prlimit options, such as `--fsize=1048576`. */
  rlimits: readonly string[];
}

/** The argv that prepares the host side; the program to exec (bubblewrap and its arguments) follows it. */
export function launchPrefix(settings: LaunchSettings): string[] {
  const pinned = (settings.pins?.binds ?? []).map((bind) => `/proc/${process.pid}/fd/${bind.fd}`);
  const limits = settings.prlimit === null ? [] : [settings.prlimit, ...settings.rlimits, '--'];
  return ['/bin/bash', '-c', SCRIPT, 'assistant-launch', ...settings.cgroupFiles, '--', ...pinned, '--', ...limits];
}

/** bubblewrap's binds of the pinned folders, in the descriptor order launchPrefix gives them. */
export function pinnedBindArguments(pins: PinnedBinds | null): string[] {
  return (pins?.binds ?? []).flatMap((bind, index) => [bind.writable ? '--bind-fd' : '--ro-bind-fd', String(FIRST_PINNED_FD + index), bind.target]);
}
