/**
 * Watches the event loop with a timer ticking every `intervalMs`: `stop()` ends the watch and
 * returns the longest time between two ticks, counting the stretch from the last tick to the
 * stop. Without that last stretch, work that held the loop from the first tick to the end in
 * one block (the very thing such a test looks for) would never let the timer fire and read as 0.
 */
export function watchEventLoop(intervalMs: number): { stop(): number } {
  let last = performance.now();
  let longest = 0;
  const note = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  };
  const timer = setInterval(note, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      note();
      return longest;
    },
  };
}
