import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import t, { type Test } from 'tap';
import { openDatabase } from '../../src/db/sqlite.js';
import * as pgSchema from '../../src/db/pg-schema.js';
import { inTransaction, openPostgres, sendAhead, postgresMigrationsFolder, type PostgresHandle } from '../../src/db/postgres.js';
import * as sqliteSchema from '../../src/db/schema.js';
import { foldText, slugify } from '../../src/text/slug.js';
import { nodeArgs } from '../helpers/built.js';
import { canControlPostgres, ownPostgres, postgresTests, restartPostgres, startPostgres, stopPostgres } from '../helpers/postgres.js';
import { asc, desc, getTableColumns, getTableName, is, SQL, sql, Table, migrator, sqliteCore } from '../../src/db/orm.js';
import { pgCore } from '../../src/db/pg-orm.js';

const { readMigrationFiles } = migrator;
const { getTableConfig: pgTableConfig, PgTable } = pgCore;
const { getTableConfig: sqliteTableConfig, SQLiteTable } = sqliteCore;
type SQLiteTable = InstanceType<typeof SQLiteTable>;
type PgTable = InstanceType<typeof PgTable>;


// ---------------------------------------------------------------------------------------------
// The schemas are twins at compile time: every table's rows, read and written, have the same
// TypeScript type on both databases (PostgreSQL's search column aside). If this stops compiling,
// compare `typeof sqliteSchema.<table>.$inferSelect` with its pg-schema.ts twin.
// ---------------------------------------------------------------------------------------------

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type TablesOf<M> = { [K in keyof M as M[K] extends Table ? K : never]: M[K] };
type Selected<M> = { [K in keyof TablesOf<M>]: TablesOf<M>[K] extends { $inferSelect: infer R } ? R : never };
type Inserted<M> = { [K in keyof TablesOf<M>]: TablesOf<M>[K] extends { $inferInsert: infer R } ? R : never };
/** Columns PostgreSQL has and SQLite does not: knowledge_chunks' search document, knowledge_embeddings' sign bits. */
type PgOnly = 'searchVector' | 'signBits';
type Compare<A, B> = {
  [K in keyof A | keyof B]: K extends keyof A ? (K extends keyof B ? Same<A[K], Omit<B[K], PgOnly>> : 'no such table in PostgreSQL') : 'no such table in SQLite';
};
type AllTrue<T> = T[keyof T] extends true ? true : false;

const selectedRowsMatch: AllTrue<Compare<Selected<typeof sqliteSchema>, Selected<typeof pgSchema>>> = true;
const insertedRowsMatch: AllTrue<Compare<Inserted<typeof sqliteSchema>, Inserted<typeof pgSchema>>> = true;

// Stops and restarts its server: a cluster of its own, not the suite's shared one.
ownPostgres();
postgresTests(definePostgresTests);

function tablesOf(module: Record<string, unknown>, kind: typeof SQLiteTable | typeof PgTable): Map<string, Table> {
  const tables = Object.values(module).filter((value): value is Table => is(value, kind));
  return new Map(tables.map((table) => [getTableName(table), table]));
}

const sqliteTables = tablesOf(sqliteSchema, SQLiteTable);
const pgTables = tablesOf(pgSchema, PgTable);

/** What must be the same in both schemas, table by table, in a form tap can compare. */
function shape(table: Table, config: ReturnType<typeof sqliteTableConfig> | ReturnType<typeof pgTableConfig>) {
  const name = (column: unknown) => (column as { name?: string }).name ?? '(expression)';
  return {
    columns: Object.fromEntries(
      Object.entries(getTableColumns(table)).map(([key, column]) => [
        key,
        {
          name: column.name,
          notNull: column.notNull,
          primary: column.primary,
          default: column.default === undefined ? null : is(column.default, SQL) ? 'an SQL expression' : column.default,
          enumValues: column.enumValues ?? null,
        },
      ]),
    ),
    primaryKeys: config.primaryKeys.map((key) => key.columns.map(name)),
    uniqueConstraints: config.uniqueConstraints.map((unique) => unique.columns.map(name)),
    indexes: config.indexes
      .map((index) => ({ name: index.config.name ?? '(unnamed)', unique: index.config.unique, columns: index.config.columns.map(name) }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    foreignKeys: config.foreignKeys
      .map((key) => {
        const reference = key.reference();
        return {
          columns: reference.columns.map(name),
          table: getTableName(reference.foreignTable),
          foreignColumns: reference.foreignColumns.map(name),
          onDelete: key.onDelete ?? 'no action',
          onUpdate: key.onUpdate ?? 'no action',
        };
      })
      .sort((a, b) => a.columns.join().localeCompare(b.columns.join())),
  };
}

/** SQLite's hidden rowid, a real column in PostgreSQL (migration 0002) where shared queries use it. */
const ROWID_TABLES = ['posts', 'webhooks', 'webhook_deliveries'];

async function rows<T>(handle: PostgresHandle, query: SQL): Promise<T[]> {
  return (await handle.db.execute(query)).rows as T[];
}

async function open(t: Test, url: string): Promise<PostgresHandle> {
  const handle = await openPostgres(url, { poolMax: 4 });
  t.teardown(() => handle.close());
  return handle;
}

type MigrationRow = { id: number; hash: string; created_at: string };
const appliedMigrations = (handle: PostgresHandle) =>
  rows<MigrationRow>(handle, sql`select id, hash, created_at from drizzle.__drizzle_migrations order by id`);
const expectedMigrations = () => readMigrationFiles({ migrationsFolder: postgresMigrationsFolder() });

async function insertSite(handle: PostgresHandle, id = 'site-1') {
  await handle.db.insert(pgSchema.sites).values({ id, name: 'Blog', handle: id, createdAt: new Date('2025-01-02T03:04:05.678Z') });
}

function definePostgresTests() {
  t.test('the row types of both schemas are the same (checked when compiling)', async (t) => {
    t.equal(selectedRowsMatch, true);
    t.equal(insertedRowsMatch, true);
  });

  t.test('every SQLite table has a PostgreSQL twin: same columns, keys, indexes, foreign keys and defaults', async (t) => {
    t.same([...pgTables.keys()].sort(), [...sqliteTables.keys()].sort(), 'the same tables');
    for (const [tableName, sqliteTable] of sqliteTables) {
      const pgTable = pgTables.get(tableName);
      if (!pgTable) continue;
      const expected = shape(sqliteTable, sqliteTableConfig(sqliteTable as SQLiteTable));
      const actual = shape(pgTable, pgTableConfig(pgTable as PgTable));
      if (tableName === 'knowledge_chunks') {
        t.match(actual.columns.searchVector, { name: 'search_vector', notNull: true }, 'PostgreSQL alone has the search document');
        t.match(actual.indexes.find((index) => index.name === 'knowledge_chunks_search_idx'), { columns: ['search_vector'] });
        t.equal(pgTableConfig(pgTable as PgTable).indexes.find((index) => index.config.name === 'knowledge_chunks_search_idx')?.config.method, 'gin');
        delete actual.columns.searchVector;
        actual.indexes = actual.indexes.filter((index) => index.name !== 'knowledge_chunks_search_idx');
      }
      if (tableName === 'knowledge_embeddings') {
        t.match(actual.columns.signBits, { name: 'sign_bits', notNull: true }, 'PostgreSQL alone has the sign bits of the vectors');
        delete actual.columns.signBits;
      }
      t.same(actual, expected, tableName);
    }
  });

  t.test('migrations apply on an empty database, and applying them again changes nothing', async (t) => {
    const url = await startPostgres(t);
    const first = await openPostgres(url);
    const applied = await appliedMigrations(first);
    t.same(
      applied.map((row) => row.hash),
      expectedMigrations().map((migration) => migration.hash),
      'every migration, once, in order',
    );

    // The database as drizzle-kit generated it, plus the custom SQL: every column of pg-schema.ts
    // (and the rowid columns), timestamps to the millisecond, every index.
    const columns = await rows<{ table_name: string; column_name: string; data_type: string; datetime_precision: number | null }>(
      first,
      sql`select table_name, column_name, data_type, datetime_precision from information_schema.columns where table_schema = 'public'`,
    );
    for (const [tableName, table] of pgTables) {
      const inDatabase = columns.filter((column) => column.table_name === tableName);
      const expected = Object.values(getTableColumns(table)).map((column) => column.name);
      if (ROWID_TABLES.includes(tableName)) expected.push('rowid');
      t.same(inDatabase.map((column) => column.column_name).sort(), expected.sort(), `columns of ${tableName}`);
    }
    const timestamps = columns.filter((column) => column.data_type.startsWith('timestamp'));
    t.ok(timestamps.length > 30);
    t.same(new Set(timestamps.map((column) => `${column.data_type} (${column.datetime_precision})`)), new Set(['timestamp with time zone (3)']));
    const indexes = await rows<{ tablename: string; indexname: string }>(first, sql`select tablename, indexname from pg_indexes where schemaname = 'public'`);
    for (const [tableName, table] of pgTables) {
      const expected = pgTableConfig(table as PgTable).indexes.map((index) => index.config.name!);
      // Custom SQL over the rowid column, which pg-schema.ts does not know (0005_post_list_order.sql).
      if (tableName === 'posts') expected.push('posts_site_list_order_idx');
      const actual = indexes.filter((index) => index.tablename === tableName).map((index) => index.indexname);
      t.same(
        actual.filter((name) => !/(_pkey|_pk|_rowid_unique)$/.test(name)).sort(),
        expected.sort(),
        `indexes of ${tableName}`,
      );
    }

    await insertSite(first);
    await first.close();
    const second = await open(t, url);
    t.same(await appliedMigrations(second), applied, 'nothing applied the second time');
    t.equal((await second.db.select().from(pgSchema.sites)).length, 1, 'the data is still there');
  });

  t.test('instances starting at once on an empty database migrate it exactly once, and all come up', async (t) => {
    const url = await startPostgres(t);
    const instances = 4;
    const children: { child: ChildProcess; output: string; exit: Promise<unknown[]> }[] = [];
    for (let i = 0; i < instances; i++) {
      const child = spawn(process.execPath, nodeArgs('test/helpers/postgres-open.ts'), {
        env: { ...process.env, DATABASE_URL: url },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const entry = { child, output: '', exit: once(child, 'exit') };
      child.stdout!.on('data', (chunk) => (entry.output += chunk));
      child.stderr!.on('data', (chunk) => (entry.output += chunk));
      children.push(entry);
    }
    t.teardown(() => children.forEach(({ child }) => child.exitCode === null && child.kill('SIGKILL')));
    // All loaded, then all told at once: the migrations race for real.
    const deadline = Date.now() + 60_000;
    while (!children.every((entry) => entry.output.includes('loaded'))) {
      if (Date.now() > deadline) throw new Error(`children did not load: ${children.map((entry) => entry.output).join('\n')}`);
      if (children.some((entry) => entry.child.exitCode !== null)) throw new Error(`a child ended early: ${children.map((entry) => entry.output).join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const { child } of children) child.stdin!.write('go\n');
    const exits = await Promise.all(children.map((entry) => entry.exit));
    for (const [i, entry] of children.entries()) {
      t.same(exits[i], [0, null], `instance ${i + 1} exited cleanly`);
      t.match(entry.output, /^loaded\nup\n$/, `instance ${i + 1} came up`);
    }
    const handle = await open(t, url);
    const applied = await appliedMigrations(handle);
    t.same(
      applied.map((row) => row.hash),
      expectedMigrations().map((migration) => migration.hash),
      'each migration exactly once',
    );
  });

  t.test('a database the text functions cannot work in is refused, saying why', async (t) => {
    const url = await startPostgres(t, { encoding: 'SQL_ASCII' });
    await t.rejects(openPostgres(url), /Unsuitable PostgreSQL database: the database must use the UTF8 encoding \(it uses SQL_ASCII\)/);
  });

  t.test('a server that does not answer fails the start, and the URL it names hides its password', async (t) => {
    const url = 'postgres://blog:s3cret@127.0.0.1:1/blog';
    const error = await openPostgres(url).then(
      () => null,
      (reason: Error) => reason,
    );
    t.match(error, { code: 'ECONNREFUSED' });
    t.notMatch(String(error), /s3cret/);
  });

  t.test('rows come back as from SQLite: the same JSON byte for byte, in any session time zone', async (t) => {
    const url = await startPostgres(t);
    // A time zone 5:45 off UTC: Dates must not depend on the session's.
    const zonedUrl = `${url}?options=${encodeURIComponent('-c TimeZone=Asia/Kathmandu')}`;
    const handle = await open(t, zonedUrl);
    t.same(await rows(handle, sql`select current_setting('TimeZone') as tz`), [{ tz: 'Asia/Kathmandu' }]);
    t.equal(handle.describe(), zonedUrl, 'no password to hide');

    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-pg-twin-'));
    const sqlite = openDatabase(dataDir);
    t.teardown(() => {
      sqlite.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    const at = new Date('2024-02-29T23:59:59.987Z');
    const later = new Date(at.getTime() + 1);
    const site = { id: 'site-1', name: 'Blog', handle: 'blog', createdAt: at, contentUpdatedAt: later };
    const post = {
      id: 'post-1',
      siteId: 'site-1',
      slug: 'cafe',
      title: 'Café',
      tags: ['Café', 'naïve', '東京'],
      isDraft: false,
      visibility: 'unlisted' as const,
      publishedAt: new Date(0),
      createdAt: at,
      updatedAt: later,
    };
    const file = { id: 'file-1', siteId: 'site-1', name: 'a.md', extension: 'md', mediaType: 'text/markdown', sizeBytes: 5_000_000_000, status: 'indexed' as const, storageKey: 'k', createdAt: at, updatedAt: at };
    const chunk = { fileId: 'file-1', siteId: 'site-1', ordinal: 0, text: 'Brewing coffee' };
    const job = {
      id: 'job-1',
      kind: 'generate-post',
      siteId: 'site-1',
      payload: { topic: 'Coffee', params: { tone: 'plain', knowledgeFileIds: ['file-1'], words: 800 } },
      status: 'succeeded' as const,
      scheduledFor: at,
      runAfter: at,
      maxAttempts: 3,
      result: { postId: 'post-1', missingFileIds: [] },
      createdAt: at,
      updatedAt: at,
    };
    const webhook = { id: 'hook-1', siteId: 'site-1', url: 'https://example.com/hook', events: ['post.published' as const], enabled: true, secret: 's', createdAt: at, updatedAt: at };
    const delivery = { id: 'delivery-1', siteId: 'site-1', webhookId: 'hook-1', event: 'post.published' as const, payload: '{"b":1,"a":2}', status: 'pending' as const, retryUntil: later, createdAt: at, updatedAt: at };
    const attempt = { deliveryId: 'delivery-1', attempt: 1, startedAt: at, durationMs: 12, outcome: 'retry' as const };
    const key = { siteId: 'site-1', key: 'k-1', fingerprint: 'f', responseStatus: 201, responseBody: '{}', createdAt: at, expiresAt: later };

    const s = sqliteSchema;
    sqlite.db.transaction((tx) => {
      tx.insert(s.sites).values(site).run();
      tx.insert(s.posts).values(post).run();
      tx.insert(s.knowledgeFiles).values(file).run();
      tx.insert(s.knowledgeChunks).values(chunk).run();
      tx.insert(s.jobs).values(job).run();
      tx.insert(s.webhooks).values(webhook).run();
      tx.insert(s.webhookDeliveries).values(delivery).run();
      tx.insert(s.webhookAttempts).values(attempt).run();
      tx.insert(s.idempotencyKeys).values(key).run();
    });
    const p = pgSchema;
    await handle.transaction(async (tx) => {
      await tx.insert(p.sites).values(site);
      await tx.insert(p.posts).values(post);
      await tx.insert(p.knowledgeFiles).values(file);
      await tx.insert(p.knowledgeChunks).values(chunk);
      await tx.insert(p.jobs).values(job);
      await tx.insert(p.webhooks).values(webhook);
      await tx.insert(p.webhookDeliveries).values(delivery);
      await tx.insert(p.webhookAttempts).values(attempt);
      await tx.insert(p.idempotencyKeys).values(key);
    });

    for (const [tableName, sqliteTable] of sqliteTables) {
      const fromSqlite = sqlite.db.select().from(sqliteTable as SQLiteTable).all();
      const fromPg = (await handle.db.select().from(pgTables.get(tableName) as PgTable)) as Record<string, unknown>[];
      if (tableName === 'knowledge_chunks') {
        t.equal(fromPg[0]!.searchVector, `'brew':1 'coffe':2`);
        delete fromPg[0]!.searchVector;
      }
      if (tableName === 'jobs') {
        // jsonb keeps values, not the order of an object's keys (shortest first): the same
        // payload, not the same text. Nothing shows a stored payload whole; the rest is identical.
        t.same(fromPg, fromSqlite, 'jobs: the same values');
        t.not(JSON.stringify(fromPg[0]!.payload), JSON.stringify(fromSqlite[0]!.payload));
        const withoutJson = (rows: Record<string, unknown>[]) => rows.map(({ payload: _payload, result: _result, ...rest }) => rest);
        t.equal(JSON.stringify(withoutJson(fromPg)), JSON.stringify(withoutJson(fromSqlite)), 'jobs: every other column');
        continue;
      }
      t.equal(JSON.stringify(fromPg), JSON.stringify(fromSqlite), tableName);
    }
    const [read] = await handle.db.select().from(p.posts);
    t.ok(read!.createdAt instanceof Date);
    t.equal(read!.createdAt.getTime(), at.getTime(), 'to the millisecond');
    t.equal(read!.isDraft, false);
    t.same(read!.tags, post.tags);
  });

  t.test("SQLite's hidden rowid: a column of its own, out of the rows, ordering ties by insertion", async (t) => {
    const handle = await open(t, await startPostgres(t));
    await insertSite(handle);
    const at = new Date('2025-01-01T00:00:00.000Z');
    // Ids out of order, the same creation time: only the insertion order tells them apart.
    for (const id of ['c', 'a', 'b']) {
      await handle.db.insert(pgSchema.posts).values({ id, siteId: 'site-1', slug: id, title: id, isDraft: false, createdAt: at, updatedAt: at });
    }
    const newestFirst = await handle.db
      .select({ id: pgSchema.posts.id, rowid: sql<number>`rowid` })
      .from(pgSchema.posts)
      .orderBy(desc(pgSchema.posts.createdAt), desc(sql`rowid`));
    t.same(
      newestFirst.map((row) => row.id),
      ['b', 'a', 'c'],
    );
    t.same(newestFirst.map((row) => Number(row.rowid)), [3, 2, 1]);
    const [whole] = await handle.db.select().from(pgSchema.posts).orderBy(asc(pgSchema.posts.id));
    t.notOk('rowid' in whole!, 'no part of the row');
  });

  t.test('knowledge search: a generated tsvector column with a GIN index, ranked with ts_rank_cd', async (t) => {
    const handle = await open(t, await startPostgres(t));
    await insertSite(handle);
    const at = new Date();
    await handle.db.insert(pgSchema.knowledgeFiles).values({ id: 'file-1', siteId: 'site-1', name: 'notes.md', extension: 'md', mediaType: 'text/markdown', sizeBytes: 1, status: 'indexed', storageKey: 'k', createdAt: at, updatedAt: at });
    const texts = [
      '[notes.md]\nBrewing coffee: the grind decides how fast water extracts. Coffee, coffee, coffee.',
      'A CAFÉ in Zürich serves naïve pour-over; Node.js runs the till, model CL-101.',
      // As the chunker writes Japanese: U+200B between the words Intl.Segmenter finds.
      '福島\u200B第一\u200B原子力\u200B発電所\u200Bの\u200B事故',
      'The history of tea in the 18th century.',
    ];
    await handle.db.insert(pgSchema.knowledgeChunks).values(texts.map((text, ordinal) => ({ fileId: 'file-1', siteId: 'site-1', ordinal, text })));
    await handle.db.execute(sql`analyze knowledge_chunks`);

    /** Ordinals of the matching chunks, best first, for a tsquery built from `query`. */
    const search = async (query: SQL) =>
      (
        await rows<{ ordinal: number; rank: number }>(
          handle,
          sql`select ordinal, ts_rank_cd(search_vector, q) as rank from knowledge_chunks, (select ${query} as q) as query
               where site_id = 'site-1' and search_vector @@ q order by rank desc, id`,
        )
      ).map((row) => row.ordinal);
    // The way the search code will build its queries: each term a phrase, OR-ed together.
    const phrases = (...terms: string[]) => sql.join(terms.map((term) => sql`phraseto_tsquery('knowledge', search_text(${term}))`), sql` || `);

    t.same(await search(sql`websearch_to_tsquery('knowledge', search_text('brewed coffees'))`), [0], 'stemmed, as with the porter tokenizer');
    t.same(await search(phrases('coffee', 'tea')), [0, 3], 'ranked: the chunk saying coffee four times first');
    t.same(await search(phrases('cafe', 'zurich', 'naive')), [1], 'accents and case folded');
    t.same(await search(phrases('node js')), [1], '`node.js` is indexed as two words, as FTS5 split it');
    t.same(await search(phrases('cl 101')), [1]);
    t.same(await search(phrases('pour over')), [1]);
    t.same(await search(phrases('原子力 発電所')), [2], 'Japanese words split at the separators the chunker writes');
    t.same(await search(phrases('発電所 原子力')), [], 'a phrase keeps its order');
    t.same(await search(phrases('第一')), [2]);
    t.same(await search(phrases('the')), [3, 0, 1], 'no stopword list (the query code decides); the chunk saying it twice first');
    t.same(await search(sql`to_tsquery('knowledge', 'histori & centuri')`), [3]);
    t.same(await search(phrases('notes md')), [0], 'file names in chunk headers are searchable');

    // The GIN index answers (sequential scans off: four rows are cheaper to scan otherwise).
    await handle.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      const plan = (await tx.execute(sql`explain select id from knowledge_chunks where search_vector @@ phraseto_tsquery('knowledge', search_text('coffee'))`)).rows;
      t.match(JSON.stringify(plan), /knowledge_chunks_search_idx/);
    });

    // The column follows the text, and chunks go with their file.
    await handle.db.update(pgSchema.knowledgeChunks).set({ text: 'Espresso only' }).where(sql`ordinal = 0`);
    t.same(await search(phrases('coffee')), []);
    t.same(await search(phrases('espresso')), [0]);
    await handle.db.delete(pgSchema.knowledgeFiles);
    t.same(await rows(handle, sql`select count(*)::int as n from knowledge_chunks`), [{ n: 0 }], 'cascaded');
  });

  t.test('slugify() and fold() in SQL answer what the JavaScript functions do', async (t) => {
    const handle = await open(t, await startPostgres(t));
    const compare = async (inputs: string[]) => {
      const answers = await rows<{ input: string; slug: string; folded: string }>(
        handle,
        sql`select input, slugify(input) as slug, fold(input) as folded from unnest(${sql.param(inputs)}::text[]) with ordinality as u(input, n) order by n`,
      );
      return {
        slugs: answers.filter((row) => row.slug !== slugify(row.input)).map((row) => ({ input: row.input, sql: row.slug, js: slugify(row.input) })),
        folds: answers.filter((row) => row.folded !== foldText(row.input)).map((row) => ({ input: row.input, sql: row.folded, js: foldText(row.input) })),
      };
    };
    const tricky = [
      '',
      ' ',
      '---',
      'Hello, World!',
      'Crème Brûlée — à la carte',
      'Straße ẞ Æsir æble Øre ø Œuvre œuf',
      'İstanbul ıi KELVIN \u212A Å',
      'ΣΑΣ Οδυσσεύς ΌΣΟΣ',
      'Ǆemal ǅ ǆ ﬁnance ﬀ',
      '①②③ ¼ x² ℌ 𝐀𝐁𝐂 ＡＢＣ１２３',
      '福島第一原子力発電所',
      'こんにちは カタカナ ｶﾀｶﾅ',
      '한국어 텍스트',
      'ภาษาไทย हिन्दी العربية עִבְרִית',
      'emoji 😀👍🏽 family 👨‍👩‍👧',
      'tab\tnew\nline\u00A0nbsp\u200Bzwsp',
      'ﬀ'.repeat(50),
      'a'.repeat(79) + ' b',
      'x-'.repeat(60),
      '  leading and trailing  ',
      'C++ & C# / .NET',
      '日本語 and English mixed: Café-Bar №5',
      'Zalgo: Z̴͉̈a̷̛͓l̵͎̈́g̶̬̈́o̵̥͝',
      'Ångström Ǻ ǻ ǽ',
    ];
    t.same(await compare(tricky), { slugs: [], folds: [] }, 'tricky inputs');
    // Expectations of the JavaScript itself, so the comparison cannot pass on a shared mistake.
    t.same(
      (await rows<{ slug: string; folded: string }>(handle, sql`select slugify('Crème Brûlée — Straße!') as slug, fold('CAFÉ Ǆ') as folded`))[0],
      { slug: 'creme-brulee-strasse', folded: 'cafe dz' },
    );
    t.same(await rows(handle, sql`select slugify(null) as slug, fold(null) as folded`), [{ slug: null, folded: null }], 'NULL in, NULL out');

    // Every character of the Basic Multilingual Plane and of a few other blocks, alone and between
    // letters, but those Unicode assigned after 14.0 (PostgreSQL 15 normalizes by Unicode 14, Node
    // 20 by 17: their NFKD, so their folding, differs).
    const newerThanUnicode14 = new Set([0x1c89, 0xa7cb, 0xa7cc, 0xa7ce, 0xa7d2, 0xa7d4, 0xa7da, 0xa7dc, 0xa7f1]);
    const ranges: [number, number][] = [
      [0x1, 0xd7ff],
      [0xe000, 0xfffd],
      [0x1d400, 0x1d7ff], // mathematical letters and digits
      [0x1f100, 0x1f1ff], // enclosed letters
      [0x1f300, 0x1f64f], // emoji
      [0x20000, 0x200ff], // CJK extension B
    ];
    const inputs: string[] = [];
    for (const [from, to] of ranges) {
      for (let code = from; code <= to; code++) {
        if (newerThanUnicode14.has(code)) continue;
        const character = String.fromCodePoint(code);
        inputs.push(character, `A${character}b`);
      }
    }
    const sweep = await compare(inputs);
    t.same({ slugs: sweep.slugs.slice(0, 20), folds: sweep.folds.slice(0, 20) }, { slugs: [], folds: [] }, `${inputs.length} inputs, one character each`);
  });

  t.test('a stopped PostgreSQL fails pings without ending the process, and serves again once back', { skip: !canControlPostgres() && 'TEST_DATABASE_URL names a server tests do not control' }, async (t) => {
    const handle = await open(t, await startPostgres(t));
    await handle.ping();
    await stopPostgres();
    try {
      await t.rejects(handle.ping(), 'no answer while stopped');
    } finally {
      await restartPostgres();
    }
    // The pool dropped the connections the stop broke, and opens new ones.
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await handle.ping();
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    t.pass('answers again');
    t.equal((await handle.db.select().from(pgSchema.sites)).length, 0);
  });

  t.test('a connection lost between its checkout and BEGIN goes back to the pool and is dropped: the next transaction gets a new one, and the pool closes', async (t) => {
    const pool = new pg.Pool({ connectionString: await startPostgres(t), max: 1, connectionTimeoutMillis: 2000 });
    pool.on('error', () => {});
    t.teardown(() => (pool.ended ? undefined : pool.end()));
    // As a server stopping just after the checkout, before the pool noticed: the BEGIN fails.
    let lose = true;
    pool.on('acquire', (client) => {
      if (lose) void client.end();
      lose = false;
    });
    await t.rejects(inTransaction(pool, (tx) => tx.execute(sql`select 1`)), /not queryable/, 'the transaction fails at its BEGIN');
    const one = await inTransaction(pool, async (tx) => (await tx.execute<{ one: number }>(sql`select 1 as one`)).rows[0]!.one);
    t.equal(one, 1, 'the one connection the pool may open is a new one');
    t.equal(pool.totalCount, 1);
    await pool.end();
    t.pass('the pool closes: no connection left checked out');
  });

  t.test('a statement sent ahead that fails is what its transaction tells, and the transaction never commits past it', async (t) => {
    const handle = await open(t, await startPostgres(t));
    const site = { id: 'ahead', name: 'Ahead', handle: 'ahead', createdAt: new Date() };
    // Nothing behind it: COMMIT would have rolled back without a word.
    await t.rejects(handle.transaction(async (tx) => sendAhead(tx, 'select 1/0')), { code: '22012' }, 'checked before COMMIT');
    // Behind it, a write that fails for it ("current transaction is aborted").
    const failing = handle.transaction(async (tx) => {
      sendAhead(tx, { text: 'select 1/$1::int', values: [0] });
      await tx.insert(pgSchema.sites).values(site);
    });
    await t.rejects(failing, { code: '22012' }, 'the first failure is told, not the one it caused');
    t.equal((await handle.db.select().from(pgSchema.sites)).length, 0, 'nothing written');
    t.throws(() => sendAhead(handle.db, 'select 1'), /only inside a transaction/, 'on the pool it would lock or check nothing');
    await handle.transaction(async (tx) => {
      sendAhead(tx, { text: 'select 1 from sites where id = $1 for update', values: [site.id] });
      await tx.insert(pgSchema.sites).values(site);
    });
    t.equal((await handle.db.select().from(pgSchema.sites)).length, 1, 'and one that succeeds commits with the rest');
  });
}
