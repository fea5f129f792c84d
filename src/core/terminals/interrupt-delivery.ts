// Ctrl-C for a running command, delivered as SIGINT to the process group that holds the
// terminal, which is what the terminal driver does for a typed Ctrl-C. It is sent with kill() to
// a group seen on /proc rather than typed, because a typed one acts later than it is written and
// also flushes unread input, and bash exposes both races: a Ctrl-C typed before bash has read our
// line silently discards it, and one landing between bash reading the line and the new job's
// exec is swallowed by bash (or by the forked bash) while the program then runs on untouched.

/** Who holds the terminal, as /proc tells it. */
export interface ForegroundGroup {
  foreground: number;
  shell: number;
  /** The foreground group leader's command line: the shell's own for a fork not yet exec'd. */
  program: string | null;
}

export interface InterruptTarget {
  /** Null once the shell has gone. */
  foregroundGroup(): ForegroundGroup | null;
  /** The shell's own command line, which a fork keeps until it execs. */
  shellCommandLine: string | null;
  /** Whether the command being interrupted still runs. */
  stillRunning(): boolean;
}

/** The foreground is watched every 10 ms for up to 5 s (a loaded machine forks slowly). */
const WATCH_MS = 10;
const WATCH_CHECKS = 500;
/** Observations before bash itself, or a bash fork, counts as settled in the foreground. */
const SHELL_SETTLE_CHECKS = 3;
const FORK_SETTLE_CHECKS = 50;

/**
 * Sends SIGINT to each program that settles in the foreground while the command runs: an exec'd
 * job at once; bash itself (a loop or builtin) after a few looks; a bash fork once it has exec'd,
 * or after half a second if it never does (a subshell). Each program is signalled once, keyed by
 * group and command line, so a group caught while still a fork is signalled again once exec'd.
 */
export function deliverInterrupt(target: InterruptTarget): void {
  const signalled = new Set<string>();
  let checks = 0;
  let candidate = '';
  let seen = 0;
  const tick = () => {
    const now = target.foregroundGroup();
    if (!target.stillRunning() || now === null || ++checks > WATCH_CHECKS) {
      clearInterval(watch);
      return;
    }
    const key = `${now.foreground} ${now.program ?? ''}`;
    if (signalled.has(key)) return;
    seen = key === candidate ? seen + 1 : 1;
    candidate = key;
    const forked = now.foreground !== now.shell && now.program === target.shellCommandLine;
    const settleChecks = forked ? FORK_SETTLE_CHECKS : now.foreground === now.shell ? SHELL_SETTLE_CHECKS : 1;
    if (seen < settleChecks) return;
    signalled.add(key);
    try {
      process.kill(-now.foreground, 'SIGINT');
    } catch {
      // The group ended meanwhile.
    }
  };
  const watch = setInterval(tick, WATCH_MS);
  watch.unref();
  tick();
}
