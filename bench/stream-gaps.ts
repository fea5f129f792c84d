import { percentile } from './http-load.js';
import type { StreamRecord } from './slow-stream-reader.js';

// The timing of many slow streams, from what each chunk carried (when the upstream emitted it)
// and when it arrived. Between two consecutive chunks of a stream: the gap the upstream emitted,
// the gap the client saw, and their difference, the gap added on the way (the same as the second
// chunk's delay minus the first's, so a clock offset between the processes cancels out).

export interface Spread {
  p50: number;
  p99: number;
  max: number;
}

export interface GapSummary {
  streams: number;
  ok: number;
  /** Failure reasons with how many streams ended with each, most frequent first. */
  failures: [string, number][];
  chunks: number;
  emittedGap: Spread;
  clientGap: Spread;
  addedGap: Spread;
  /** Emitted → arrived, per chunk (includes whatever offset the two clocks have, a few µs here). */
  delay: Spread;
  /** The added gaps of chunk pairs that both arrived while every stream was open. */
  addedGapAllOpen: Spread & { pairs: number };
}

function spread(values: number[]): Spread {
  const sorted = Float64Array.from(values).sort();
  const list = Array.from(sorted);
  return { p50: percentile(list, 0.5), p99: percentile(list, 0.99), max: sorted.at(-1) ?? Number.NaN };
}

/** A failure's kind: the numbers in a reason differ from stream to stream, the kind does not. */
const kindOf = (reason: string) => reason.replace(/\d+(\.\d+)?/g, 'N');

/** `allOpen` is the epoch-ms window during which every stream was open, if there was one. */
export function summarize(records: StreamRecord[], allOpen: { from: number; to: number } | null): GapSummary {
  const emittedGaps: number[] = [];
  const clientGaps: number[] = [];
  const addedGaps: number[] = [];
  const delays: number[] = [];
  const addedAllOpen: number[] = [];
  const failures = new Map<string, number>();
  let chunks = 0;
  for (const { failure, emitted, received } of records) {
    if (failure !== null) failures.set(kindOf(failure), (failures.get(kindOf(failure)) ?? 0) + 1);
    chunks += emitted.length;
    for (let index = 0; index < emitted.length; index++) {
      const sentAt = emitted[index] ?? 0;
      const arrivedAt = received[index] ?? 0;
      delays.push(arrivedAt - sentAt);
      if (index === 0) continue;
      const emittedGap = sentAt - (emitted[index - 1] ?? 0);
      const clientGap = arrivedAt - (received[index - 1] ?? 0);
      emittedGaps.push(emittedGap);
      clientGaps.push(clientGap);
      addedGaps.push(clientGap - emittedGap);
      if (allOpen !== null && (received[index - 1] ?? 0) >= allOpen.from && arrivedAt <= allOpen.to) addedAllOpen.push(clientGap - emittedGap);
    }
  }
  return {
    streams: records.length,
    ok: records.filter((record) => record.failure === null).length,
    failures: [...failures.entries()].sort((a, b) => b[1] - a[1]),
    chunks,
    emittedGap: spread(emittedGaps),
    clientGap: spread(clientGaps),
    addedGap: spread(addedGaps),
    delay: spread(delays),
    addedGapAllOpen: { ...spread(addedAllOpen), pairs: addedAllOpen.length },
  };
}
