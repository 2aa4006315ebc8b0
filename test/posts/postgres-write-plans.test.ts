/**
 * The statements a post write runs on PostgreSQL (PG_POST_WRITE_SQL), and the statistics row
 * knowledge search reads, as PostgreSQL plans them on a site of thousands of posts and chunks:
 * each finds its rows through an index (no scan of the table, no sort), so a write's time under
 * the site's lock does not grow with the site. Also: the statistics row follows the chunks
 * through inserts, updates and deletes, and the content version's notification arrives.
 */
import pg from 'pg';
import t from 'tap';
import * as pgSchema from '../../src/db/pg-schema.js';
import { CONTENT_VERSION_CHANNEL } from '../../src/db/pg-content-versions.js';
import { PG_POST_WRITE_SQL } from '../../src/posts/postgres.js';
import { openTestPostgres, postgresTests, startPostgres } from '../helpers/postgres.js';

const SITE_ID = 'site-1';
const T0 = Date.parse('2026-03-02T09:00:00.000Z');

postgresTests(() => {
  t.test('post write statements and the search statistics row use indexes, with no sort', async (t) => {
    const url = await startPostgres(t);
    const handle = await openTestPostgres(t, url);
    const { db } = handle;
    await db.insert(pgSchema.sites).values({ id: SITE_ID, name: 'Plans', handle: 'plans', createdAt: new Date(T0) });
    await db.insert(pgSchema.sites).values({ id: 'site-2', name: 'Other', handle: 'other', createdAt: new Date(T0) });
    // An install of many sites: a site's row is found by key, not among all.
    await db.insert(pgSchema.sites).values(Array.from({ length: 1000 }, (_, i) => ({ id: `many-${i}`, name: `Site ${i}`, handle: `many-${i}`, createdAt: new Date(T0) })));
    for (let batch = 0; batch < 8; batch++) {
      const rows = Array.from({ length: 500 }, (_, i) => {
        const n = batch * 500 + i;
        return {
          id: `post-${n}`,
          siteId: n % 4 ? SITE_ID : 'site-2',
          slug: `post-${n}`,
          title: `Post ${n}`,
          tags: [],
          isDraft: n % 3 === 0,
          visibility: 'public' as const,
          createdAt: new Date(T0 + n * 1000),
          updatedAt: new Date(T0 + n * 1000),
        };
      });
      await db.insert(pgSchema.posts).values(rows);
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    t.teardown(() => client.end());
    await client.query('vacuum analyze');

    const planOf = async (text: string, values: unknown[]) => (await client.query<{ 'QUERY PLAN': string }>(`explain ${text}`, values)).rows.map((row) => row['QUERY PLAN']).join('\n');
    const noScanNoSort = (plan: string, what: string) => {
      t.notMatch(plan, /Seq Scan on posts|Seq Scan on sites|Seq Scan on knowledge/, `${what}: no scan of a whole table`);
      t.notMatch(plan, /(^|-> +)Sort +\(/m, `${what}: no sort`);
    };

    const context = await planOf(PG_POST_WRITE_SQL.creationContext, [SITE_ID, 'post-7']);
    t.match(context, /Index Only Scan (Backward )?using posts_site_list(_order)?_idx/, 'the newest creation time from the list index');
    t.match(context, /Index Scan using posts_site_slug_unique/, "the slug's holder from the (site, slug) index");
    noScanNoSort(context, 'creation context');

    const lock = await planOf(PG_POST_WRITE_SQL.lockSite, [SITE_ID]);
    t.match(lock, /Index Scan using sites_pkey/, "the site's lock: its row by key");
    noScanNoSort(lock, 'lock');

    for (const [name, text, values] of [
      ['recordChange', PG_POST_WRITE_SQL.recordChange, [SITE_ID, new Date(), 'post-7']],
      ['recordCountedChange', PG_POST_WRITE_SQL.recordCountedChange, [SITE_ID, new Date(), 1, 0, 0, 1, 0, 0, 'post-7']],
    ] as const) {
      const plan = await planOf(text, [...values]);
      t.match(plan, /Index Scan using sites_pkey/, `${name}: the site's row by key`);
      noScanNoSort(plan, name);
    }

    // The statistics row follows the chunks, and search reads it by key.
    await db.insert(pgSchema.knowledgeFiles).values({
      id: 'file-1', siteId: SITE_ID, name: 'notes.md', extension: 'md', mediaType: 'text/markdown', sizeBytes: 10, status: 'indexed', storageKey: 'k', createdAt: new Date(T0), updatedAt: new Date(T0),
    });
    const chunkRows = Array.from({ length: 300 }, (_, i) => ({ fileId: 'file-1', siteId: SITE_ID, ordinal: i, text: `notes.md\n\nbees and hives number ${i} ${'honey '.repeat(i % 7)}` }));
    await db.insert(pgSchema.knowledgeChunks).values(chunkRows);
    const stats = async () => (await client.query('select chunks::int, total_length::int from knowledge_search_stats where site_id = $1', [SITE_ID])).rows[0];
    const truth = async () => (await client.query('select count(*)::int as chunks, sum(length(search_vector))::int as total_length from knowledge_chunks where site_id = $1', [SITE_ID])).rows[0];
    t.same(await stats(), await truth(), 'after inserts');
    await client.query(`update knowledge_chunks set text = text || ' wax' where ordinal < 50`);
    t.same(await stats(), await truth(), 'after updates');
    await client.query('delete from knowledge_chunks where ordinal >= 200');
    t.same(await stats(), await truth(), 'after deletes');
    const statsPlan = await planOf('select chunks, total_length from knowledge_search_stats where site_id = $1', [SITE_ID]);
    t.match(statsPlan, /Index Scan using knowledge_search_stats_pkey|Seq Scan on knowledge_search_stats/, 'one row per site');
  });

  t.test("a site's content version change is notified on commit, and only then", async (t) => {
    const url = await startPostgres(t);
    const handle = await openTestPostgres(t, url);
    await handle.db.insert(pgSchema.sites).values({ id: SITE_ID, name: 'Notify', handle: 'notify', createdAt: new Date(T0) });
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    t.teardown(() => listener.end());
    const payloads: string[] = [];
    listener.on('notification', (message) => payloads.push(`${message.channel}|${message.payload}`));
    await listener.query(`LISTEN ${CONTENT_VERSION_CHANNEL}`);
    const writer = new pg.Client({ connectionString: url });
    await writer.connect();
    t.teardown(() => writer.end());
    await writer.query('begin');
    await writer.query('update sites set content_version = content_version + 1 where id = $1', [SITE_ID]);
    await writer.query('rollback');
    await writer.query('update sites set name = $2 where id = $1', [SITE_ID, 'Renamed']);
    await writer.query('update sites set content_version = content_version + 1 where id = $1', [SITE_ID]);
    const deadline = Date.now() + 10_000;
    while (payloads.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    await listener.query('select 1');
    t.same(payloads, [`${CONTENT_VERSION_CHANNEL}|${SITE_ID} 1`], 'one notification: the committed change, not the rolled back one nor a rename');
  });
});
