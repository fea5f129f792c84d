import { caseVariants } from './conversation-search-folding.js';

// The forms a search text takes on each path. The text is taken literally everywhere: LIKE's
// `%` and `_`, GLOB's `*?[`, regular expression syntax and FTS5 query syntax mean nothing in it.

/** FTS5's trigram tokenizer needs three characters to look a text up; shorter ones are scanned. */
export const TRIGRAM_LENGTH = 3;

/** The characters (code points) of a search text. */
export function characters(text: string): string[] {
  return Array.from(text);
}

/** A search text as one FTS5 phrase: with the trigram tokenizer, a substring of the folded text. */
export function fts5Phrase(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/** A GLOB pattern (case-sensitive, as GLOB is) matching the text anywhere, in any case FTS5 folds. */
export function globPattern(text: string): string {
  const parts = characters(text).map((character) => {
    const variants = caseVariants(character.codePointAt(0) ?? 0);
    if (variants.length > 1) return `[${String.fromCodePoint(...variants)}]`;
    // GLOB's specials as one-member classes; `]` and `^` mean nothing outside a class.
    return '*?['.includes(character) ? `[${character}]` : character;
  });
  return `*${parts.join('')}*`;
}

/**
 * A PostgreSQL regular expression (for `~`, which is case-sensitive) matching the text anywhere,
 * in any case FTS5 folds. Only ASCII characters are special in PostgreSQL's regular expressions:
 * those that are not letters or digits are escaped, everything else stands for itself.
 */
export function postgresPattern(text: string): string {
  return characters(text)
    .map((character) => {
      const variants = caseVariants(character.codePointAt(0) ?? 0);
      if (variants.length > 1) return `[${String.fromCodePoint(...variants)}]`;
      return (character.codePointAt(0) ?? 0) < 0x80 && !/^[A-Za-z0-9]$/.test(character) ? `\\${character}` : character;
    })
    .join('');
}

/**
 * Whether pg_trgm can take trigrams from the text's pattern: it needs three word characters in a
 * row (pg_trgm treats the rest as word breaks). Without them a GIN scan would read the whole
 * index, every user's messages, so such texts are scanned over the caller's conversations instead.
 */
export function postgresIndexable(text: string, unicodeWords: boolean): boolean {
  return (unicodeWords ? /[\p{L}\p{Nd}]{3}/u : /[A-Za-z0-9]{3}/).test(text);
}

/**
 * Whether SQLite's LIKE, which folds ASCII letters only, matches the text exactly as FTS5 folding
 * would: when each character has no case or only ASCII ones (not k or s, which the Kelvin sign
 * and the long s fold to, nor any non-ASCII letter with a case).
 */
export function likeFoldsAlike(text: string): boolean {
  return characters(text).every((character) => {
    const variants = caseVariants(character.codePointAt(0) ?? 0);
    return variants.length === 1 || variants.every((code) => code < 0x80);
  });
}

/** A LIKE pattern (with ESCAPE '\') matching the text anywhere, its `%`, `_` and `\` literal. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/**
 * A LIKE pattern (with ESCAPE '\') that every text holding `text` under FTS5 folding matches, and
 * few others: the characters LIKE folds alike stand for themselves, each other one is `_` (one
 * character: every case variant is one code point). It runs first, before the exact GLOB, whose
 * class per letter makes it about 20 times slower on long texts (GLOB cannot skip ahead to its
 * first character when that is a class): GLOB then reads only texts that very likely match.
 */
export function likeSupersetPattern(text: string): string {
  const parts = characters(text).map((character) => (likeFoldsAlike(character) ? character.replace(/[\\%_]/, (special) => `\\${special}`) : '_'));
  return `%${parts.join('')}%`;
}
