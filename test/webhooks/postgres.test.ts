import t, { type Test } from 'tap';
import * as pgSchema from '../../src/db/pg-schema.js';
import { openPostgres, type PostgresHandle } from '../../src/db/postgres.js';
import * as sqliteSchema from '../../src/db/schema.js';
import type { PostRow } from '../../src/db/schema.js';
import { AppError } from '../../src/errors.js';
import type { JobRow } from '../../src/jobs/store.js';
import { MAX_WEBHOOKS_PER_SITE, WEBHOOK_DISABLE_AFTER_MS } from '../../src/limits.js';
import type { Stores } from '../../src/stores/index.js';
import { postgresStores } from '../../src/stores/postgres.js';
import { sqliteStores } from '../../src/stores/sqlite.js';
import type { AttemptOutcome, DeliveryView, WebhookInput, WebhookPatch } from '../../src/webhooks/rules.js';
import type { AttemptResult } from '../../src/webhooks/sender.js';
import type { WebhookRow } from '../../src/webhooks/store.js';
import { bothDatabases, type Databases } from '../helpers/both-databases.js';
import { postgresTests } from '../helpers/postgres.js';
import { eq } from '../../src/db/orm.js';

// The webhook store (src/webhooks/store.ts) over SQLite's adapter and over PostgreSQL's: the
// same scenario played on both databases, with the same clock and jitter, must tell the same;
// then what only several instances sharing PostgreSQL can show: two pools emitting at once.

const SITE = 'site-1';
const OTHER_SITE = 'site-2';
const T0 = Date.parse('2026-03-02T09:00:00.000Z');
const siteRow = (id: string) => ({ id, name: `Site ${id}`, handle: id, createdAt: new Date(T0 - 60_000) });

/** A SQLite and a PostgreSQL database, each with the two sites. */
function databases(t: Test): Promise<Databases> {
  return bothDatabases(t, [SITE, OTHER_SITE].map(siteRow));
}

const post = (over: Partial<PostRow> = {}): PostRow => ({
  id: 'post-1',
  siteId: SITE,
  slug: 'hello',
  title: 'Hello é 東京',
  description: null,
  content: 'Body',
  category: null,
  tags: ['a'],
  authorId: null,
  isDraft: true,
  visibility: 'public',
  publishedAt: null,
  publishAt: null,
  featureImage: null,
  featureImageAlt: null,
  commentsEnabled: true,
  generatorProvider: null,
  generatorModel: null,
  sourceTaskId: null,
  reviewRequestedAt: null,
  previewToken: null,
  html: null,
  readingTime: null,
  sendNewsletter: true,
  createdAt: new Date(T0),
  updatedAt: new Date(T0),
  ...over,
});

/** What both stores offer, answered asynchronously; emit runs a post change in a transaction of its own. */
interface Hooks {
  create(siteId: string, input: WebhookInput): Promise<WebhookRow>;
  get(siteId: string, id: string): Promise<WebhookRow>;
  list(siteId: string): Promise<unknown>;
  update(siteId: string, id: string, patch: WebhookPatch): Promise<WebhookRow>;
  rotate(siteId: string, id: string): Promise<WebhookRow>;
  delete(siteId: string, id: string): Promise<void>;
  /** A post change, committed (or rolled back when `fail`). */
  emit(before: PostRow | null, after: PostRow | null, at: number, fail?: boolean): Promise<void>;
  target(deliveryId: string, jobId: string): Promise<unknown>;
  record(deliveryId: string, outcome: AttemptOutcome): Promise<unknown>;
  deliveries(siteId: string, id: string): Promise<{ items: DeliveryView[]; pagination: unknown }>;
  redeliver(siteId: string, webhookId: string, deliveryId: string): Promise<DeliveryView>;
  counts(): Promise<{ deliveries: number; jobs: number; attempts: number }>;
  webhookRow(id: string): Promise<WebhookRow | undefined>;
}

const options = (clock: { now: number }) => ({ allowPrivate: true, retryBaseMs: 1000, now: () => clock.now, random: () => 0.5 });
const ROLLBACK = new Error('rolled back on purpose');

/** What the scenario reads behind the store, on each database. */
interface BehindTheStore {
  jobOf(deliveryId: string): Promise<JobRow>;
  counts(): Promise<{ deliveries: number; jobs: number; attempts: number }>;
  webhookRow(id: string): Promise<WebhookRow | undefined>;
}

function storeHooks(stores: Stores, clock: { now: number }, behind: BehindTheStore): Hooks {
  const store = stores.webhooks(options(clock));
  return {
    create: (siteId, input) => store.create(siteId, input),
    get: (siteId, id) => store.get(siteId, id),
    list: (siteId) => store.list(siteId, 1, 10),
    update: (siteId, id, patch) => store.update(siteId, id, patch),
    rotate: (siteId, id) => store.rotateSecret(siteId, id),
    delete: (siteId, id) => store.delete(siteId, id),
    emit: async (before, after, at, fail) => {
      await stores.db.write(function* () {
        yield* store.postChanged({ siteId: SITE, before, after, at: new Date(at) });
        if (fail) throw ROLLBACK;
      });
    },
    target: (deliveryId, jobId) => store.attemptTarget(deliveryId, jobId),
    record: async (deliveryId, outcome) => {
      const job = await behind.jobOf(deliveryId);
      return stores.db.write(() => store.recordAttempt(job, outcome));
    },
    deliveries: (siteId, id) => store.deliveries(siteId, id, { page: 1, limit: 20 }),
    redeliver: (siteId, webhookId, deliveryId) => store.retryDelivery(siteId, webhookId, deliveryId),
    counts: () => behind.counts(),
    webhookRow: (id) => behind.webhookRow(id),
  };
}

function sqliteHooks(handle: Databases['sqliteHandle'], clock: { now: number }): Hooks {
  const { db } = handle;
  return storeHooks(sqliteStores(handle), clock, {
    jobOf: async (deliveryId) => {
      const delivery = db.select().from(sqliteSchema.webhookDeliveries).where(eq(sqliteSchema.webhookDeliveries.id, deliveryId)).get()!;
      return db.select().from(sqliteSchema.jobs).where(eq(sqliteSchema.jobs.id, delivery.jobId!)).get()!;
    },
    counts: async () => ({
      deliveries: await db.$count(sqliteSchema.webhookDeliveries),
      jobs: await db.$count(sqliteSchema.jobs),
      attempts: await db.$count(sqliteSchema.webhookAttempts),
    }),
    webhookRow: async (id) => db.select().from(sqliteSchema.webhooks).where(eq(sqliteSchema.webhooks.id, id)).get(),
  });
}

function pgHooks(handle: PostgresHandle, clock: { now: number }): Hooks {
  const { db } = handle;
  return storeHooks(postgresStores(handle), clock, {
    jobOf: async (deliveryId) => {
      const [delivery] = await db.select().from(pgSchema.webhookDeliveries).where(eq(pgSchema.webhookDeliveries.id, deliveryId));
      const [job] = await db.select().from(pgSchema.jobs).where(eq(pgSchema.jobs.id, delivery!.jobId!));
      return job!;
    },
    counts: async () => ({
      deliveries: await db.$count(pgSchema.webhookDeliveries),
      jobs: await db.$count(pgSchema.jobs),
      attempts: await db.$count(pgSchema.webhookAttempts),
    }),
    webhookRow: async (id) => (await db.select().from(pgSchema.webhooks).where(eq(pgSchema.webhooks.id, id)))[0],
  });
}

/** Random ids and secrets as labels, in order of first appearance: the same on both databases when the scenario is. */
function normalise(value: unknown): unknown {
  const labels = new Map<string, string>();
  const text = JSON.stringify(value).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|whsec_[A-Za-z0-9+/=]+/g, (match) => {
    if (!labels.has(match)) labels.set(match, `${match.startsWith('whsec_') ? 'secret' : 'id'}#${labels.size}`);
    return labels.get(match)!;
  });
  return JSON.parse(text);
}

const result = (over: Partial<AttemptResult>): AttemptResult => ({ verdict: 'succeeded', status: 200, body: 'ok', error: null, retryAfterMs: null, durationMs: 12, ...over });

async function settle<T>(promise: Promise<T>): Promise<T | { error: string; status: number; message: string }> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof AppError) return { error: error.code, status: error.statusCode, message: error.message };
    throw error;
  }
}

/** Every answer of a scenario, in order. */
async function play(hooks: Hooks, clock: { now: number }): Promise<unknown[]> {
  const steps: unknown[] = [];
  const step = async (label: string, value: Promise<unknown>) => steps.push([label, await settle(value)]);

  // Endpoints.
  const a = await hooks.create(SITE, { url: 'http://127.0.0.1:9/a', events: ['post.created', 'post.published', 'post.created'], description: ' Rebuild ' });
  steps.push(['create a', a]);
  clock.now += 1000;
  const b = await hooks.create(SITE, { url: 'http://127.0.0.1:9/b', events: ['post.created'], enabled: false });
  steps.push(['create b (disabled)', b]);
  clock.now += 1000;
  const c = await hooks.create(SITE, { url: 'http://127.0.0.1:9/c', events: ['post.updated', 'post.created'] });
  steps.push(['create c', c]);
  await step('bad url', hooks.create(SITE, { url: 'ftp://x/', events: ['post.created'] }));
  await step('no events', hooks.create(SITE, { url: 'http://127.0.0.1:9/', events: [] }));
  await step('list', hooks.list(SITE));
  await step('list of another site', hooks.list(OTHER_SITE));
  await step('get from another site', hooks.get(OTHER_SITE, a.id));
  clock.now += 1000;
  await step('disable c', hooks.update(SITE, c.id, { enabled: false, description: 'x' }));
  await step('enable c', hooks.update(SITE, c.id, { enabled: true, events: ['post.created'] }));
  const rotated = await hooks.rotate(SITE, a.id);
  steps.push(['rotate', { ...rotated, keepsOld: rotated.previousSecret === a.secret }]);
  await step('delete from another site', hooks.delete(OTHER_SITE, b.id));
  await step('delete b', hooks.delete(SITE, b.id));
  await step('get b', hooks.get(SITE, b.id));

  // The outbox: a rolled-back change queues nothing; a committed one queues a delivery and a job per endpoint and event.
  clock.now += 1000;
  await settle(hooks.emit(null, post(), clock.now, true)).catch((error: unknown) => steps.push(['rollback', (error as Error).message]));
  steps.push(['after rollback', await hooks.counts()]);
  await hooks.emit(null, post({ isDraft: false }), clock.now);
  steps.push(['after commit', await hooks.counts()]);
  const listed = await hooks.deliveries(SITE, a.id);
  steps.push(['deliveries of a', listed]);
  const ofC = await hooks.deliveries(SITE, c.id);
  steps.push(['deliveries of c', ofC]);

  // Attempts: a retry (with Retry-After), a success; a target before and after.
  const [published, created] = listed.items;
  clock.now += 500;
  await step('record a retry', hooks.record(created!.id, { startedAt: clock.now - 100, result: result({ verdict: 'retry', status: 503, body: 'busy', error: 'HTTP 503', retryAfterMs: 30_000 }) }));
  await step('webhook after a failure', hooks.webhookRow(a.id));
  clock.now += 30_000;
  await step('record a success', hooks.record(created!.id, { startedAt: clock.now - 50, result: result({}) }));
  await step('webhook after a success', hooks.webhookRow(a.id));
  await step('record on a finished delivery', hooks.record(created!.id, { startedAt: clock.now, result: result({}) }));
  await step('record skipped: disabled', hooks.record(published!.id, { skip: 'disabled', reason: 'Off' }));
  await step('redeliver a pending one', hooks.redeliver(SITE, c.id, ofC.items[0]!.id));
  await step('redeliver one that failed unsent', hooks.redeliver(SITE, a.id, published!.id));
  clock.now += 1000;
  await step('redeliver', hooks.redeliver(SITE, a.id, created!.id));
  await step('deliveries after', hooks.deliveries(SITE, a.id));

  // A day of failures disables the endpoint and fails its delivery.
  await hooks.emit(post({ isDraft: false }), post({ isDraft: false, title: 'Edited' }), clock.now);
  const updated = (await hooks.deliveries(SITE, c.id)).items;
  steps.push(['updates reach nobody subscribed', updated.length]);
  clock.now += 1000;
  await step('first failure', hooks.record(created!.id, { startedAt: clock.now, result: result({ verdict: 'retry', status: 500, error: 'HTTP 500' }) }));
  clock.now += WEBHOOK_DISABLE_AFTER_MS;
  await step('failure a day later', hooks.record(created!.id, { startedAt: clock.now, result: result({ verdict: 'retry', status: 500, error: 'HTTP 500' }) }));
  await step('webhook disabled', hooks.webhookRow(a.id));
  await step('redeliver while disabled', hooks.redeliver(SITE, a.id, created!.id));
  await step('final deliveries', hooks.deliveries(SITE, a.id));
  steps.push(['final counts', await hooks.counts()]);
  return steps;
}

function defineTests(): void {
  t.test('the same scenario tells the same on SQLite and PostgreSQL', async (t) => {
    const { sqliteHandle, pg } = await databases(t);
    const sqliteClock = { now: T0 };
    const pgClock = { now: T0 };
    const onSqlite = normalise(await play(sqliteHooks(sqliteHandle, sqliteClock), sqliteClock));
    const onPg = normalise(await play(pgHooks(pg, pgClock), pgClock));
    t.same(onPg, onSqlite);
    // A few landmarks, so that agreeing on nonsense would not pass.
    const steps = new Map((onSqlite as [string, unknown][]).map(([label, value]) => [label, value]));
    t.same(steps.get('after rollback'), { deliveries: 0, jobs: 0, attempts: 0 }, 'a rolled-back change queues nothing');
    t.same(steps.get('after commit'), { deliveries: 3, jobs: 3, attempts: 0 }, 'a created+published post: two deliveries to a, one to c, each with its job');
    t.match(steps.get('record a retry'), { attempt: 1, outcome: 'retry', status: 503 });
    t.match(steps.get('webhook after a failure'), { failingSince: String, lastSuccessAt: null });
    t.match(steps.get('record a success'), { attempt: 2, outcome: 'succeeded', status: 200 });
    t.match(steps.get('webhook after a success'), { failingSince: null, lastSuccessAt: String });
    t.match(steps.get('record on a finished delivery'), { skipped: 'superseded' });
    t.match(steps.get('final counts'), { attempts: 4 });
    t.match(steps.get('redeliver a pending one'), { status: 409 });
    t.match(steps.get('redeliver one that failed unsent'), { status: 'pending', attempts: 0 });
    t.match(steps.get('webhook disabled'), { enabled: false, disabledReason: /^Disabled automatically/ });
    t.match(steps.get('redeliver while disabled'), { status: 409 });
  });

  t.test('PostgreSQL: two pools emitting at once queue exactly one delivery and one job per event', async (t) => {
    const { url } = await databases(t);
    const clock = { now: T0 };
    const first = await openPostgres(url, { poolMax: 4 });
    const second = await openPostgres(url, { poolMax: 4 });
    t.teardown(() => Promise.all([first.close(), second.close()]));
    const one = pgHooks(first, clock);
    const two = pgHooks(second, clock);
    const hook = await one.create(SITE, { url: 'http://127.0.0.1:9/a', events: ['post.created'] });
    const EVENTS = 40;
    const settled = await Promise.allSettled(
      Array.from({ length: EVENTS }, (_, i) => (i % 2 ? one : two).emit(null, post({ id: `post-${i}`, slug: `p-${i}` }), T0 + i, i % 10 === 9)),
    );
    t.equal(settled.filter((outcome) => outcome.status === 'rejected').length, EVENTS / 10, 'only the changes meant to roll back failed');
    // Every tenth change rolls back: what remains is one delivery per committed event, each with its own job.
    const committed = Array.from({ length: EVENTS }, (_, i) => i).filter((i) => i % 10 !== 9);
    const rows = await first.db.select().from(pgSchema.webhookDeliveries);
    t.equal(rows.length, committed.length);
    const posts = rows.map((row) => (JSON.parse(row.payload) as { data: { post: { id: string } } }).data.post.id).sort();
    t.same(posts, committed.map((i) => `post-${i}`).sort(), 'each committed event once, none of the rolled-back ones');
    const jobRows = await first.db.select().from(pgSchema.jobs);
    t.equal(jobRows.length, rows.length);
    t.same(new Set(rows.map((row) => row.jobId)), new Set(jobRows.map((job) => job.id)), 'each delivery has its own job');
    t.ok(jobRows.every((job) => job.groupId === hook.id && job.kind === 'webhook-delivery'));
  });

  t.test('PostgreSQL: endpoints created at once through two pools stay within the per-site limit', async (t) => {
    const { url } = await databases(t);
    const clock = { now: T0 };
    const first = await openPostgres(url, { poolMax: 4 });
    const second = await openPostgres(url, { poolMax: 4 });
    t.teardown(() => Promise.all([first.close(), second.close()]));
    const pools = [pgHooks(first, clock), pgHooks(second, clock)];
    const tries = MAX_WEBHOOKS_PER_SITE + 6;
    const settled = await Promise.allSettled(Array.from({ length: tries }, (_, i) => pools[i % 2]!.create(SITE, { url: `http://127.0.0.1:9/${i}`, events: ['post.created'] })));
    t.equal(settled.filter((outcome) => outcome.status === 'fulfilled').length, MAX_WEBHOOKS_PER_SITE);
    t.ok(settled.every((outcome) => outcome.status === 'fulfilled' || (outcome.reason instanceof AppError && outcome.reason.statusCode === 409)), 'the others are refused with a 409');
    t.equal(await first.db.$count(pgSchema.webhooks), MAX_WEBHOOKS_PER_SITE);
  });
}

// Last: the first test starts as it is defined, and uses the constants above.
postgresTests(defineTests);
