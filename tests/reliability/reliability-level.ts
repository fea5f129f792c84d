// How much of the reliability suite runs. `npm test` (and so CI) runs the reduced set;
// `npm run reliability` sets RELIABILITY=full for the whole: the 5,000-request fuzz, twenty
// kill -9 rounds, and the soak, which only runs there (it takes minutes, not CI time).

export const fullReliability = process.env.RELIABILITY === 'full';

/** The count a part runs at: `reduced` in CI, `full` under `npm run reliability`. */
export function reliabilityCount(reduced: number, full: number): number {
  return fullReliability ? full : reduced;
}
