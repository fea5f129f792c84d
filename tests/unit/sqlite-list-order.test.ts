import { describe, expect, it } from 'vitest';
import { compareStored, listOrder, ListedPageSelection, type ListedRow } from '../../src/core/chat-store/sqlite-conversation-reads-order.js';

// The list's order as SQLite sorts it, kept outside SQL by the stepped FTS5 lookup
// (sqlite-conversation-reads-lookup.ts): text by UTF-8 bytes, numbers before text, and a page
// picked from rows added one by one equal to the same slice of them all sorted.

const alphabet = ['a', 'b', 'z', '\u00e9', '\uE000', '\uFFFD', '\uFFFF', '😀', '𝄞', '0', '-'];

function randomText(random: () => number): string {
  return Array.from({ length: 1 + Math.floor(random() * 4) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
}

function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe('the list order outside SQL', () => {
  it('compares text by its UTF-8 bytes, as the BINARY collation does, not by UTF-16 units', () => {
    expect(compareStored('x\uFFFD', 'x😀')).toBeLessThan(0);
    // JavaScript's own order is the other way round.
    expect(['x\uFFFD', 'x😀'].sort()).toEqual(['x😀', 'x\uFFFD']);
    const random = generator(7);
    for (let round = 0; round < 2000; round++) {
      const a = randomText(random);
      const b = randomText(random);
      expect(Math.sign(compareStored(a, b)), `${a} ${b}`).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
    }
  });

  it('puts numbers before text and compares numbers by value', () => {
    expect(compareStored(0, '2026-01-01')).toBeLessThan(0);
    expect(compareStored('1', 2)).toBeGreaterThan(0);
    expect(compareStored(10, 9)).toBeGreaterThan(0);
  });

  it('picks the same page as sorting everything, for any offset and size', () => {
    const random = generator(11);
    const rows: ListedRow[] = Array.from({ length: 300 }, (_, index) => ({
      id: `${randomText(random)}-${index}`,
      title: '',
      createdAt: 0,
      lastModified: random() < 0.1 ? Math.floor(random() * 5) : `2026-01-0${1 + Math.floor(random() * 3)}`,
      messageCount: 1,
    }));
    const sorted = [...rows].sort(listOrder);
    for (const [offset, take] of [[0, 1], [0, 51], [17, 5], [250, 51], [299, 10], [300, 5], [10_000_000, 51], [0, 1000]] as const) {
      const selection = new ListedPageSelection(offset, take);
      for (const row of rows) selection.add(row);
      expect(selection.page().map((row) => row.id), `${offset}/${take}`).toEqual(sorted.slice(offset, offset + take).map((row) => row.id));
    }
  });
});
