import { randomUUID } from 'node:crypto';
import path from 'node:path';
import t, { type Test } from 'tap';
import { FILES, QUERIES, TOP, firstRelevant, retrievalFigures } from '../../bench/retrieval-set.mjs';
import { openDatabase, type Db } from '../../src/db/sqlite.js';
import * as pgSchema from '../../src/db/pg-schema.js';
import { openPostgres, type PgDb } from '../../src/db/postgres.js';
import * as sqliteSchema from '../../src/db/schema.js';
import { groundingPassages } from '../../src/generation/relevance.js';
import { chunkText } from '../../src/knowledge/chunk.js';
import { extensionOf } from '../../src/knowledge/detect.js';
import { extractChunks } from '../../src/knowledge/extract.js';
import { chunkRows } from '../../src/knowledge/indexer.js';
import type { Passage, SearchOptions } from '../../src/knowledge/search.js';
import { postgresStores } from '../../src/stores/postgres.js';
import { sqliteStores } from '../../src/stores/sqlite.js';
import { fixturesDir, tempDataDir } from '../helpers/app.js';
import { postgresTests, startPostgres } from '../helpers/postgres.js';
import { sql } from '../../src/db/orm.js';

// Knowledge search on PostgreSQL (src/knowledge/postgres.ts) beside SQLite's: the same
// files are written to both databases, as the indexer writes them, and every query is asked
// of both. First the rules of search on a small corpus (phrases, Chinese and Japanese words,
// folding, stemming, hostile text, filters, sites), then the retrieval evaluation of
// bench/retrieval.mjs, whose figures both databases must reach.

postgresTests(defineSearchTests);

interface KnowledgeFileInput {
  siteId: string;
  name: string;
  chunks: readonly string[];
  status?: 'indexed' | 'uploaded';
}

/** A SQLite and a PostgreSQL database holding the same sites and knowledge files. */
interface TwinStores {
  sqlite: Db;
  pg: PgDb;
  addSite(id: string): Promise<void>;
  /** Writes the file and its chunks to both databases; answers its id. */
  addFile(file: KnowledgeFileInput): Promise<string>;
  search(siteId: string, query: string, options?: SearchOptions): Promise<{ sqlite: Passage[]; pg: Passage[] }>;
}

async function twinStores(t: Test): Promise<TwinStores> {
  const sqliteHandle = openDatabase(tempDataDir(t));
  t.teardown(() => sqliteHandle.close());
  const pgHandle = await openPostgres(await startPostgres(t), { poolMax: 2 });
  t.teardown(() => pgHandle.close());
  const { db: sqlite } = sqliteHandle;
  const { db: pg } = pgHandle;
  const searches = { sqlite: sqliteStores(sqliteHandle).knowledge.search, pg: postgresStores(pgHandle).knowledge.search };
  return {
    sqlite,
    pg,
    async addSite(id) {
      const site = { id, name: id, handle: id, createdAt: new Date() };
      sqlite.insert(sqliteSchema.sites).values(site).run();
      await pg.insert(pgSchema.sites).values(site);
    },
    async addFile({ siteId, name, chunks, status = 'indexed' }) {
      const now = new Date();
      const id = randomUUID();
      const extension = extensionOf(name) ?? 'txt';
      const file = { id, siteId, name, extension, mediaType: 'text/plain', sizeBytes: 1, status, chunkCount: chunks.length, storageKey: id, createdAt: now, updatedAt: now };
      // The rows and the insert the indexer writes (src/knowledge/indexer.ts).
      const rows = chunkRows(id, siteId, chunks);
      sqlite.transaction((tx) => {
        tx.insert(sqliteSchema.knowledgeFiles).values(file).run();
        if (rows.length) tx.insert(sqliteSchema.knowledgeChunks).values(rows).run();
      });
      await pgHandle.transaction(async (tx) => {
        await tx.insert(pgSchema.knowledgeFiles).values(file);
        if (rows.length) await tx.insert(pgSchema.knowledgeChunks).values(rows);
      });
      return id;
    },
    async search(siteId, query, options) {
      return { sqlite: await searches.sqlite.search(siteId, query, options), pg: await searches.pg.search(siteId, query, options) };
    },
  };
}

/** A passage by where it comes from, for comparing answers whose scores differ. */
const where = (passage: Passage) => `${passage.fileName}#${passage.ordinal}`;
const places = (passages: readonly Passage[]) => passages.map(where);
const sortedPlaces = (passages: readonly Passage[]) => places(passages).sort();

const SITE = 'site-a';
const OTHER_SITE = 'site-b';

const COFFEE = `Brewing coffee at home

Use a ratio of 1:16, one gram of coffee to sixteen grams of water, for a balanced cup. Grind the beans just before brewing.`;
const NUMBERS = Array.from({ length: 8 }, (_, k) => `Step 1 of 16: row ${k} holds 16 items and 1 spare.`).join('\n');
const JAPANESE = '東京電力の福島第一原子力発電所は日本の発電所です。再稼働の予定はありません。';
// Every character of 原子力発電所, in other words: never the compound.
const JAPANESE_APART = '発電の歴史について。原子の構造と力の関係。所長の話。';
const CHINESE = '机器学习是人工智能的一个分支。这是一个测试文档。';
const ACCENTS = 'Le CAFÉ crème de Zürich est servi à 8 heures, près du lac.';
const CODES = 'Part CL-101 replaces part CL-100. The CL class meets in room 101.';

function defineSearchTests() {
  t.test('the rules of search, on both databases', async (t) => {
    const stores = await twinStores(t);
    await stores.addSite(SITE);
    await stores.addSite(OTHER_SITE);
    const add = (name: string, text: string, extra: Partial<KnowledgeFileInput> = {}) => stores.addFile({ siteId: SITE, name, chunks: chunkText(name, text), ...extra });
    const coffee = await add('coffee.md', COFFEE);
    const numbers = await add('numbers.txt', NUMBERS);
    await add('nuclear.txt', JAPANESE);
    await add('japanese-notes.txt', JAPANESE_APART);
    await add('chinese.txt', CHINESE);
    await add('cafe.txt', ACCENTS);
    await add('codes.txt', CODES);
    // Being indexed: its chunks are written, its status not yet `indexed`.
    await add('half-written.txt', 'Brewing coffee with a ratio of 1:16 and Zürich CAFÉ.', { status: 'uploaded' });
    const otherCoffee = await stores.addFile({ siteId: OTHER_SITE, name: 'other-coffee.md', chunks: chunkText('other-coffee.md', COFFEE) });

    /** Asks both databases; they must find the same passages (order is checked where it matters). */
    async function both(t: Test, query: string, options?: SearchOptions) {
      const found = await stores.search(SITE, query, options);
      t.same(sortedPlaces(found.pg), sortedPlaces(found.sqlite), `${JSON.stringify(query).slice(0, 80)}: the same passages on both`);
      return found;
    }

    t.test('a token with inner punctuation is a phrase', async (t) => {
      const ratio = await both(t, '1:16');
      t.same(places(ratio.pg), ['coffee.md#0'], '1:16 finds the ratio, not the file with 1 and 16 apart');
      t.match(ratio.pg[0]!.text, /ratio of 1:16/);
      const code = await both(t, 'CL-101');
      t.same(places(code.pg), ['codes.txt#0'], 'CL-101 as written, not CL and 101 apart');
      t.same(places((await both(t, 'CL 101')).pg), ['codes.txt#0'], 'as separate words, both are found');
      t.same(places((await both(t, 'ratio 1:15')).pg), ['coffee.md#0'], 'a query of several terms ORs them');
    });

    t.test('Chinese and Japanese queries are segmented as the chunks are', async (t) => {
      for (const query of ['原子力発電所', '福島第一原子力発電所', '原子力発電所の現状', '再稼働']) {
        t.same(places((await both(t, query)).pg), ['nuclear.txt#0'], `${query}: the compound inside a longer run, not its characters apart`);
      }
      const [passage] = (await both(t, '原子力発電所')).pg;
      t.equal(passage!.text, JAPANESE, 'the passage reads as written: no header, no word separators');
      t.same(places((await both(t, '人工智能')).pg), ['chinese.txt#0']);
      t.same(places((await both(t, '测试文档')).pg), ['chinese.txt#0']);
    });

    t.test('case and accents are folded, words stemmed', async (t) => {
      for (const query of ['cafe zurich', 'CAFÉ', 'Zurich', 'zÜrIcH', 'crème']) {
        t.same(places((await both(t, query)).pg), ['cafe.txt#0'], query);
      }
      const stemmed = await both(t, 'brewed coffees');
      t.equal(stemmed.pg[0]?.fileName, 'coffee.md', '"brewed coffees" finds "Brewing coffee"');
      t.equal(stemmed.sqlite[0]?.fileName, 'coffee.md');
    });

    t.test('stopwords count only when the query has nothing else', async (t) => {
      const onlyStopwords = await both(t, 'the of to');
      t.ok(onlyStopwords.pg.length > 0, 'a query of stopwords still finds passages holding them');
      const withContent = await both(t, 'the coffee of the beans');
      t.same(places(withContent.pg), ['coffee.md#0'], 'beside other words they are dropped (else most chunks would match)');
    });

    t.test('hostile queries are text, never syntax', async (t) => {
      const hostile = [
        '"coffee',
        'coffee"',
        '"1:16" OR "',
        'NEAR(coffee water)',
        'NEAR(coffee',
        'coffee*',
        '*',
        '^coffee',
        '-coffee',
        'coffee -water',
        '(coffee',
        'coffee))',
        "coffee' OR '1'='1",
        "'; drop table knowledge_chunks; --",
        'coffee & !water | tea <-> cup',
        "'coffee':* & water:A",
        'coffee AND water NOT tea',
        'text:coffee site_id:site-b',
        '$1 %s ? \\ %',
        'coffee\u0000water',
        '\u0301',
        '☕ coffee 🫘',
        'x'.repeat(3000),
        'coffee '.repeat(80),
        Array.from({ length: 400 }, (_, i) => `word${i}`).join(' '),
      ];
      for (const query of hostile) {
        const found = await both(t, query);
        for (const passage of found.pg) t.ok(passage.fileName && passage.score > 0, 'an ordinary passage');
      }
      t.same(places((await both(t, 'coffee -water')).pg), places((await both(t, 'coffee water')).pg), 'a minus is no operator');
      t.same(places((await both(t, 'coffee*')).pg), places((await both(t, 'coffee')).pg), 'a star is no prefix search');
      const [{ n }] = (await stores.pg.execute<{ n: number }>(sql`select count(*)::int as n from knowledge_chunks`)).rows as [{ n: number }];
      t.ok(n > 0, 'the chunks are all still there');
    });

    t.test('files being indexed and other sites are never searched', async (t) => {
      const found = await both(t, 'Brewing coffee 1:16 Zürich CAFÉ');
      t.notOk(found.pg.some((passage) => passage.fileName === 'half-written.txt'), 'a file not yet indexed is left out');
      t.notOk(found.pg.some((passage) => passage.fileId === otherCoffee), "another site's copy of a file is left out");
      const other = await stores.search(OTHER_SITE, 'coffee');
      t.same(other.pg.map((passage) => passage.fileId), [otherCoffee]);
      t.same(other.sqlite.map((passage) => passage.fileId), [otherCoffee]);
    });

    t.test('a file filter keeps the search within the files given', async (t) => {
      const within = await both(t, 'coffee 16', { fileIds: [numbers] });
      t.ok(within.pg.length > 0 && within.pg.every((passage) => passage.fileId === numbers), 'only the file given');
      t.same(places((await both(t, 'coffee', { fileIds: [coffee, numbers] })).pg), ['coffee.md#0']);
      t.same((await both(t, 'coffee', { fileIds: [] })).pg, [], 'no file given, nothing found');
      t.same((await both(t, 'coffee', { fileIds: [otherCoffee] })).pg, [], "another site's file id finds nothing");
      t.same((await both(t, 'coffee', { fileIds: ['no-such-file'] })).pg, []);
    });

    t.test('passages have the same shape, best first, within the limit', async (t) => {
      const { sqlite, pg } = await both(t, 'coffee water 16 cafe 原子力 人工智能 CL');
      t.ok(pg.length > 3);
      t.same(Object.keys(pg[0]!).sort(), Object.keys(sqlite[0]!).sort(), 'the same fields');
      t.ok(pg.every((passage, i) => passage.score > 0 && (i === 0 || passage.score <= pg[i - 1]!.score)), 'higher scores first');
      t.ok(pg.every((passage) => !passage.text.startsWith('[') && !passage.text.includes('\u200B')), 'no header, no word separator');
      // Which passage comes first may differ here: in so small an index, one chunk more or less
      // in the counts (SQLite counts every site's) moves a term's weight a lot.
      const first = await stores.search(SITE, 'coffee 16 cafe', { limit: 1 });
      t.same([first.pg.length, first.sqlite.length], [1, 1]);
      t.equal((await stores.search(SITE, 'coffee 16 cafe 原子力 人工智能 CL', { limit: 0 })).pg.length, 1, 'at least one');
      const most = await both(t, 'coffee 16 cafe 原子力 人工智能 CL', { limit: 50 });
      t.same(places((await stores.search(SITE, 'coffee 16 cafe 原子力 人工智能 CL', { limit: 500 })).pg), places(most.pg), 'at most 50');
      t.same((await stores.search(SITE, '   ?! ')).pg, [], 'a query with no words finds nothing');
    });

    t.test('chunk vectors are kept in their rows (migration 0003), where ranking reads them', async (t) => {
      const { rows } = await stores.pg.execute<{ storage: string }>(
        sql`select attstorage as storage from pg_attribute where attrelid = 'knowledge_chunks'::regclass and attname = 'search_vector'`,
      );
      t.same(rows, [{ storage: 'm' }]);
    });

    t.test("another site's files never move a site's scores", async (t) => {
      const before = (await stores.search(SITE, 'coffee grams water')).pg;
      await stores.addFile({ siteId: OTHER_SITE, name: 'water.txt', chunks: chunkText('water.txt', 'Water. '.repeat(2000)) });
      t.same((await stores.search(SITE, 'coffee grams water')).pg, before, 'PostgreSQL counts chunks and terms per site (SQLite over the whole index)');
    });
  });

  t.test('ranking is a prepared statement per shape (its number of terms, a file filter), not planned at every search', async (t) => {
    const handle = await openPostgres(await startPostgres(t), { poolMax: 1 });
    t.teardown(() => handle.close());
    await handle.db.insert(pgSchema.sites).values({ id: SITE, name: SITE, handle: SITE, createdAt: new Date() });
    const { search } = postgresStores(handle).knowledge;
    const prepared = async () =>
      (await handle.db.execute<{ name: string }>(sql`select name from pg_prepared_statements where name like 'knowledge_rank_%' order by name`)).rows.map((row) => row.name);
    await search.search(SITE, 'coffee', {});
    await search.search(SITE, 'tea', {});
    t.equal((await prepared()).length, 1, 'one term, twice: one statement');
    await search.search(SITE, 'coffee grinder', {});
    await search.search(SITE, 'coffee grinder', { fileIds: [randomUUID()] });
    await search.search(SITE, 'tea kettle', { fileIds: [randomUUID(), randomUUID(), randomUUID()] });
    t.equal((await prepared()).length, 3, 'two terms, and two terms within files (any number of them)');
  });

  t.test('the retrieval evaluation: both databases find the answers', async (t) => {
    const stores = await twinStores(t);
    await stores.addSite(SITE);
    for (const file of FILES) {
      const name = path.basename(file);
      await stores.addFile({ siteId: SITE, name, chunks: await extractChunks(path.join(fixturesDir, file), extensionOf(name)!, name) });
    }
    const ranks = { sqlite: [] as (number | null)[], pg: [] as (number | null)[] };
    const topScoreRatios: number[] = [];
    let sameFirst = 0;
    let sameGrounding = 0;
    for (const { q, answers } of QUERIES) {
      const found = await stores.search(SITE, q, { limit: TOP });
      ranks.sqlite.push(firstRelevant(found.sqlite, answers));
      ranks.pg.push(firstRelevant(found.pg, answers));
      if (found.pg[0] && found.sqlite[0]) topScoreRatios.push(found.pg[0].score / found.sqlite[0].score);
      // By text, not place: the same passage from a copy of its file (a .doc beside its .docx) is the same.
      if (found.pg[0] && found.sqlite[0] && found.pg[0].text === found.sqlite[0].text) sameFirst++;
      const groundingTexts = (passages: Passage[]) => groundingPassages(q, passages).map((passage) => passage.text);
      if (groundingTexts(found.pg).join() === groundingTexts(found.sqlite).join()) sameGrounding++;
    }
    const sqlite = retrievalFigures(ranks.sqlite);
    const pg = retrievalFigures(ranks.pg);
    const figures = (f: typeof pg) => `recall@5 ${f.recallAt5.toFixed(3)}, MRR@10 ${f.mrrAt10.toFixed(3)}`;
    topScoreRatios.sort((a, b) => a - b);
    t.comment(`${QUERIES.length} queries over ${FILES.length} fixture files`);
    t.comment(`SQLite (FTS5, bm25):         ${figures(sqlite)}`);
    t.comment(`PostgreSQL (tsvector, BM25): ${figures(pg)}`);
    t.comment(`the same first passage for ${sameFirst} of ${QUERIES.length} queries, the same grounding passages, in the same order (relevance floor), for ${sameGrounding}`);
    t.comment(`best score, PostgreSQL / SQLite: median ${topScoreRatios[topScoreRatios.length >> 1]!.toFixed(2)}, from ${topScoreRatios[0]!.toFixed(2)} to ${topScoreRatios.at(-1)!.toFixed(2)}`);
    t.ok(pg.recallAt5 >= 0.95, `PostgreSQL recall@5 ${pg.recallAt5.toFixed(3)} >= 0.95`);
    t.ok(pg.mrrAt10 >= 0.9, `PostgreSQL MRR@10 ${pg.mrrAt10.toFixed(3)} >= 0.9`);
    t.ok(topScoreRatios[0]! > 0.5 && topScoreRatios.at(-1)! < 2, 'scores on the scale of SQLite: the best passage within half to twice its SQLite score');
  });
}
