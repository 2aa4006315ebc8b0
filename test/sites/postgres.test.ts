import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { openDatabase } from '../../src/db/sqlite.js';
import * as pgSchema from '../../src/db/pg-schema.js';
import type { PostgresHandle } from '../../src/db/postgres.js';
import type { Site } from '../../src/db/schema.js';
import { AppError } from '../../src/errors.js';
import type { PostInput, PostPatch, PostStore } from '../../src/posts/store.js';
import { siteView } from '../../src/public-site/pages.js';
import { FEED_SIZE, PublicSite } from '../../src/public-site/store.js';
import { postgresStepDatabase } from '../../src/db/postgres-steps.js';
import { ask } from '../../src/db/steps.js';
import { KEY_CHANGE_STALE_MS, PgKeyChangeSignal } from '../../src/sites/postgres.js';
import { hashKey, type ApiKeyInfo, type AuthenticatedKey, type SettingsOptions, type SiteSettingsPatch } from '../../src/sites/rules.js';
import { createSiteSteps, markDomainProvenSteps, updateSettingsSteps, type SiteStore } from '../../src/sites/store.js';
import type { Stores } from '../../src/stores/index.js';
import { postgresAdapters, postgresStores } from '../../src/stores/postgres.js';
import { sqliteStores } from '../../src/stores/sqlite.js';
import { tempDataDir } from '../helpers/app.js';
import { openTestPostgres, postgresTests, startPostgres } from '../helpers/postgres.js';
import { eq } from '../../src/db/orm.js';

// Sites, API keys, settings (the sites store over each database's adapter) and the public
// site's queries on PostgreSQL (pg-public.ts) against SQLite's: the same operations with the same clock give
// the same results byte for byte; then what only instances sharing a PostgreSQL can show
// (a revocation on one refused on the other within the documented bound, races for a handle).

const T0 = Date.parse('2026-03-02T09:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);
const MISSING = '00000000-0000-4000-8000-000000000000';
const keyNamed = (name: string) => `blog_${name.padEnd(43, 'x')}`;

/** The sites store and its steps on one database, all answering with promises. */
interface SitesBackend {
  createSiteWithKey(name: string, key: string, now: Date): Promise<{ site: Site; key: string }>;
  createSite(name: string, now: Date): Promise<Site>;
  listSites(): Promise<Site[]>;
  getSite(siteId: string): Promise<Site | undefined>;
  createKey(siteId: string, key: string, now: Date): Promise<{ key: string; info: ApiKeyInfo }>;
  listKeys(siteId: string): Promise<ApiKeyInfo[]>;
  revokeKey(keyId: string, now: Date): Promise<boolean>;
  findActiveKey(keyHash: string): Promise<AuthenticatedKey | undefined>;
  updateSiteSettings(siteId: string, patch: SiteSettingsPatch, now: Date, options?: SettingsOptions): Promise<Site>;
  markDomainProven(siteId: string, checkedToken: string | null, now: Date): Promise<Site>;
  findSiteByHandle(handle: string): Promise<Site | undefined>;
  findSiteByHost(host: string): Promise<Site | undefined>;
  bootstrapFirstSite(name: string, key: string | null): Promise<{ site: Site; generatedKey: string | null } | null>;
  posts: Pick<PostStore, 'create' | 'update' | 'toggle'>;
  publicSite: PublicSite;
}

const PUBLIC_BASE_URL = 'https://blogs.example.net';

/** What the scenarios do through the store, its steps, and the questions of its port. */
function storeBackend({ db, sites }: Stores): Omit<SitesBackend, 'posts' | 'publicSite'> {
  return {
    createSiteWithKey: (name, key, now) => sites.create(name, key, now),
    createSite: (name, now) => db.write(() => createSiteSteps(name, now)),
    listSites: () => sites.list(),
    getSite: (siteId) => db.read(() => ask('sites', 'find', siteId)),
    createKey: (siteId, key, now) => sites.createKey(siteId, key, now),
    listKeys: (siteId) => db.read(() => ask('sites', 'keysOf', siteId)),
    revokeKey: (keyId, now) => sites.revokeKey(keyId, now),
    findActiveKey: (keyHash) => db.read(() => ask('sites', 'activeKey', keyHash)),
    updateSiteSettings: (siteId, patch, now, options = {}) => db.write(() => updateSettingsSteps(siteId, patch, now, options)),
    markDomainProven: (siteId, token, now) => db.write(() => markDomainProvenSteps(siteId, token, now)),
    findSiteByHandle: (handle) => db.read(() => ask('sites', 'byHandle', handle)),
    findSiteByHost: (host) => db.read(() => ask('sites', 'byHost', host)),
    bootstrapFirstSite: (name, key) => sites.bootstrapFirstSite(name, key),
  };
}

function sqliteBackend(t: Test): SitesBackend {
  const handle = openDatabase(tempDataDir(t));
  t.teardown(() => handle.close());
  const stores = sqliteStores(handle);
  return {
    ...storeBackend(stores),
    posts: stores.posts,
    publicSite: stores.publicSite,
  };
}


function postgresBackendOn(handle: PostgresHandle): SitesBackend {
  const stores = postgresStores(handle);
  return {
    ...storeBackend(stores),
    posts: stores.posts,
    publicSite: stores.publicSite,
  };
}

async function postgresBackend(t: Test): Promise<SitesBackend> {
  return postgresBackendOn(await openTestPostgres(t, await startPostgres(t)));
}

/** An AppError as the API reports it; anything else is a failure of the test. */
function reported(error: unknown) {
  if (!(error instanceof AppError)) throw error;
  return { error: { statusCode: error.statusCode, code: error.code, message: error.message, details: error.details } };
}

/** Records each step's result or error; random ids (sites, keys, posts) are shown by the scenario's names for them. */
function recorder() {
  const steps: [string, unknown][] = [];
  const names = new Map<string, string>();
  const ids = new Map<string, string>();
  return {
    name(name: string, id: string) {
      names.set(id, name);
      ids.set(name, id);
    },
    id: (name: string) => ids.get(name) ?? MISSING,
    async step<T>(label: string, action: () => Promise<T>): Promise<T | undefined> {
      try {
        const result = await action();
        steps.push([label, result]);
        return result;
      } catch (error) {
        steps.push([label, reported(error)]);
        return undefined;
      }
    },
    // Domain tokens are random: masked, their presence is what compares.
    transcript: () =>
      JSON.stringify(steps, (_key, value) => (typeof value === 'string' && names.has(value) ? `<${names.get(value)}>` : typeof value === 'string' && value.startsWith('blog-verify-') ? '<token>' : value), 1),
  };
}

async function playSitesScenario(backend: SitesBackend): Promise<string> {
  const r = recorder();
  const createSiteWithKey = async (name: string, title: string, second: number) => {
    const created = await r.step(`create ${name} with key`, async () => {
      const result = await backend.createSiteWithKey(title, keyNamed(name), at(second));
      r.name(name, result.site.id);
      return result;
    });
    if (created) r.name(`${name}'s first key`, (await backend.listKeys(created.site.id))[0]!.id);
  };
  const createSite = (name: string, title: string, second: number) =>
    r.step(`create ${name}`, async () => {
      const site = await backend.createSite(title, at(second));
      r.name(name, site.id);
      return site;
    });
  const createKey = (name: string, site: string, second: number) =>
    r.step(`create key ${name}`, async () => {
      const created = await backend.createKey(r.id(site), keyNamed(name), at(second));
      r.name(name, created.info.id);
      return created;
    });
  const update = (site: string, second: number, patch: SiteSettingsPatch) =>
    r.step(`update ${site} ${JSON.stringify(patch)}`, () => backend.updateSiteSettings(r.id(site), patch, at(second)));
  const authenticate = (key: string) => r.step(`authenticate ${key}`, () => backend.findActiveKey(hashKey(keyNamed(key))));

  // Sites and their handles: repeated names, reserved words, too short, too long, nothing at all.
  await createSiteWithKey('blog', 'My Blog', 0);
  await createSiteWithKey('blog2', '  My Blog  ', 1);
  await createSite('reserved', 'API', 2);
  await createSite('short', 'x', 2);
  await createSite('long', 'A very long site name that goes on and on and on', 3);
  await createSite('long2', 'A very long site name that goes on and on and on', 3);
  await createSite('empty', '   ', 4);
  await createSite('tooLong', 'y'.repeat(300), 4);

  // Keys: created, listed, revoked (twice), refused for a missing site or key.
  await createKey('second', 'blog', 5);
  await createKey('third', 'blog', 6);
  await createKey('orphan', 'missing', 6);
  await r.step('list keys of blog', () => backend.listKeys(r.id('blog')));
  await authenticate('second');
  await r.step('revoke second', () => backend.revokeKey(r.id('second'), at(7)));
  await r.step('revoke second again', () => backend.revokeKey(r.id('second'), at(8)));
  await r.step('revoke missing', () => backend.revokeKey(MISSING, at(8)));
  await authenticate('second');
  await authenticate('third');
  await authenticate('unknown');
  await r.step('list keys of blog after revocation', () => backend.listKeys(r.id('blog')));

  // Settings: every field, each refusal, handle and host conflicts.
  await update('blog', 10, { name: '  Renamed blog ', description: '  About things  ', language: 'en-GB', postsPerPage: 5 });
  await update('blog', 11, { handle: 'my-blog-2' });
  await update('blog', 11, { handle: 'Bad Handle' });
  await update('blog', 11, { handle: 'api' });
  await update('blog', 11, { handle: 'renamed' });
  await update('blog', 12, { handle: 'renamed', url: 'https://Blog.Example.com/' });
  // Pending claims hold nothing; once proven, the host is taken.
  await update('blog2', 12, { url: 'https://blog.example.com' });
  const prove = (site: string, second: number, token: string | null = null) => r.step(`prove ${site} ${token ?? ''}`, () => backend.markDomainProven(r.id(site), token, at(second)));
  await prove('blog', 12, 'blog-verify-not-the-token');
  await prove('blog', 12);
  await prove('blog', 12);
  await prove('blog2', 12);
  await prove('missing', 12);
  await prove('reserved', 12);
  await r.step('reserved host', () => backend.updateSiteSettings(r.id('blog2'), { url: 'https://blogs.example.net:8443' }, at(12), { reservedHosts: new Set(['blogs.example.net']) }));
  await update('blog2', 12, { url: 'http://blog.example.com' });
  await update('blog2', 12, { url: 'https://blog.example.com/path' });
  await update('blog2', 12, { url: 'ftp://blog.example.com' });
  await update('blog2', 12, { url: 'not a url' });
  await update('blog2', 13, { url: 'https://other.example.com:8443', description: '' });
  await update('blog', 13, { url: 'https://blog.example.com' });
  await prove('blog2', 13);
  await update('blog2', 13, { language: 'not a language' });
  await update('blog2', 13, { postsPerPage: 0 });
  await update('blog2', 13, { name: ' ' });
  await update('blog2', 13, { name: 'Lone \ud800' });
  await update('blog2', 13, { handle: 'renamed', language: 'xx-!!' });
  await update('blog2', 13, {});
  await update('missing', 13, { name: 'Nobody' });
  await update('blog2', 14, { url: null });
  await authenticate('third');

  await r.step('by handle renamed', () => backend.findSiteByHandle('renamed'));
  await r.step('by handle my-blog', () => backend.findSiteByHandle('my-blog'));
  await r.step('by host BLOG.example.com', () => backend.findSiteByHost('BLOG.example.com'));
  await r.step('by host other.example.com:8443', () => backend.findSiteByHost('other.example.com:8443'));
  await r.step('by host unknown', () => backend.findSiteByHost('unknown.example.com'));
  await r.step('get missing', () => backend.getSite(MISSING));
  await r.step('get blog', () => backend.getSite(r.id('blog')));
  await r.step('list sites', () => backend.listSites());
  return r.transcript();
}

async function playPublicScenario(backend: SitesBackend): Promise<string> {
  const r = recorder();
  const { posts, publicSite } = backend;
  const created = await backend.createSiteWithKey('Public Blog', keyNamed('public'), at(0));
  const siteId = created.site.id;
  r.name('site', siteId);
  await backend.updateSiteSettings(siteId, { url: 'https://public.example.com' }, at(0));
  await r.step('by pending host', () => publicSite.byHost('PUBLIC.example.com'));
  await backend.markDomainProven(siteId, null, at(0));
  const create = (name: string, second: number, input: PostInput) =>
    r.step(`create ${name}`, async () => {
      const post = await posts.create(siteId, input, {}, at(second));
      r.name(name, post.id);
      return post.slug;
    });
  const update = (name: string, second: number, patch: PostPatch) => r.step(`update ${name}`, async () => (await posts.update(siteId, r.id(name), patch, at(second))).slug);

  await create('coffee', 1, { title: 'Coffee', content: '# Coffee\n\nSome *words*.', tags: ['Café', 'Morning'], category: 'Drinks', isDraft: false });
  await create('tea', 2, { title: 'Tea', content: 'Green and black.', tags: ['café', 'Tea'], category: 'drinks', isDraft: false });
  // Published in one millisecond: the later created comes first (rowid breaks the tie).
  await create('twinA', 3, { title: 'Twin', tags: ['Crème Brûlée'], isDraft: false });
  await create('twinB', 3, { title: 'Twin', tags: ['creme brulee'], isDraft: false });
  await create('unlisted', 4, { title: 'Secret', content: 'By URL only', tags: ['Café'], isDraft: false, visibility: 'unlisted' });
  await create('draft', 5, { title: 'Draft', tags: ['Café'], category: 'Drinks' });
  await create('renamed', 6, { title: 'Old name', tags: ['Morning'], isDraft: false });
  await update('renamed', 7, { slug: 'new-name' });
  await update('tea', 8, { content: 'Edited: rendered again on the next view.' });
  for (const second of [0, 1]) await r.step(`toggle draft ${second}`, async () => (await posts.toggle(siteId, r.id('draft'), at(9 + second))).isDraft);

  await r.step('by handle', () => publicSite.byHandle(created.site.handle));
  await r.step('by host', () => publicSite.byHost('PUBLIC.example.com'));
  await r.step('by no host', () => publicSite.byHost(undefined));
  await r.step('view', async () => siteView((await publicSite.byHandle(created.site.handle))!, '/sites/public-blog', PUBLIC_BASE_URL));
  const pages = async (label: string, topic?: { kind: 'tag' | 'category'; slug: string }) => {
    for (let page = 1; page <= 4; page++) await r.step(`${label} page ${page}`, () => publicSite.list(siteId, { page, limit: 2, topic }));
  };
  await pages('all');
  for (const slug of ['cafe', 'morning', 'creme-brulee', 'nothing']) await pages(`tag ${slug}`, { kind: 'tag', slug });
  for (const slug of ['drinks', 'none']) await pages(`category ${slug}`, { kind: 'category', slug });
  for (const [kind, slug] of [['tag', 'cafe'], ['tag', 'creme-brulee'], ['category', 'drinks'], ['tag', 'nothing']] as const) {
    await r.step(`topic name ${kind} ${slug}`, () => publicSite.topicName(siteId, kind, slug));
  }
  await r.step('feed', () => publicSite.list(siteId, { page: 1, limit: FEED_SIZE }));
  for (const slug of ['coffee', 'tea', 'secret', 'draft', 'old-name', 'new-name', 'nothing']) await r.step(`by slug ${slug}`, () => publicSite.bySlug(siteId, slug));
  // Posts of one moment have no order of their own in the sitemap's query: compared as a set.
  await r.step('sitemap', async () => (await publicSite.sitemap(siteId)).sort((a, b) => a.slug.localeCompare(b.slug)));
  await r.step('sitemap of another site', () => publicSite.sitemap(MISSING));
  return r.transcript();
}

function defineSiteTests() {
  t.test('sites, keys and settings: the same operations give the same results on SQLite and PostgreSQL', async (t) => {
    const onSqlite = await playSitesScenario(sqliteBackend(t));
    const onPostgres = await playSitesScenario(await postgresBackend(t));
    t.match(onSqlite, /"handle": "my-blog-2"/);
    t.match(onSqlite, /"handle": "site-api"/);
    t.match(onSqlite, /The handle \\"my-blog-2\\" is taken by another site/);
    t.match(onSqlite, /Another site already answers on blog.example.com/);
    t.match(onSqlite, /"prefix": "blog_second"/);
    t.equal(onPostgres, onSqlite, 'results, errors and rows');
  });

  t.test('public pages, feeds and sitemap rows are the same on SQLite and PostgreSQL', async (t) => {
    const onSqlite = await playPublicScenario(sqliteBackend(t));
    const onPostgres = await playPublicScenario(await postgresBackend(t));
    t.match(onSqlite, /"movedTo": "new-name"/);
    t.match(onSqlite, /"unlisted": true/);
    t.match(onSqlite, /"total": 5/);
    t.equal(onPostgres, onSqlite, 'sites, pages, topics, posts by slug, feeds and the sitemap');
  });

  t.test('the first site is made once, also by instances starting together', async (t) => {
    const url = await startPostgres(t);
    const instances = [postgresBackendOn(await openTestPostgres(t, url)), postgresBackendOn(await openTestPostgres(t, url))];
    const made = await Promise.all(instances.flatMap((instance) => [instance.bootstrapFirstSite('First', null), instance.bootstrapFirstSite('First', keyNamed('given'))]));
    t.equal(made.filter((result) => result !== null).length, 1, 'one of four bootstraps made a site');
    t.equal((await instances[0]!.listSites()).length, 1);
    const sqlite = sqliteBackend(t);
    const given = await sqlite.bootstrapFirstSite('First', keyNamed('given'));
    t.same([given?.generatedKey, await sqlite.bootstrapFirstSite('First', null)], [null, null], 'SQLite: a given key is not shown again; a second bootstrap does nothing');
    t.ok(await sqlite.findActiveKey(hashKey(keyNamed('given'))));
  });

  t.test('two instances racing for one handle: one gets it, the other the same conflict as a late comer', async (t) => {
    const url = await startPostgres(t);
    const [a, b] = [postgresBackendOn(await openTestPostgres(t, url)), postgresBackendOn(await openTestPostgres(t, url))];
    const sites = await Promise.all([a.createSite('Same name', at(0)), b.createSite('Same name', at(0)), a.createSite('Same name', at(0)), b.createSite('Same name', at(0))]);
    t.same(sites.map((site) => site.handle).sort(), ['same-name', 'same-name-2', 'same-name-3', 'same-name-4'], 'concurrent creates pick distinct handles');
    for (let round = 0; round < 5; round++) {
      const wanted = `wanted-${round}`;
      const outcomes = await Promise.allSettled([a.updateSiteSettings(sites[0]!.id, { handle: wanted }, at(1)), b.updateSiteSettings(sites[1]!.id, { handle: wanted }, at(1))]);
      const refused = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => reported(outcome.reason));
      t.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, 1, `round ${round}: one site has the handle`);
      t.same(refused, [{ error: { statusCode: 409, code: 'CONFLICT', message: `The handle "${wanted}" is taken by another site`, details: undefined } }]);
    }

    // Deterministically past the look: the handle is taken by a transaction not yet committed when
    // the other looks, so only the unique index can refuse it.
    let commit!: () => void;
    let written!: () => void;
    const isWritten = new Promise<void>((resolve) => (written = resolve));
    const holder = await openTestPostgres(t, url);
    const holding = holder.transaction(async (tx) => {
      await postgresStepDatabase(holder, postgresAdapters).runIn(tx, updateSettingsSteps(sites[2]!.id, { handle: 'held' }, at(2), {}));
      written();
      await new Promise<void>((resolve) => (commit = resolve));
    });
    await isWritten;
    const late = b.updateSiteSettings(sites[3]!.id, { handle: 'held' }, at(2)).then(() => null, reported);
    await sleep(100);
    commit();
    await holding;
    t.same(await late, { error: { statusCode: 409, code: 'CONFLICT', message: 'The handle "held" is taken by another site', details: undefined } }, 'the unique index refuses a handle taken after the look');
    t.equal((await b.getSite(sites[3]!.id))?.handle, sites[3]!.handle, 'and nothing of the refused patch is kept');
  });

  t.test('a key revoked on one instance is refused by another within the documented bound', async (t) => {
    const url = await startPostgres(t);
    const [first, second] = [await openTestPostgres(t, url), await openTestPostgres(t, url)];
    const authenticators = [];
    for (const handle of [first, second]) {
      const { sites } = postgresStores(handle);
      await sites.watchKeyChanges(() => {});
      t.teardown(() => sites.close());
      authenticators.push(sites);
    }
    const [onFirst, onSecond] = authenticators as [SiteStore, SiteStore];
    const { site, key } = await onFirst.create('Shared', keyNamed('shared'));
    const other = await onFirst.createKey(site.id, keyNamed('other'));
    const expected = { keyId: (await onFirst.listKeys(site.id))[0]!.id, site: { id: site.id, name: 'Shared' } };
    t.same(await onSecond.authenticate(key), expected, 'the second instance knows the key');
    t.same(await onSecond.authenticate(key), expected, 'from its cache');

    t.equal(await onFirst.revokeKey(expected.keyId), true);
    t.equal(await onFirst.authenticate(key), undefined, 'the revoking instance refuses it at once');
    const revokedAt = performance.now();
    while ((await onSecond.authenticate(key)) !== undefined) await sleep(5);
    const delay = performance.now() - revokedAt;
    t.ok(delay <= KEY_CHANGE_STALE_MS, `the other refuses it after ${Math.round(delay)} ms (bound ${KEY_CHANGE_STALE_MS} ms)`);
    t.ok(await onSecond.authenticate(other.key), 'the site’s other key still works');

    // A writer that bypasses the service (an admin in psql) is seen too; so is a site renamed.
    await second.db.update(pgSchema.sites).set({ name: 'Renamed' }).where(eq(pgSchema.sites.id, site.id));
    const renamedAt = performance.now();
    while ((await onFirst.authenticate(other.key))?.site.name !== 'Renamed') await sleep(5);
    t.ok(performance.now() - renamedAt <= KEY_CHANGE_STALE_MS, 'a rename reaches the other cache within the bound');
    await second.db.update(pgSchema.apiKeys).set({ revokedAt: new Date() }).where(eq(pgSchema.apiKeys.id, other.info.id));
    const bypassedAt = performance.now();
    while ((await onFirst.authenticate(other.key)) !== undefined) await sleep(5);
    t.ok(performance.now() - bypassedAt <= KEY_CHANGE_STALE_MS, 'a revocation in plain SQL too');
  });

  t.test('a change signal that cannot poll turns the cache off instead of trusting it', async (t) => {
    const url = await startPostgres(t);
    const handle = await openTestPostgres(t, url);
    const signal = new PgKeyChangeSignal(handle.db, { pollMs: 60_000, staleMs: 50 });
    await signal.watch(() => {});
    t.teardown(() => signal.close());
    const first = signal.current();
    t.equal(signal.current(), first, 'a fresh read is one value');
    await sleep(80);
    t.not(signal.current(), signal.current(), 'a stale one differs at every look');
  });
}

postgresTests(defineSiteTests);
