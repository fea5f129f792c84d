import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { caseVariants, foldCodePoint } from '../../src/core/chat-store/conversation-search-folding.js';
import { fts5Phrase, globPattern, likeFoldsAlike, likePattern, postgresIndexable, postgresPattern } from '../../src/core/chat-store/conversation-search-patterns.js';

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
});
