import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldCodePoint } from '../../src/core/chat-store/conversation-search-folding.js';
import type { ListQuery } from '../../src/core/chat-store/conversation-reads.js';
import { createDatabase, type Database } from '../../src/core/db/create-db.js';
import { migrate } from '../../src/core/db/migrate.js';
import { createTestDatabase, postgresAvailable, type DatabaseKind, type TestDatabase } from '../helpers/databases.js';

// Conversation search finds the same conversations on both databases (issue 20): the same corpus
// stored in each, the same questions asked of each, and each answer (ids, order, total) held to
// the other and to the rule itself, written here independently: the text, folded code point by
// code point as FTS5 folds it, contains the folded query. Short queries (scanned), long ones
// (FTS5 on SQLite, pg_trgm on PostgreSQL) and ones pg_trgm cannot look up are all asked.

const owner = 'parity-owner';
const base = Date.UTC(2026, 3, 1);

/** Title, then messages; one conversation each. */
const corpus: [string, string[]][] = [
  ['Ärger im Büro', ['Der ÄRGER war groß', 'ok']],
  ['', ['kein ärger hier, nur Freude']],
  ['ΣΊΣΥΦΟΣ', ['ο μύθος του Σισύφου']],
  ['σίσυφος and the stone', ['ΟΔΟΣ']],
  ['Straße', ['STRASSE in capitals', 'ẞ capital sharp s']],
  ['party 🎉🎉', ['🎉 confetti', 'emoji 👩‍💻 coder']],
  ['100% sure', ['50%_off and a_b', 'back\\slash \\ and "quotes" \'single\'']],
  ['snake_case names', ['regex chars: .*+?()[]{}|^$ and ***: and (?i)']],
  ['Kelvin', ['273 K (Kelvin sign) and plain k', 'long ſ and S and s']],
  ['İstanbul', ['ISTANBUL', 'ǅemal ǆ Ǆ']],
  ['Cherokee Ꭰ', ['ꭰ lowercase cherokee']],
  ['日本語のテキスト', ['中文 文本', 'x']],
  ['Ω ohm Ω', ['Å angstrom Å å', 'µ micro μ Μ']],
  ['replacement \uFFFD', ['nonchar \uFFFF here']],
  ['Mixed Case Title', ['The Quick Brown Fox', 'the quick brown fox', 'QUICK']],
  ['', ['']],
  // Longer than SQLite's indexed head (4,096 characters): text past it, and text across its edge,
  // must be found as on PostgreSQL, which searches the whole content.
  ['long tail', [`${'filler '.repeat(700)}XYLOPHONE tail-only-needle`]],
  ['long edge', [`${'y'.repeat(4090)}edge-spanning-needle`]],
  ['long head', [`head-only-needle ${'z'.repeat(5000)}`]],
];

const queries = [
  'ärger', 'ÄRGER', 'rge', 'Ä', 'ä', 'är',
  'σίσυφος', 'ΣΊΣΥΦΟΣ', 'σίσυφοσ', 'ς', 'Σ', 'οσ', 'ΟΣ',
  'ß', 'ẞ', 'ss', 'SS', 'straße', 'STRASSE',
  '🎉', '🎉🎉', 'y 🎉', '👩‍💻', '💻',
  '%', '_', '\\', '%_', '50%', 'a_b', '100%', '\\s', '"', "'", '"quotes"',
  '.*', '*', '?', '[', ']', '[]', '^', '$', '(?i)', '***:', '|', '{}', '()', '.',
  'k', 'K', 'K', 'kelvin', 'ſ', 's', 'long s', 'LONG S',
  'i', 'İ', 'istanbul', 'İSTANBUL', 'ǆ', 'ǅ', 'ǅemal',
  'Ꭰ', 'ꭰ', 'cherokee ꭰ',
  '日本', '日', '中文', 'テキスト',
  'ω', 'Ω', 'å', 'Å', 'µ', 'μ', 'micro μ',
  '\uFFFD', '\uFFFF', '\uD800', 'x\uDC00y',
  'quick brown', 'QUICK', 'qu', 'q', 'x', 'zz', 'no such text anywhere',
  ' ok ', 'o', 'ok', 'a'.repeat(500),
  'tail-only-needle', 'TAIL-ONLY', 'xylophone', 'edge-spanning-needle', 'yyyyedge', 'head-only-needle', 'filler filler', 'zzz',
];

interface Answer {
  ids: string[];
  total: number;
}

const foldText = (text: string) => Array.from(text, (character) => String.fromCodePoint(foldCodePoint(character.codePointAt(0) ?? 0))).join('');

describe.skipIf(!postgresAvailable)('conversation search on SQLite and PostgreSQL', () => {
  const opened = new Map<DatabaseKind, { database: TestDatabase; db: Database }>();
  /** The corpus's ids, newest first (the list's order). */
  const ids: string[] = [];
  const texts = new Map<string, string[]>();

  beforeAll(async () => {
    corpus.forEach((_, index) => ids.push(`00000000-0000-4000-8000-${String(index).padStart(12, '0')}`));
    for (const kind of ['sqlite', 'postgresql'] as const) {
      const database = await createTestDatabase(kind);
      await migrate(database.url);
      const db = await createDatabase(database.url, `parity-${kind}`);
      opened.set(kind, { database, db });
      for (const [index, [title, messages]] of corpus.entries()) {
        const id = ids[index] ?? '';
        texts.set(id, [title, ...messages]);
        await db.db.conversation.create({
          data: {
            id,
            ownerId: owner,
            title,
            messageCount: messages.filter((content) => content !== '').length,
            nextSeq: messages.length,
            // Two share a lastModified, so the id decides their order.
            lastModified: new Date(base + (index === 3 ? 2 : index) * 60_000),
            messages: { create: messages.map((content, seq) => ({ id: `${id}-${seq}`, seq, role: 'user', content })) },
          },
        });
      }
      // Another user's copy of everything: never found.
      await db.db.conversation.create({
        data: { id: 'other-user', ownerId: 'someone-else', title: 'Ärger', messageCount: 1, messages: { create: [{ id: 'other-1', seq: 0, role: 'user', content: corpus.flatMap(([, m]) => m).join(' ') }] } },
      });
    }
  });

  afterAll(async () => {
    for (const { database, db } of opened.values()) {
      await db.close();
      await database.drop();
    }
  });

  async function ask(kind: DatabaseKind, query: Omit<ListQuery, 'ownerId'>): Promise<Answer> {
    const db = opened.get(kind)?.db;
    if (!db) throw new Error(`${kind} not opened`);
    const { rows, total } = await db.reads.list({ ownerId: owner, ...query });
    return { ids: rows.map((row) => row.id), total };
  }

  /** The rule: listed conversations (not empty and untitled) in list order whose folded text contains the folded query. */
  function expected(text: string): Answer {
    const wanted = foldText(text.trim().replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
    const order = ids
      .map((id, index) => ({ id, index, at: index === 3 ? 2 : index }))
      .sort((a, b) => b.at - a.at || (a.id < b.id ? -1 : 1));
    const matching = order
      .filter(({ id, index }) => {
        const [title, messages] = corpus[index] ?? ['', []];
        const listed = title !== '' || messages.some((content) => content !== '');
        return listed && (texts.get(id) ?? []).some((part) => foldText(part).includes(wanted));
      })
      .map(({ id }) => id);
    return { ids: matching, total: matching.length };
  }

  it('answers every query alike on both databases, and as the folding rule says', async () => {
    const differences: string[] = [];
    for (const text of queries) {
      const sqlite = await ask('sqlite', { limit: 50, offset: 0, text });
      const postgres = await ask('postgresql', { limit: 50, offset: 0, text });
      const rule = expected(text);
      if (JSON.stringify(sqlite) !== JSON.stringify(postgres) || JSON.stringify(sqlite) !== JSON.stringify(rule)) {
        differences.push(`${JSON.stringify(text)}: sqlite ${JSON.stringify(sqlite)} postgresql ${JSON.stringify(postgres)} rule ${JSON.stringify(rule)}`);
      }
    }
    expect(differences).toEqual([]);
  });

  it('finds across case as FTS5 folds it: Ä/ä, Σ/σ/ς, K/k/K, ſ/s, ẞ/ß; ß is not ss; İ is not i', async () => {
    const titles = async (text: string) => (await ask('sqlite', { limit: 50, offset: 0, text })).ids.map((id) => corpus[ids.indexOf(id)]?.[0]);
    expect(await titles('ärger')).toEqual(['Ärger im Büro', ''].reverse());
    // The two share a lastModified: the smaller id first.
    expect(await titles('ΣΊΣΥΦΟΣ')).toEqual(['ΣΊΣΥΦΟΣ', 'σίσυφος and the stone']);
    expect(await titles('σίσυφοσ')).toEqual(['ΣΊΣΥΦΟΣ', 'σίσυφος and the stone']);
    expect(await titles('K')).toContain('Kelvin');
    expect(await titles('lonG ſ')).toEqual(['Kelvin']);
    // "STRASSE" is in the message: ss finds it, not the ß of the title.
    expect(await titles('straße')).toEqual(['Straße']);
    expect((await ask('sqlite', { limit: 50, offset: 0, text: 'ß' })).ids).toEqual([ids[4], ids[0]]);
    expect((await ask('postgresql', { limit: 50, offset: 0, text: 'ẞ' })).ids).toEqual([ids[4], ids[0]]);
    expect((await ask('postgresql', { limit: 50, offset: 0, text: 'strasse' })).ids).toEqual([ids[4]]);
    expect((await ask('postgresql', { limit: 50, offset: 0, text: 'straße ' })).ids).toEqual([ids[4]]);
    expect((await ask('sqlite', { limit: 50, offset: 0, text: 'istanbul' })).ids).toEqual([ids[9]]);
    expect((await ask('postgresql', { limit: 50, offset: 0, text: 'i̇stanbul' })).total).toBe(0);
  });

  it('pages alike: limit, offset and before give the same ids and totals on both databases', async () => {
    for (const text of [undefined, 'e', 'the', '🎉']) {
      for (const [limit, offset] of [[2, 0], [2, 1], [3, 4], [50, 100]] as const) {
        const sqlite = await ask('sqlite', { limit, offset, text });
        expect(await ask('postgresql', { limit, offset, text }), `${String(text)} ${limit}/${offset}`).toEqual(sqlite);
      }
      const all = await ask('sqlite', { limit: 50, offset: 0, text });
      const third = all.ids[2];
      if (third === undefined) continue;
      const db = opened.get('sqlite')?.db;
      const found = await db?.reads.find(third);
      if (!found) throw new Error('missing conversation');
      const before = { lastModified: found.lastModified, id: found.id };
      const sqliteAfter = await ask('sqlite', { limit: 2, offset: 0, before, text });
      expect(sqliteAfter.ids).toEqual(all.ids.slice(3, 5));
      expect(sqliteAfter.total).toBe(all.total);
      expect(await ask('postgresql', { limit: 2, offset: 0, before, text })).toEqual(sqliteAfter);
    }
  });
});
