import { fts5FoldingRuns } from './conversation-search-folding-table.js';

// Conversation search ignores case as SQLite's FTS5 trigram tokenizer does (`case_sensitive 0`):
// one code point to one code point, Unicode's simple case folding as FTS5 ships it (ß stays ß,
// ς and σ are one letter, K the Kelvin sign is k). Every search path on both databases folds
// through this table, so both databases find the same conversations for the same text: FTS5
// folds itself, and the other paths (GLOB scans on SQLite, regular expressions over pg_trgm on
// PostgreSQL) match each query character against all the characters that fold like it.

/** Code point → the code point FTS5 folds it to, for those that change. */
const folds = new Map<number, number>();
/** Folded code point → every code point that folds to it, itself included. */
const classes = new Map<number, number[]>();

for (const [first, count, step, delta] of fts5FoldingRuns) {
  for (let index = 0; index < count; index++) {
    const from = first + index * step;
    folds.set(from, from + delta);
  }
}
for (const [from, to] of folds) {
  const members = classes.get(to) ?? [to];
  members.push(from);
  classes.set(to, members);
}

export function foldCodePoint(code: number): number {
  return folds.get(code) ?? code;
}

/** Every code point that matches `code` ignoring case, in ascending order. */
export function caseVariants(code: number): number[] {
  const members = classes.get(foldCodePoint(code));
  return members ? [...members].sort((a, b) => a - b) : [code];
}
