// A preload (`node --expose-gc --import bench/heap-probe.mjs`, with HEAP_PROBE_FILE=<file>) that
// reports the process's memory when sent SIGUSR2: whoever asks writes `collect` (a full
// collection first) or `read` to the file, and the answer replaces it; `snapshot:<path>` also
// writes a heap snapshot there (bench/stream-heap.ts compares two by constructor);
// `sampling-start` starts V8's sampling heap profiler and `sampling:<path>` writes what it holds
// (allocations not yet freed, garbage an old-space collection has still to free included). Until asked it only notes
// the heap in use after each full collection the process runs by itself: what the heap holds
// alive under load, without stopping the process to find out.
// With HEAP_PROBE_RESOURCES=1 it also counts the timers, sockets and pipes alive, through an
// async hook (which also sees unref'd timers); that costs every async resource a little, so the
// benchmarks leave it off and the soak turns it on. Plain JavaScript, so it loads in any process.
import { createHook } from 'node:async_hooks';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { writeHeapSnapshot } from 'node:v8';
import { constants, PerformanceObserver } from 'node:perf_hooks';

const file = process.env.HEAP_PROBE_FILE;
if (!file) throw new Error('HEAP_PROBE_FILE must name the file the heap probe answers in');

let afterFullGc = null;
new PerformanceObserver((list) => {
  if (list.getEntries().some((entry) => entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) {
    afterFullGc = { at: Date.now(), heapUsed: process.memoryUsage().heapUsed };
  }
}).observe({ entryTypes: ['gc'] });

const counted = new Set(['Timeout', 'TCPWRAP', 'PIPEWRAP']);
const alive = new Map();
if (process.env.HEAP_PROBE_RESOURCES === '1') {
  createHook({
    init(asyncId, type) {
      if (counted.has(type)) alive.set(asyncId, type);
    },
    destroy(asyncId) {
      alive.delete(asyncId);
    },
  }).enable();
}

process.on('SIGUSR2', () => {
  const asked = readFileSync(file, 'utf8');
  // A snapshot collects the garbage first: it holds what is alive.
  if (asked.startsWith('snapshot:')) writeHeapSnapshot(asked.slice('snapshot:'.length));
  if (asked === 'sampling-start') startSampling();
  if (asked.startsWith('sampling:')) {
    // Answered once the profile is written.
    session?.post('HeapProfiler.getSamplingProfile', (error, result) => {
      writeFileSync(asked.slice('sampling:'.length), JSON.stringify(error ?? result.profile));
      answer();
    });
    return;
  }
  if (asked === 'collect') {
    // Twice: the first pass frees objects whose finalizers the second collects.
    globalThis.gc?.();
    globalThis.gc?.();
  }
  answer();
});

let session = null;
function startSampling() {
  session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', { samplingInterval: Number(process.env.HEAP_PROBE_SAMPLING_BYTES ?? 4096) });
}

function answer() {
  const byType = {};
  for (const type of alive.values()) byType[type] = (byType[type] ?? 0) + 1;
  writeFileSync(file, JSON.stringify({ ...process.memoryUsage(), at: Date.now(), afterFullGc, alive: byType }));
}
