import pg from 'pg';
import t, { type Test } from 'tap';
import { openDatabase } from '../../src/db/sqlite.js';
import * as pgSchema from '../../src/db/pg-schema.js';
import type { PgExecutor, PostgresHandle } from '../../src/db/postgres.js';
import * as sqliteSchema from '../../src/db/schema.js';
import { AppError } from '../../src/errors.js';
import { enqueueSteps } from '../../src/jobs/store.js';
import { POST_LIST_STATUSES } from '../../src/limits.js';
import { pgListPageQuery } from '../../src/posts/postgres.js';
import type { ListQuery, PostChange, PostInput, PostOrigin, PostPatch, PostStore } from '../../src/posts/store.js';
import { postgresStores } from '../../src/stores/postgres.js';
import { sqliteStores } from '../../src/stores/sqlite.js';
import type { RawJson } from '../../src/json.js';
import { postResource } from '../../src/posts/view.js';
import type { Stores } from '../../src/stores/index.js';
import { tempDataDir } from '../helpers/app.js';
import { openTestPostgres, postgresTests, startPostgres } from '../helpers/postgres.js';
import { and, count, countDistinct, eq, sql } from '../../src/db/orm.js';

/** The posts of a list page (its JSON, as the API sends it). */
const listed = (json: RawJson) => JSON.parse(json.text) as { id: string; slug: string; title: string; createdAt: string }[];

// The PostgreSQL posts store (src/posts/pg-store.ts) against a throwaway PostgreSQL: one
// scenario played on SQLite's PostService and on it must give the same results byte for byte,
// side effects included; then what only PostgreSQL shared by several instances can show
// (concurrent creates, writers that bypass the store), and the text PostgreSQL cannot store.

const SITE_ID = 'site-1';
const T0 = Date.parse('2026-03-02T09:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);
const MISSING = '00000000-0000-4000-8000-000000000000';
const STATUSES = [undefined, 'draft', 'published', 'unlisted', 'all'] as const;

/** What the posts store offers. */
type Posts = Pick<PostStore, 'create' | 'get' | 'toggle' | 'update' | 'delete' | 'list'>;

/** A database with the site, its posts API and the rows post writes keep beside the posts. */
interface Backend {
  posts: Posts;
  onChange(listener: (change: PostChange) => void): void;
  effects(): Promise<unknown>;
  /** As before slug counters existed: suffixes are then counted from the slugs. */
  forgetSlugCounters(): Promise<void>;
}

const siteRow = { id: SITE_ID, name: 'Parity', handle: 'parity', createdAt: new Date(T0 - 60_000) };
const byKey = <T>(key: (row: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

function sqliteBackend(t: Test): Backend & { service: PostStore } {
  const handle = openDatabase(tempDataDir(t));
  t.teardown(() => handle.close());
  const { db } = handle;
  const s = sqliteSchema;
  db.insert(s.sites).values(siteRow).run();
  const service = sqliteStores(handle).posts;
  return {
    service,
    posts: service,
    onChange: (listener) =>
      service.onChange(function* (change) {
        listener(change);
      }),
    effects: async () => ({
      site: db.select({ version: s.sites.contentVersion, updatedAt: s.sites.contentUpdatedAt }).from(s.sites).where(eq(s.sites.id, SITE_ID)).get(),
      counts: db.select().from(s.postCounts).all(),
      slugCounters: db.select().from(s.slugCounters).all().sort(byKey((row) => row.base)),
      redirects: db.select().from(s.postSlugRedirects).all().sort(byKey((row) => row.slug)),
    }),
    forgetSlugCounters: async () => void db.delete(s.slugCounters).run(),
  };
}


async function postgresBackend(t: Test): Promise<Backend & { store: PostStore; handle: PostgresHandle; url: string; stores: Stores }> {
  const url = await startPostgres(t);
  const handle = await openTestPostgres(t, url);
  const { db } = handle;
  const s = pgSchema;
  await db.insert(s.sites).values(siteRow);
  const stores = postgresStores(handle);
  const store = stores.posts;
  return {
    store,
    stores,
    handle,
    url,
    posts: store,
    onChange: (listener) =>
      store.onChange(function* (change) {
        listener(change);
      }),
    effects: async () => ({
      site: (await db.select({ version: s.sites.contentVersion, updatedAt: s.sites.contentUpdatedAt }).from(s.sites).where(eq(s.sites.id, SITE_ID)))[0],
      counts: await db.select().from(s.postCounts),
      slugCounters: (await db.select().from(s.slugCounters)).sort(byKey((row) => row.base)),
      redirects: (await db.select().from(s.postSlugRedirects)).sort(byKey((row) => row.slug)),
    }),
    forgetSlugCounters: async () => void (await db.delete(s.slugCounters)),
  };
}

/** An AppError as the API reports it; anything else is a failure of the test. */
function reported(error: unknown) {
  if (!(error instanceof AppError)) throw error;
  return { error: { statusCode: error.statusCode, code: error.code, message: error.message, details: error.details } };
}

/**
 * Plays the same operations on a backend, with the same clock, and answers everything they
 * showed as JSON: results, errors, what listeners were told, lists, the rows at the end and the
 * side effects. Post ids (random) are replaced by the scenario's names for the posts.
 */
async function playScenario(backend: Backend): Promise<{ transcript: string; slugs: Record<string, string> }> {
  const { posts } = backend;
  const steps: [string, unknown][] = [];
  const ids = new Map<string, string>();
  const names = new Map<string, string>();
  backend.onChange((change) => steps.push(['changed', { before: change.before?.id ?? null, after: change.after?.id ?? null, at: change.at, slug: change.after?.slug }]));
  const step = async (name: string, action: () => Promise<unknown>) => {
    try {
      steps.push([name, await action()]);
    } catch (error) {
      steps.push([name, reported(error)]);
    }
  };
  const id = (name: string) => ids.get(name) ?? MISSING;
  const create = (name: string, second: number, input: PostInput, origin: PostOrigin = {}) =>
    step(`create ${name}`, async () => {
      const post = await posts.create(SITE_ID, input, origin, at(second));
      ids.set(name, post.id);
      names.set(post.id, name);
      return postResource(post);
    });
  const update = (name: string, second: number, patch: PostPatch) =>
    step(`update ${name} ${JSON.stringify(patch)}`, async () => postResource(await posts.update(SITE_ID, id(name), patch, at(second))));
  const toggle = (name: string, second: number) => step(`toggle ${name}`, async () => postResource(await posts.toggle(SITE_ID, id(name), at(second))));
  const list = (query: Omit<ListQuery, 'page' | 'limit'>, limit = 3) =>
    step(`list ${JSON.stringify(query)}`, async () => {
      const pages = [];
      for (let page = 1; ; page++) {
        const { posts: json, pagination } = await posts.list(SITE_ID, { ...query, page, limit });
        pages.push({ items: listed(json).map((post) => `${names.get(post.id)} ${post.slug} ${post.createdAt}`), pagination });
        if (page > pagination.pages) break;
      }
      return pages;
    });
  const lists = async () => {
    for (const status of STATUSES) await list({ status });
    for (const filter of [{ tag: 'cafe' }, { tag: 'CAFÉ' }, { category: 'cafe' }, { q: 'cafe' }, { q: 'CRÈME' }, { q: '100%_' }, { q: '%' }, { q: 'same' }]) {
      await list(filter);
      await list({ ...filter, status: 'all' }, 2);
    }
    await list({ tag: 'tea', status: 'published' });
    await list({ q: 'title', category: 'Café', status: 'draft' });
  };

  // Creates: drafts, published, unlisted; repeated titles in one millisecond; titles with no ASCII; a reserved word.
  await create('cafe', 0, { title: '  Café Culture: A Guide!  ', description: 'All about coffee', content: '# Hello', category: 'Café', tags: ['Café', 'travel', 'café', ' '], authorId: 'author-1' });
  await create('same', 1, { title: 'Same title', isDraft: false });
  await create('same2', 1, { title: 'Same title', isDraft: false, visibility: 'unlisted', category: 'café' });
  await create('same3', 1, { title: 'Same title!' });
  await create('japanese', 2, { title: '日本語のタイトル', tags: ['Tea'] });
  await create('chinese', 2, { title: '中文标题', isDraft: false });
  await create('korean', 2, { title: '한국어 제목', isDraft: false, visibility: 'unlisted' });
  await create('api', 3, { title: 'API' });
  await create('hidden', 4, { title: 'Hidden 100%_match', description: 'Crème brûlée', isDraft: false, visibility: 'unlisted' });
  for (const n of [1, 2, 3]) await create(`long${n}`, 5, { title: 'A very long title '.repeat(6), isDraft: n !== 2 });
  await create('generated', 6, { title: ` ${'Generated words '.repeat(25)}`, content: 'A lone \ud800 surrogate', tags: Array.from({ length: 25 }, (_, i) => `tag ${i % 22}`) }, {
    generatorProvider: 'builtin',
    generatorModel: 'builtin-1',
    sourceTaskId: 'task-1',
  });
  await create('refused', 7, { title: '   ' });
  await create('refused', 7, { title: 'Lone \udc00 surrogate', tags: ['ok', 'bad \ud800'] });
  await create('refused', 7, { title: 'Too many tags', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) });
  await lists();

  // Publishing and unpublishing, twice in one millisecond.
  await toggle('cafe', 10);
  await toggle('cafe', 10);
  await toggle('cafe', 11);
  await toggle('missing', 11);

  // Edits: a draft's new title moves its slug, a published post's does not; slugs asked for.
  await update('same3', 12, { title: 'A brand new title' });
  await update('same', 12, { title: 'Retitled but published' });
  await update('same', 13, { slug: 'same-title-renamed' });
  await update('same', 14, { slug: 'same-title' });
  await update('same2', 15, { content: 'New body', tags: ['Tea', 'tea', 'Green'], visibility: 'public', category: null, description: null, authorId: 'someone' });
  await update('japanese', 15, { isDraft: false });
  await update('api', 16, { slug: 'same-title-5' });
  await update('same3', 16, { title: 'Yet another', slug: 'chosen-by-hand' });
  await update('chinese', 17, { slug: 'same-title-renamed' });
  await update('hidden', 17, { visibility: 'public', description: 'Crème brûlée, again', slug: 'hidden-renamed' });
  for (const patch of [{}, { slug: 'api' }, { slug: 'Bad Slug' }, { slug: '-x' }, { slug: 'same-title' }, { description: 'Lone \udfff' }, { title: ' ' }] as PostPatch[]) {
    await update('api', 18, patch);
  }
  await update('missing', 18, { title: 'Nobody' });
  await step('get missing', () => posts.get(SITE_ID, MISSING));

  // A slug set by hand (same-title-5) is stepped over; a collided base is counted from the slugs once counters are gone.
  await create('again', 19, { title: 'Same title' });
  await create('again2', 19, { title: 'Same title' });
  await step('side effects before the slug counters are lost', () => backend.effects());
  await backend.forgetSlugCounters();
  await create('legacy', 19, { title: 'Same title' });
  await create('legacyPost', 19, { title: 'Ελληνικά' });

  await step('delete chinese', () => posts.delete(SITE_ID, id('chinese'), at(20)));
  await step('delete chinese again', () => posts.delete(SITE_ID, id('chinese'), at(20)));
  await lists();

  for (const name of ids.keys()) await step(`get ${name}`, () => posts.get(SITE_ID, id(name)));
  await step('side effects', () => backend.effects());

  const slugs: Record<string, string> = {};
  for (const [name, postId] of ids) slugs[name] = (await posts.get(SITE_ID, postId).catch(() => null))?.slug ?? '(deleted)';
  const transcript = JSON.stringify(steps, (_key, value) => (typeof value === 'string' && names.has(value) ? `<${names.get(value)}>` : value), 1);
  return { transcript, slugs };
}

function definePostTests() {
  t.test('the same operations give the same results, byte for byte, on SQLite and PostgreSQL', async (t) => {
    const onSqlite = await playScenario(sqliteBackend(t));
    const onPostgres = await playScenario(await postgresBackend(t));
    t.same(onSqlite.slugs, {
      cafe: 'cafe-culture-a-guide',
      same: 'same-title',
      same2: 'same-title-2',
      same3: 'chosen-by-hand',
      japanese: 'post',
      chinese: '(deleted)',
      korean: 'post-3',
      api: 'same-title-5',
      hidden: 'hidden-renamed',
      long1: 'a-very-long-title-a-very-long-title-a-very-long-title-a-very-long-title-a-very-l',
      long2: 'a-very-long-title-a-very-long-title-a-very-long-title-a-very-long-title-a-very-2',
      long3: 'a-very-long-title-a-very-long-title-a-very-long-title-a-very-long-title-a-very-3',
      generated: 'generated-words-generated-words-generated-words-generated-words-generated-words',
      again: 'same-title-4',
      again2: 'same-title-6',
      legacy: 'same-title-7',
      legacyPost: 'post-4',
    }, 'the scenario covers what it says (SQLite)');
    t.match(onSqlite.transcript, /"code": "CONFLICT"/);
    t.match(onSqlite.transcript, /"code": "NOT_FOUND"/);
    t.match(onSqlite.transcript, /"path": "\/body\/tags\/1"/);
    t.same(onPostgres.slugs, onSqlite.slugs);
    t.equal(onPostgres.transcript, onSqlite.transcript, 'results, errors, listeners, lists, rows and side effects');
  });

  t.test('200 creates with one title at once, through two instances, all succeed with distinct slugs and creation times', async (t) => {
    const url = await startPostgres(t);
    // The creates of one site queue for its lock, and so for a connection of the pool: wait as long as it takes.
    const instances = [await openTestPostgres(t, url, { poolMax: 10, connectionTimeoutMs: 60_000 }), await openTestPostgres(t, url, { poolMax: 10, connectionTimeoutMs: 60_000 })];
    await instances[0].db.insert(pgSchema.sites).values(siteRow);
    const stores = instances.map((instance) => postgresStores(instance).posts);
    const now = at(0);
    const created = await Promise.all(Array.from({ length: 200 }, (_, i) => stores[i % 2].create(SITE_ID, { title: 'Same title', isDraft: i % 3 !== 0 }, {}, now)));

    const expected = ['same-title', ...Array.from({ length: 199 }, (_, i) => `same-title-${i + 2}`)];
    t.same(created.map((post) => post.slug).sort(), [...expected].sort(), 'same-title, same-title-2 ... same-title-200');
    const times = created.map((post) => post.createdAt.getTime()).sort((a, b) => a - b);
    t.same(times, Array.from({ length: 200 }, (_, i) => now.getTime() + i), 'each a millisecond past the one before');

    const { db } = instances[1];
    const s = pgSchema;
    const [stored] = await db.select({ n: count(), slugs: countDistinct(s.posts.slug), times: countDistinct(s.posts.createdAt) }).from(s.posts);
    t.same(stored, { n: 200, slugs: 200, times: 200 }, 'as stored');
    const drafts = created.filter((post) => post.isDraft).length;
    t.same(await db.select().from(s.postCounts), [{ siteId: SITE_ID, drafts, public: 200 - drafts, unlisted: 0 }], 'post_counts: 200');
    t.same(await db.select().from(s.slugCounters), [{ siteId: SITE_ID, base: 'same-title', last: 200 }]);
    t.match(await db.select({ version: s.sites.contentVersion }).from(s.sites), [{ version: 200 }], 'the content version moved once per create');
    const page = await stores[0].list(SITE_ID, { page: 1, limit: 3, status: 'all' });
    t.same(listed(page.posts).map((post) => Date.parse(post.createdAt)), times.slice(-3).reverse(), 'newest first');
    t.equal(page.pagination.total, 200);
  });

  t.test("another instance's writes of other posts leave a post kept here good; its write of that post shows here at once", async (t) => {
    const url = await startPostgres(t);
    const instances = [await openTestPostgres(t, url), await openTestPostgres(t, url)];
    await instances[0].db.insert(pgSchema.sites).values(siteRow);
    const [here, there] = instances.map((instance) => postgresStores(instance).posts) as [PostStore, PostStore];
    await Promise.all(instances.map((instance) => instance.contentVersions.start()));
    const kept = await there.create(SITE_ID, { title: 'Kept' });
    const title = async () => (JSON.parse((await here.getJson(SITE_ID, kept.id)).text) as { title: string }).title;
    t.equal(await title(), 'Kept');
    // A change behind the stores' backs that leaves the version alone shows what answers here: the post kept.
    await instances[1].db.execute(sql`update posts set title = 'Unseen' where id = ${kept.id}`);
    t.equal(await title(), 'Kept');
    const other = await there.create(SITE_ID, { title: 'Other' });
    await there.update(SITE_ID, other.id, { title: 'Other, edited' });
    t.equal(await title(), 'Kept', "two writes of another post on the other instance: still kept here");
    await there.update(SITE_ID, kept.id, { title: 'Edited there' });
    t.equal(await title(), 'Edited there', "the other instance's write of the post itself shows here at once");
  });

  /** Waits until a statement of the database waits for a lock another transaction holds. */
  async function lockWaited(t: Test, db: PgExecutor): Promise<void> {
    for (let tries = 0; tries < 500; tries++) {
      const { rows } = await db.execute<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      if (rows[0]!.n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    t.fail('no statement waited for the lock');
  }

  /** A writer that bypasses the store (a script, an import): it takes a slug in a transaction left open. */
  async function bypassingWriter(t: Test, url: string, postId: string, slug: string) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    t.teardown(() => client.end());
    await client.query('begin');
    await client.query('update posts set slug = $1 where id = $2', [slug, postId]);
    return { commit: () => client.query('commit') };
  }

  t.test('a slug taken meanwhile by a writer that bypasses the store: a create picks the next, an edit asking for it is a conflict', async (t) => {
    const b = await postgresBackend(t);
    const [holder, other, edited] = await Promise.all(['Holder', 'Other', 'Edited'].map((title, i) => b.store.create(SITE_ID, { title }, {}, at(i))));

    const race = await bypassingWriter(t, b.url, holder.id, 'race');
    const creating = b.store.create(SITE_ID, { title: 'Race' }, {}, at(10));
    await lockWaited(t, b.handle.db);
    await race.commit();
    t.equal((await creating).slug, 'race-2', 'the insert that hit the unique index ran again');
    t.same(await b.effects(), {
      site: { version: 4, updatedAt: at(10) },
      counts: [{ siteId: SITE_ID, drafts: 4, public: 0, unlisted: 0 }],
      slugCounters: [{ siteId: SITE_ID, base: 'race', last: 2 }],
      redirects: [],
    }, 'the failed attempt left nothing behind');

    const wanted = await bypassingWriter(t, b.url, other.id, 'wanted');
    const editing = b.store.update(SITE_ID, edited.id, { slug: 'wanted' }, at(11));
    await lockWaited(t, b.handle.db);
    await wanted.commit();
    await t.rejects(editing, { statusCode: 409, code: 'CONFLICT', message: 'The slug "wanted" is taken by another post of this site' });
    t.equal((await b.store.get(SITE_ID, edited.id)).slug, 'edited');
  });

  t.test('listeners run inside the write: what they write commits with it, and their failure undoes it', async (t) => {
    const b = await postgresBackend(t);
    let refuse = false;
    b.store.onChange(function* (change) {
      yield* enqueueSteps(change.siteId, [{ kind: 'post.changed', payload: { postId: change.after?.id ?? change.before?.id }, scheduledFor: change.at }], 3, change.at);
      if (refuse) throw new Error('the outbox is full');
    });
    const post = await b.store.create(SITE_ID, { title: 'Outbox' }, {}, at(0));
    await b.store.toggle(SITE_ID, post.id, at(1));
    refuse = true;
    await t.rejects(b.store.create(SITE_ID, { title: 'Outbox' }, {}, at(2)), { message: 'the outbox is full' });
    await t.rejects(b.store.delete(SITE_ID, post.id, at(3)), { message: 'the outbox is full' });
    refuse = false;

    const jobs = await b.handle.db.select({ n: count() }).from(pgSchema.jobs);
    t.same(jobs, [{ n: 2 }], 'one job per committed change');
    t.same(await b.effects(), {
      site: { version: 2, updatedAt: at(1) },
      counts: [{ siteId: SITE_ID, drafts: 0, public: 1, unlisted: 0 }],
      slugCounters: [],
      redirects: [],
    }, 'nothing of the refused writes');
    t.equal((await b.store.get(SITE_ID, post.id)).isDraft, false);

    // A caller's transaction (a job committing its post with its own success): all or nothing.
    await t.rejects(
      b.stores.db.write(function* () {
        yield* b.store.createSteps(SITE_ID, { title: 'Outbox' }, { sourceTaskId: 'task-1' }, at(4));
        throw new Error('the job lost its lease');
      }),
    );
    const committed = await b.stores.db.write(() => b.store.createSteps(SITE_ID, { title: 'Outbox' }, { sourceTaskId: 'task-1' }, at(5)));
    t.equal(committed.slug, 'outbox-2');
    t.same(listed((await b.store.list(SITE_ID, { page: 1, limit: 10, status: 'all' })).posts).map((row) => row.slug), ['outbox-2', 'outbox']);
  });

  t.test('U+0000: SQLite stores it, PostgreSQL cannot, so the PostgreSQL store refuses it naming the field', async (t) => {
    const lite = sqliteBackend(t);
    const b = await postgresBackend(t);
    const input: PostInput = { title: 'Nul \0 inside', content: 'a\0b', tags: ['fine', 'n\0l'] };

    const stored = await lite.service.create(SITE_ID, input, {}, at(0));
    t.same([stored.title, stored.content, stored.tags], [input.title, input.content, input.tags], 'SQLite keeps it as sent');
    t.equal((await lite.service.list(SITE_ID, { page: 1, limit: 10, q: '\0' })).pagination.total, 1, 'and finds it');

    const refusal = {
      statusCode: 400,
      code: 'VALIDATION_ERROR',
      message: 'Unstorable text: /body/title, /body/content, /body/tags/1 holds a NUL character (U+0000)',
      details: ['/body/title', '/body/content', '/body/tags/1'].map((path) => ({ path, message: 'must not contain the NUL character (U+0000)' })),
    };
    await t.rejects(b.store.create(SITE_ID, input, {}, at(0)), refusal);
    const post = await b.store.create(SITE_ID, { title: 'Clean' }, {}, at(1));
    await t.rejects(b.store.update(SITE_ID, post.id, { description: '\0' }, at(2)), {
      message: 'Unstorable text: /body/description holds a NUL character (U+0000)',
      details: [{ path: '/body/description', message: 'must not contain the NUL character (U+0000)' }],
    });
    t.match(await b.store.update(SITE_ID, post.id, { slug: 'x\0' }, at(2)).catch(reported), { error: { details: [{ path: '/body/slug' }] } });
    const ill = await b.store.update(SITE_ID, post.id, { title: '\ud800\0' }, at(2)).catch(reported);
    t.match(ill, { error: { message: 'Ill-formed text: /body/title holds a lone UTF-16 surrogate' } }, 'a lone surrogate is named first, as on SQLite');

    const generated = await b.store.create(SITE_ID, { title: 'Model\0 output', content: 'x\0y\ud800', tags: ['\0'] }, { generatorProvider: 'builtin' }, at(3));
    t.same([generated.title, generated.content, generated.tags], ['Model output', 'xy\ufffd', []], "a generated post's NULs are dropped (SQLite keeps them)");
    for (const filter of [{ q: 'a\0' }, { tag: '\0' }, { category: 'x\0' }]) {
      t.same((await b.store.list(SITE_ID, { page: 2, limit: 5, ...filter })).pagination, { page: 2, limit: 5, total: 0, pages: 0 }, `${JSON.stringify(filter)} matches nothing`);
    }
    t.same(await b.effects(), {
      site: { version: 2, updatedAt: at(3) },
      counts: [{ siteId: SITE_ID, drafts: 2, public: 0, unlisted: 0 }],
      slugCounters: [],
      redirects: [],
    });
    t.same(listed((await b.store.list(SITE_ID, { page: 1, limit: 5 })).posts).map((row) => row.title), ['Model output', 'Clean']);
  });

  t.test("a deep list page comes from the list index: only the page's rows are read whole and sorted", async (t) => {
    const b = await postgresBackend(t);
    const proto = await b.store.create(SITE_ID, { title: 'Proto', content: 'x'.repeat(800) }, {}, at(0));
    for (let batch = 0; batch < 6; batch++) {
      const rows = Array.from({ length: 500 }, (_, i) => {
        const n = batch * 500 + i + 1;
        return { ...proto, id: `post-${n}`, slug: `proto-${n}`, isDraft: n % 3 === 0, visibility: n % 5 === 0 ? ('unlisted' as const) : ('public' as const), createdAt: at(n), updatedAt: at(n) };
      });
      await b.handle.db.insert(pgSchema.posts).values(rows);
    }
    const client = new pg.Client({ connectionString: b.url });
    await client.connect();
    t.teardown(() => client.end());
    await client.query('vacuum analyze posts');
    // Lists by status alone (scheduled posts are a filter: see isByStatus).
    for (const status of [undefined, ...POST_LIST_STATUSES.filter((status) => status !== 'scheduled')]) {
      const query: ListQuery = { page: 11, limit: 20, status };
      const { sql: text, params } = pgListPageQuery(b.handle.db, SITE_ID, query, 200).toSQL();
      const plan = (await client.query<{ 'QUERY PLAN': string }>(`explain ${text}`, params)).rows.map((row) => row['QUERY PLAN']).join('\n');
      t.match(plan, /Index Only Scan using posts_site_list_order_idx/, `status ${status}: the page's rows are found in the index`);
      t.equal(plan.match(/(^|-> +)Sort +\(/gm)?.length ?? 0, 1, `status ${status}: one sort, of the page's own rows`);
      const page = await b.store.list(SITE_ID, query);
      t.equal(listed(page.posts).length, 20, `status ${status}: a full page`);
      // The second deep page of a list starts at anchors found from the top of the list.
      const deeper = await b.store.list(SITE_ID, { ...query, page: 40 });
      const byOffset = await pgListPageQuery(b.handle.db, SITE_ID, { ...query, page: 40 }, 780);
      t.same(listed(deeper.posts).map((row) => row.id), byOffset.map((row) => row.id), `status ${status}: a page found from anchors is the page at its offset`);
      // Read again at the same version: now from the list's anchors (found from the top on the first such read).
      const again = await b.store.list(SITE_ID, { ...query, page: 21, limit: 10 });
      t.same(listed(again.posts), listed(page.posts).slice(0, 10), `status ${status}: the same page from the anchors`);
    }
  });

  t.test('a post of another site is not found, and keeps its slug space', async (t) => {
    const b = await postgresBackend(t);
    await b.handle.db.insert(pgSchema.sites).values({ ...siteRow, id: 'site-2', handle: 'other' });
    const mine = await b.store.create(SITE_ID, { title: 'Mine', tags: ['x'] }, {}, at(0));
    const theirs = await b.store.create('site-2', { title: 'Mine', tags: ['x'] }, {}, at(0));
    t.equal(theirs.slug, 'mine');
    const elsewhere = [() => b.store.get('site-2', mine.id), () => b.store.toggle('site-2', mine.id), () => b.store.update('site-2', mine.id, { title: 'x' }), () => b.store.delete('site-2', mine.id)];
    for (const attempt of elsewhere) t.match(await attempt().catch(reported), { error: { statusCode: 404, code: 'NOT_FOUND', message: 'post not found' } });
    t.same(listed((await b.store.list('site-2', { page: 1, limit: 5, tag: 'X' })).posts).map((row) => row.id), [theirs.id]);
    const counts = await b.handle.db.select().from(pgSchema.postCounts).where(and(eq(pgSchema.postCounts.siteId, 'site-2')));
    t.same(counts, [{ siteId: 'site-2', drafts: 1, public: 0, unlisted: 0 }]);
  });
}

postgresTests(definePostTests);
