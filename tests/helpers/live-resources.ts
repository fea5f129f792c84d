import { createHook } from 'node:async_hooks';

// Counts the timers and sockets alive in this process, for leak checks. An async hook sees every
// one (process.getActiveResourcesInfo() leaves out unref'd timers, and a leaked unref'd timer is
// still a leak). Only creation and destruction are hooked, so the cost stays small.

const watched = new Set(['Timeout', 'TCPWRAP']);

export interface LiveResources extends Disposable {
  /** How many of each watched kind are alive now. */
  counts(): { timers: number; sockets: number };
}

export function trackLiveResources(): LiveResources {
  const alive = new Map<number, string>();
  const hook = createHook({
    init(asyncId, type) {
      if (watched.has(type)) alive.set(asyncId, type);
    },
    destroy(asyncId) {
      alive.delete(asyncId);
    },
  }).enable();
  return {
    counts() {
      let timers = 0;
      let sockets = 0;
      for (const type of alive.values()) {
        if (type === 'Timeout') timers++;
        else sockets++;
      }
      return { timers, sockets };
    },
    [Symbol.dispose]() {
      hook.disable();
    },
  };
}
