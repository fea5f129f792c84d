import { createHook } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';

// Preloaded into the soak's service process (`node --expose-gc --import ./soak-probe.ts`): on
// SIGUSR2 it collects garbage and writes what is alive (heap, RSS, timers, sockets, handles) to
// SOAK_PROBE_FILE, so the test can read a child's timers, which no /proc file shows. Written to
// a file rather than stdout, where the service's own log lines are being written at the same time.

const file = process.env.SOAK_PROBE_FILE;
if (!file) throw new Error('SOAK_PROBE_FILE must name the file the probe writes to');

const alive = new Map<number, string>();
createHook({
  init(asyncId, type) {
    if (type === 'Timeout' || type === 'TCPWRAP' || type === 'PIPEWRAP' || type === 'FSREQCALLBACK') alive.set(asyncId, type);
  },
  destroy(asyncId) {
    alive.delete(asyncId);
  },
}).enable();

let sequence = 0;
process.on('SIGUSR2', () => {
  // Twice: the first pass frees objects whose finalizers the second collects.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const byType: Record<string, number> = {};
  for (const type of alive.values()) byType[type] = (byType[type] ?? 0) + 1;
  const memory = process.memoryUsage();
  sequence++;
  writeFileSync(file, JSON.stringify({ sequence, rss: memory.rss, heapUsed: memory.heapUsed, external: memory.external, alive: byType }));
});
