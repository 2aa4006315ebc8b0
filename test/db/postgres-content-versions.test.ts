/**
 * Sites' content versions as an instance knows them from PostgreSQL's notifications
 * (PgContentVersions): vouched for only while listening, raised by another writer's commit once
 * a fence has passed, never vouched for past this instance's own uncommitted write, and
 * forgotten when listening stops.
 */
import pg from 'pg';
import t from 'tap';
import * as pgSchema from '../../src/db/pg-schema.js';
import { PgContentVersions, POST_CHANGE_CHANNEL } from '../../src/db/pg-content-versions.js';
import { openTestPostgres, postgresTests, startPostgres } from '../helpers/postgres.js';

const SITE_ID = 'site-1';

postgresTests(() => {
  t.test('versions follow commits on other connections after a fence, and own writes are never vouched for early', async (t) => {
    const url = await startPostgres(t);
    const handle = await openTestPostgres(t, url);
    await handle.db.insert(pgSchema.sites).values({ id: SITE_ID, name: 'Versions', handle: 'versions', createdAt: new Date() });
    const versions = new PgContentVersions(url);
    t.teardown(() => versions.close());
    t.equal(versions.current(SITE_ID), undefined, 'nothing vouched for before listening');
    t.equal(versions.beforeRead(), null, 'nor learned');
    await versions.start();
    t.ok(versions.isListening, 'listening');

    const writer = new pg.Client({ connectionString: url });
    await writer.connect();
    t.teardown(() => writer.end());
    const bump = async () => Number((await writer.query('update sites set content_version = content_version + 1 where id = $1 returning content_version as v', [SITE_ID])).rows[0].v);

    versions.learn(SITE_ID, 0, versions.beforeRead());
    t.equal(versions.current(SITE_ID), 0, 'a version read while listening is vouched for');
    const v1 = await bump();
    t.ok(await versions.fence(), 'a fence passes');
    t.equal(versions.current(SITE_ID), v1, "after a fence, another connection's committed change is known");

    // Post changes told on their own channel reach the listeners, whole ones only.
    const told: unknown[] = [];
    versions.onPostChange((...change) => told.push(change));
    for (const payload of [`${SITE_ID} 41 post-a`, `${SITE_ID} x post-b`, `${SITE_ID} 42`, '']) await writer.query(`select pg_notify('${POST_CHANGE_CHANNEL}', $1)`, [payload]);
    t.ok(await versions.fence());
    t.same(told, [[SITE_ID, 41, 'post-a']], 'a post change told; one without a version or a post ignored');
    t.equal(versions.current(SITE_ID), v1, 'and the version is not taken from it');

    // An uncommitted change: no notification until commit, and a rollback never notifies.
    await writer.query('begin');
    await writer.query('update sites set content_version = content_version + 1 where id = $1', [SITE_ID]);
    t.ok(await versions.fence());
    t.equal(versions.current(SITE_ID), v1, 'not before it commits');
    await writer.query('rollback');
    t.ok(await versions.fence());
    t.equal(versions.current(SITE_ID), v1, 'nor after a rollback');

    // This instance's own write: from the moment it moves the version, reads ask the database until it is seen.
    versions.moving(SITE_ID, v1 + 1);
    t.equal(versions.current(SITE_ID), undefined, 'own write under way: not vouched for');
    const v2 = await bump();
    t.equal(v2, v1 + 1);
    t.ok(await versions.fence());
    t.equal(versions.current(SITE_ID), v2, 'vouched for again once its notification arrived');

    // Listening lost: everything forgotten, fences refuse, and it listens again by itself.
    const [{ pid }] = (await writer.query<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and (query like 'LISTEN%' or query = 'select 1')`)).rows;
    await writer.query('select pg_terminate_backend($1)', [pid]);
    const deadline = Date.now() + 10_000;
    while (versions.current(SITE_ID) !== undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    t.equal(versions.current(SITE_ID), undefined, 'forgotten when the listening connection is lost');
    while (!versions.isListening && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    t.ok(versions.isListening, 'listening again');
    t.equal(versions.current(SITE_ID), undefined, 'nothing from before is vouched for');
    versions.learn(SITE_ID, v2, versions.beforeRead());
    t.equal(versions.current(SITE_ID), v2, 'versions read from now on are');
    await versions.close();
    t.equal(versions.current(SITE_ID), undefined, 'closed: nothing vouched for');
    t.equal(await versions.fence(), false, 'closed: fences refuse');
  });
});
