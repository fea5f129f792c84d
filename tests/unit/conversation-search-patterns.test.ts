import { spawnSync } from 'node:child_process';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { caseVariants, foldCodePoint } from '../../src/core/chat-store/conversation-search-folding.js';
import { fts5Phrase, globPattern, likeFoldsAlike, likePattern, likeSupersetPattern, postgresIndexable, postgresPattern } from '../../src/core/chat-store/conversation-search-patterns.js';

// The search texts' forms on each path (conversation-search-patterns.ts): literal on every path,
// and folded by the table FTS5 itself gives (scripts/write-search-folding.mjs).

const code = (text: string) => text.codePointAt(0) ?? 0;

describe('conversation search folding and patterns', () => {
  it('the folding table is the one this SQLite build folds with', () => {
    const run = spawnSync(process.execPath, ['scripts/write-search-folding.mjs', '--check'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('folds as FTS5 does, one code point to one', () => {
    expect(String.fromCodePoint(foldCodePoint(code('Ä')))).toBe('ä');
    expect(String.fromCodePoint(foldCodePoint(code('ς')))).toBe('σ');
    expect(String.fromCodePoint(foldCodePoint(code('K')))).toBe('k');
    expect(String.fromCodePoint(foldCodePoint(code('ẞ')))).toBe('ß');
    expect(foldCodePoint(code('ß'))).toBe(code('ß'));
    expect(foldCodePoint(code('İ'))).toBe(code('İ'));
    expect(caseVariants(code('σ')).map((c) => String.fromCodePoint(c))).toEqual(['Σ', 'ς', 'σ']);
    expect(caseVariants(code('k')).map((c) => String.fromCodePoint(c))).toEqual(['K', 'k', '\u212A']);
  });

  it('takes every special character literally on every path', () => {
    expect(fts5Phrase('say "hi" OR NEAR(x)')).toBe('"say ""hi"" OR NEAR(x)"');
    expect(globPattern('*?[]^')).toBe('*[*][?][[]]^*');
    expect(globPattern('ä1')).toBe('*[Ää]1*');
    expect(likePattern('100%_\\')).toBe('%100\\%\\_\\\\%');
    expect(postgresPattern('a.*(?i)[x]|$^\\')).toBe('[Aa]\\.\\*\\(\\?[Ii]\\)\\[[Xx]\\]\\|\\$\\^\\\\');
    expect(postgresPattern('🎉日本')).toBe('🎉日本');
  });

  it('uses LIKE only where its ASCII folding is the whole story', () => {
    expect(likeFoldsAlike('ab%_1')).toBe(true);
    expect(likeFoldsAlike('ok')).toBe(false);
    expect(likeFoldsAlike('as')).toBe(false);
    expect(likeFoldsAlike('ä')).toBe(false);
    expect(likeFoldsAlike('日')).toBe(true);
  });

  it('looks a text up in pg_trgm only with three word characters in a row', () => {
    expect(postgresIndexable('abc', false)).toBe(true);
    expect(postgresIndexable('a b c', true)).toBe(false);
    expect(postgresIndexable('%%%', true)).toBe(false);
    expect(postgresIndexable('🎉🎉🎉', true)).toBe(false);
    expect(postgresIndexable('ärger', false)).toBe(true);
    expect(postgresIndexable('äöü', false)).toBe(false);
    expect(postgresIndexable('äöü', true)).toBe(true);
  });

  it('lets through, with the superset LIKE before GLOB, every text the exact GLOB matches', () => {
    expect(likeSupersetPattern('Mask 100%')).toBe('%Ma__ 100\\%%');
    expect(likeSupersetPattern('ä_')).toBe('%_\\_%');
    // Random texts over letters with every kind of folding, and contents built from their case
    // variants: wherever GLOB finds the text, the superset must too (it only saves GLOB's work).
    const db = new BetterSqlite3(':memory:');
    const both = db.prepare<[string, string, string, string], { glob: number; superset: number }>(`SELECT ? GLOB ? AS glob, ? LIKE ? ESCAPE '\\' AS superset`);
    const alphabet = ['s', 'S', 'ſ', 'k', 'K', '\u212A', 'ä', 'Ä', 'σ', 'ς', 'Σ', 'a', 'B', '%', '_', '\\', '[', '*', ' ', '日'];
    let seed = 20_261_127;
    const next = (bound: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % bound;
    };
    const word = (length: number) => Array.from({ length }, () => alphabet[next(alphabet.length)] ?? 'a').join('');
    let matched = 0;
    for (let round = 0; round < 3000; round++) {
      const text = word(1 + next(4));
      // A content holding the text in other cases, between random filler.
      const variant = Array.from(text, (character) => {
        const variants = caseVariants(code(character));
        return String.fromCodePoint(variants[next(variants.length)] ?? code(character));
      }).join('');
      for (const content of [`${word(next(6))}${variant}${word(next(6))}`, word(8)]) {
        const row = both.get(content, globPattern(text), content, likeSupersetPattern(text));
        if (row?.glob === 1) matched++;
        if (row?.glob === 1) expect(row.superset, JSON.stringify({ text, content })).toBe(1);
      }
    }
    expect(matched).toBeGreaterThan(3000);
    db.close();
  });
});
