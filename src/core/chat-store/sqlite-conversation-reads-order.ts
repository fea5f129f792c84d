// The list's order (lastModified newest first, then id) as SQLite sorts it, for pages put
// together outside SQL (sqlite-conversation-reads-lookup.ts): numbers before text, numbers by
// value, text by its UTF-8 bytes (the BINARY collation), which is code point order. JavaScript's
// `<` compares UTF-16 code units instead, which puts characters above U+FFFF (surrogate pairs)
// before U+E000–U+FFFF: SQLite puts them after.

export interface ListedRow {
  id: string;
  title: string;
  createdAt: string | number;
  lastModified: string | number;
  messageCount: number;
}

/** A UTF-16 code unit's place in code point order: surrogates stand for code points above U+FFFF. */
function codePointRank(unit: number): number {
  return unit >= 0xd800 && unit <= 0xdfff ? unit + 0x10000 : unit;
}

/** SQLite's BINARY comparison of two values stored as text or numbers (never NULL here). */
export function compareStored(a: string | number, b: string | number): number {
  if (typeof a === 'number' || typeof b === 'number') {
    if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
    return typeof a === 'number' ? -1 : 1;
  }
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const x = a.charCodeAt(index);
    const y = b.charCodeAt(index);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Negative when `a` comes before `b` in the list. */
export function listOrder(a: ListedRow, b: ListedRow): number {
  return compareStored(b.lastModified, a.lastModified) || compareStored(a.id, b.id);
}

/**
 * The rows at positions [offset, offset + take) in list order of those added, without sorting
 * them all: a heap keeps the first offset + take rows seen, its top the last of them in the
 * list, so each row costs a few comparisons when it is added (in the step that read it) and the
 * page costs `take` removals at the end. A search matching 300,000 conversations is never
 * sorted in one go, which would hold the event loop for a sort of 300,000 rows.
 */
export class ListedPageSelection<Row extends ListedRow = ListedRow> {
  private readonly kept: Row[] = [];
  private readonly keep: number;

  constructor(
    private readonly offset: number,
    take: number,
  ) {
    this.keep = offset + take;
  }

  add(row: Row): void {
    const { kept } = this;
    if (kept.length < this.keep) {
      kept.push(row);
      this.siftUp(kept.length - 1);
    } else if (kept.length > 0 && listOrder(row, kept[0] as Row) < 0) {
      kept[0] = row;
      this.siftDown(0);
    }
  }

  /** The page, in list order; the selection is used up. */
  page(): Row[] {
    const page: Row[] = [];
    while (this.kept.length > this.offset) page.push(this.removeLast());
    return page.reverse();
  }

  /** Removes and returns the kept row that comes last in the list. */
  private removeLast(): Row {
    const { kept } = this;
    const last = kept[0] as Row;
    const moved = kept.pop() as Row;
    if (kept.length > 0) {
      kept[0] = moved;
      this.siftDown(0);
    }
    return last;
  }

  /** Whether the row at `a` comes later in the list than the one at `b` (so belongs above it). */
  private later(a: number, b: number): boolean {
    return listOrder(this.kept[a] as Row, this.kept[b] as Row) > 0;
  }

  private swap(a: number, b: number): void {
    const { kept } = this;
    [kept[a], kept[b]] = [kept[b] as Row, kept[a] as Row];
  }

  private siftUp(index: number): void {
    let child = index;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!this.later(child, parent)) return;
      this.swap(child, parent);
      child = parent;
    }
  }

  private siftDown(index: number): void {
    const size = this.kept.length;
    let parent = index;
    for (;;) {
      const left = 2 * parent + 1;
      const right = left + 1;
      let top = parent;
      if (left < size && this.later(left, top)) top = left;
      if (right < size && this.later(right, top)) top = right;
      if (top === parent) return;
      this.swap(parent, top);
      parent = top;
    }
  }
}
