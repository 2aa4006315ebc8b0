/**
 * A full disk, a per-site storage quota, and a database another program has locked: the
 * process never ends for them, requests answer in the envelope (507, 413, 503), background
 * work waits and resumes, and /ready says what is going on.
 *
 * A full disk is simulated two ways: SQLite's `max_page_count` on the app's own connection
 * (a real SQLITE_FULL from SQLite, for requests and the indexer), and a queue whose every
 * write throws SQLITE_FULL (the job loop, whose small updates would otherwise still fit in
 * pages the database already has).
 */
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { FastifyInstance, InjectOptions } from 'fastify';
import t, { type Test } from 'tap';
import { openDatabase } from '../../src/db/sqlite.js';
import { describe as describeError } from '../../plugins/errors.js';
import { JobLoop, type JobHandler } from '../../src/jobs/loop.js';
import type { JobQueue } from '../../src/jobs/store.js';
import { sqliteStores } from '../../src/stores/sqlite.js';
import { EFFECT, markSteps } from '../helpers/job-effect.js';
import type { ChunkSource } from '../../src/knowledge/indexer.js';
import { extractChunks } from '../../src/knowledge/extract.js';
import { ReadinessService } from '../../src/readiness.js';
import { createSite } from '../helpers/sites.js';
import { BOOTSTRAP_KEY, buildTestApp, startApp, tempDataDir, testConfig, waitFor } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

const silent = { info() {}, warn() {}, error() {} };

/** The app's own SQLite connection (where a page limit simulates a full disk for the app only). */
const clientOf = (db: unknown): Database.Database => (db as { $client: Database.Database }).$client;
const appSqlite = (app: FastifyInstance): Database.Database => clientOf(app.database.db);

/** No page beyond those the database has now: every write that needs a new page fails with SQLITE_FULL. */
function fillDisk(sqlite: Database.Database): void {
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
  const pages = sqlite.pragma('page_count', { simple: true }) as number;
  sqlite.pragma(`max_page_count = ${pages}`);
}
const freeDisk = (sqlite: Database.Database) => sqlite.pragma('max_page_count = 1073741823');

const prose = (bytes: number) => {
  const sentence = 'Espresso is brewed by forcing hot water through finely ground coffee at high pressure. ';
  return sentence.repeat(Math.ceil(bytes / sentence.length)).slice(0, bytes);
};

const uploadForm = (name: string, content: string | Buffer) => multipart([{ name: 'file', filename: name, content }]);

/** A chunk source that waits for `open()` before extracting, so a test can change the disk in between. */
function gatedSource() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const calls: string[] = [];
  const source: ChunkSource = async (filePath, ext, fileName, options) => {
    calls.push(fileName);
    await gate;
    return extractChunks(filePath, ext, fileName, options);
  };
  return { source, open: () => release(), calls };
}

async function appWithSource(t: Test, dataDir: string, source: ChunkSource, env: Record<string, string> = {}) {
  const config = testConfig(dataDir, env);
  const app = await startApp(t, config, { chunkSource: source, indexer: { retryBaseMs: 20, retryMaxMs: 100 }, jobs: { autoStart: false } });
  const call = (options: InjectOptions) => app.inject({ ...options, headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, ...options.headers } });
  return { app, call };
}

t.test('a full disk answers 507 INSUFFICIENT_STORAGE in the envelope, and /ready says so', async (t) => {
  const ctx = await buildTestApp(t);
  const sqlite = appSqlite(ctx.app);
  fillDisk(sqlite);
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Too big for the disk', content: prose(300_000) } });
  t.equal(res.statusCode, 507);
  const body = res.json();
  t.equal(body.success, false);
  t.equal(body.error.code, 'INSUFFICIENT_STORAGE');
  t.match(body.error.message, /out of disk space/);
  t.equal(body.error.requestId, res.headers['x-request-id']);
  t.equal((await ctx.app.readiness.check()).storage, 'full', 'readiness reports the full disk');
  t.equal((await ctx.call({ method: 'GET', url: '/ready' })).statusCode, 200, 'still ready: reads work');

  freeDisk(sqlite);
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Fits now', content: prose(300_000) } })).statusCode, 201);

  // The file system's own words for it (an upload's temporary file) mean the same.
  for (const code of ['ENOSPC', 'EDQUOT']) {
    t.match(describeError(Object.assign(new Error('no space left on device'), { code })), { statusCode: 507, code: 'INSUFFICIENT_STORAGE' }, code);
  }
});

t.test('the indexer leaves files pending on a full disk, backs off, and resumes when space is back', async (t) => {
  const dataDir = tempDataDir(t);
  const first = gatedSource();
  const a = await appWithSource(t, dataDir, first.source);
  const form = uploadForm('guide.txt', prose(200_000));
  const res = await a.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers });
  t.equal(res.statusCode, 201);
  const fileId = res.json().data.knowledge.id;
  await waitFor(() => first.calls.length === 1, 'extraction to start');
  const sqlite = appSqlite(a.app);
  fillDisk(sqlite);
  first.open();
  await waitFor(() => a.app.indexer.status().waiting, 'the indexer to wait for space');
  const status = (await a.call({ method: 'GET', url: `/api/v1/knowledge/${fileId}` })).json().data.knowledge;
  t.equal(status.status, 'uploaded', 'left pending, not failed');
  t.equal(status.error, null);
  t.equal(a.app.indexer.status().waiting?.reason, 'storage-full');
  t.match(await a.app.readiness.check(), { storage: 'full', indexing: 'waiting' });
  // It keeps trying (with backoff) without ending the process.
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal((await a.call({ method: 'GET', url: `/api/v1/knowledge/${fileId}` })).json().data.knowledge.status, 'uploaded');
  await a.app.close();

  // A restart on a disk still full indexes the pending file again, and does not die of it.
  const second = gatedSource();
  const b = await appWithSource(t, dataDir, second.source);
  await waitFor(() => second.calls.length === 1, 'the restarted server to resume the pending file');
  fillDisk(appSqlite(b.app));
  second.open();
  await waitFor(() => b.app.indexer.status().waiting, 'the restarted indexer to wait for space');
  t.equal((await b.call({ method: 'GET', url: `/api/v1/knowledge/${fileId}` })).json().data.knowledge.status, 'uploaded');

  freeDisk(appSqlite(b.app));
  await waitFor(async () => (await b.call({ method: 'GET', url: `/api/v1/knowledge/${fileId}` })).json().data.knowledge.status === 'indexed', 'indexing to resume');
  t.equal(b.app.indexer.status().waiting, null);
  t.equal((await b.app.readiness.check()).indexing, 'ok');
  const chunks = (appSqlite(b.app).prepare('select count(*) as n from knowledge_chunks where file_id = ?').get(fileId) as { n: number }).n;
  t.ok(chunks > 100, `${chunks} chunks, written once`);
});

/** A queue whose every write fails with SQLITE_FULL while `full` is set. */
function queueOnADisk(queue: JobQueue) {
  const disk = { full: false };
  const diskFull = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
  for (const method of ['claim', 'heartbeat', 'release', 'giveBack', 'succeed', 'defer', 'fail'] as const) {
    const original = queue[method].bind(queue) as (...args: unknown[]) => unknown;
    (queue as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      if (disk.full) throw diskFull();
      return original(...args);
    };
  }
  return disk;
}

t.test('the job loop survives a full disk at the end of a job: the job goes back to pending, nothing is charged', async (t) => {
  const handle = openDatabase(tempDataDir(t));
  t.teardown(() => handle.close());
  const site = createSite(handle.db, 'Jobs');
  const queue = sqliteStores(handle).jobs.scoped({ only: ['note'] });
  const disk = queueOnADisk(queue);
  let runs = 0;
  const handler: JobHandler<{ n: number }, string> = {
    kind: 'note',
    async run() {
      runs++;
      // The disk fills while the job runs: its success, then its failure, cannot be written.
      if (runs === 1) disk.full = true;
      return 'done';
    },
    *complete(_result, job) {
      yield* markSteps(EFFECT, job.siteId, job.id);
      return { ok: true };
    },
  };
  const clock = { ms: 1_000_000, now() { return this.ms; } };
  const loop = new JobLoop(queue, [handler], { pollMs: 50, concurrency: 1, leaseMs: 60_000, shutdownTimeoutMs: 1000, backoffBaseMs: 100, clock, random: () => 0, log: silent });
  const [job] = await queue.enqueue(site.id, [{ kind: 'note', payload: { n: 1 }, scheduledFor: new Date(clock.ms) }], 3, new Date(clock.ms));
  await loop.tick();
  await loop.whenIdle();
  t.equal(runs, 1);
  t.match(loop.status(), { state: 'stopped', waiting: { reason: 'storage-full' } }, 'waits for space');
  // While waiting it neither claims nor crashes, however often it is asked.
  await loop.tick();
  clock.ms += 10_000;
  await loop.tick();
  t.equal(runs, 1, 'nothing claimed while the disk is full');

  disk.full = false;
  clock.ms += 60_000;
  await loop.tick();
  await loop.whenIdle();
  const after = await queue.get(site.id, 'note', job!.id);
  t.equal(after.status, 'succeeded', 'given back, run again, saved');
  t.equal(after.attempts, 1, 'the attempt the full disk spoiled was not counted');
  t.equal(runs, 2);
  t.equal(loop.status().waiting, null);
});

t.test('a site past SITE_STORAGE_QUOTA_MB gets 413 QUOTA_EXCEEDED naming its usage and quota; others are not affected', async (t) => {
  const ctx = await buildTestApp(t, { SITE_STORAGE_QUOTA_MB: '1' });
  const upload = (name: string, content: string, key?: string) => {
    const form = uploadForm(name, content);
    return ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers, key });
  };
  const first = await upload('first.txt', prose(400_000));
  t.equal(first.statusCode, 201);
  await ctx.app.indexer.whenIdle();
  // 400 KB of file plus its index (~2 x its size): past 1 MB.
  const refused = await upload('second.txt', prose(1000));
  t.equal(refused.statusCode, 413);
  const error = refused.json().error;
  t.equal(error.code, 'QUOTA_EXCEEDED');
  t.match(error.message, /uses 1\.\d MB of its 1\.0 MB storage quota/);
  t.ok(error.details.usageBytes > 1024 * 1024 && error.details.quotaBytes === 1024 * 1024, 'details carry the numbers');
  t.same(fs.readdirSync(path.join(ctx.dataDir, 'storage', '.tmp')), [], 'nothing left behind');

  const other = await ctx.addSite('Other');
  t.equal((await upload('theirs.txt', prose(1000), other.key)).statusCode, 201, 'another site uploads');

  // Deleting makes room again; a file larger than the room left is refused whole.
  await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${first.json().data.knowledge.id}` });
  const tooBig = await upload('big.txt', prose(1_100_000));
  t.equal(tooBig.statusCode, 413);
  t.match(tooBig.json().error.message, /this file \(1\.0 MB\) does not fit/);
  t.equal((await upload('small.txt', prose(1000))).statusCode, 201);
});

t.test('a database locked by another program: writes answer 503 DATABASE_BUSY at once, /health never waits', async (t) => {
  const ctx = await buildTestApp(t);
  const other = ctx.sqlite;
  other.exec('BEGIN EXCLUSIVE');
  other.prepare("update sites set name = name || '' where 0").run();
  t.teardown(() => other.inTransaction && other.exec('ROLLBACK'));

  let started = Date.now();
  const health = await ctx.call({ method: 'GET', url: '/health', key: null });
  t.equal(health.statusCode, 200);
  t.ok(Date.now() - started < 200, '/health does not touch the database');

  for (const [method, url, payload] of [
    ['POST', '/api/v1/posts', { title: 'Locked out' }],
    ['POST', '/api/v1/posts/batch', { posts: [{ topic: 'Espresso' }] }],
  ] as const) {
    started = Date.now();
    const res = await ctx.call({ method, url, payload });
    const took = Date.now() - started;
    t.equal(res.statusCode, 503, `${url}: 503`);
    t.equal(res.json().error.code, 'DATABASE_BUSY');
    t.equal(res.headers['retry-after'], '1');
    t.ok(took < 1500, `${url}: answered in ${took} ms, not after a 5 s busy wait`);
  }
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts' })).statusCode, 200, 'reads go on');

  other.exec('ROLLBACK');
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Unlocked' } })).statusCode, 201);
});

t.test('a public page rendered for the first time is served on a full disk and on a locked database (keeping its HTML is skipped)', async (t) => {
  const ctx = await buildTestApp(t);
  const handle = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site.handle;
  const content = `# Notes\n\n${prose(30_000)}`;
  const slugs: string[] = [];
  for (const title of ['Read on a full disk', 'Read on a locked database']) {
    const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title, content, isDraft: false } });
    t.equal(res.statusCode, 201);
    slugs.push(res.json().data.post.slug);
  }
  const html = (slug: string) => ctx.sqlite.prepare('select html from posts where slug = ?').get(slug) as { html: string | null };
  t.equal(html(slugs[0]!).html, null, 'not rendered yet');

  fillDisk(appSqlite(ctx.app));
  const full = await ctx.call({ method: 'GET', url: `/sites/${handle}/${slugs[0]}/`, key: null });
  t.equal(full.statusCode, 200, 'a full disk: the page is still served');
  t.match(full.body, 'Espresso is brewed');
  t.equal(html(slugs[0]!).html, null, 'its HTML was not kept');
  freeDisk(appSqlite(ctx.app));

  const other = ctx.sqlite;
  other.exec('BEGIN EXCLUSIVE');
  other.prepare("update sites set name = name || '' where 0").run();
  t.teardown(() => other.inTransaction && other.exec('ROLLBACK'));
  const locked = await ctx.call({ method: 'GET', url: `/sites/${handle}/${slugs[1]}/`, key: null });
  t.equal(locked.statusCode, 200, 'a locked database: the page is still served');
  other.exec('ROLLBACK');
});

t.test('the job loop backs off while the database is locked, instead of blocking the event loop on every poll', async (t) => {
  const dataDir = tempDataDir(t);
  const handle = openDatabase(dataDir, { busyTimeoutMs: 250 });
  t.teardown(() => handle.close());
  const site = createSite(handle.db, 'Jobs');
  const queue = sqliteStores(handle).jobs;
  const clock = { ms: 1_000_000, now() { return this.ms; } };
  const handler: JobHandler<object, string> = { kind: 'note', run: async () => 'ok', *complete() { return {}; } };
  const loop = new JobLoop(queue, [handler], { pollMs: 50, concurrency: 1, leaseMs: 60_000, shutdownTimeoutMs: 1000, backoffBaseMs: 1000, clock, random: () => 0, log: silent });
  const [job] = await queue.enqueue(site.id, [{ kind: 'note', payload: {}, scheduledFor: new Date(clock.ms) }], 3, new Date(clock.ms));

  const other = clientOf(openDatabase(dataDir).db);
  t.teardown(() => other.close());
  other.exec('BEGIN EXCLUSIVE');
  other.prepare("update sites set name = name || '' where 0").run();
  await loop.tick();
  t.match(loop.status(), { waiting: { reason: 'database-busy' } });
  // Polls within the backoff return at once: no 250 ms wait on the lock each time.
  const started = Date.now();
  for (let i = 0; i < 10; i++) await loop.tick();
  t.ok(Date.now() - started < 200, `10 polls in ${Date.now() - started} ms`);

  other.exec('ROLLBACK');
  clock.ms += 5000;
  await loop.tick();
  await loop.whenIdle();
  t.equal((await queue.get(site.id, 'note', job!.id)).status, 'succeeded');
  t.equal(loop.status().waiting, null);
});

t.test('the job loop retries its start when the database is locked at start-up, and /ready says so', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false, backoffBaseMs: 40 } });
  const other = ctx.sqlite;
  other.exec('BEGIN EXCLUSIVE');
  other.prepare("update sites set name = name || '' where 0").run();
  ctx.app.jobs.start(); // what listening does; it must not throw
  t.equal(ctx.app.jobs.status().state, 'starting');
  const ready = await ctx.call({ method: 'GET', url: '/ready', key: null });
  t.equal(ready.statusCode, 503, '/ready is not ready while the loop cannot start');
  t.equal(ready.json().status, 'not ready');
  t.match(await ctx.app.readiness.check(), { ready: false, jobs: 'starting' });

  other.exec('ROLLBACK');
  await waitFor(() => ctx.app.jobs.status().state === 'running', 'the loop to start once unlocked', 5000);
  t.equal((await ctx.call({ method: 'GET', url: '/ready', key: null })).statusCode, 200);
});

t.test('readiness: a locked database and a waiting loop are reported, only a failed start makes it unready', async (t) => {
  const generator = { status: async () => ({ mode: 'builtin', active: 'builtin', ollama: { host: '', model: '', reachable: false, modelAvailable: false } }) } as const;
  const readiness = new ReadinessService({ ping: async () => {}, location: { kind: 'sqlite', file: 'blog.db' } }, generator as never);
  let jobs = { state: 'waiting', active: 0, waiting: { reason: 'database-busy', retryAt: new Date(), message: 'locked' } };
  readiness.watchJobs(() => jobs as never);
  t.match(await readiness.check(), { ready: true, database: 'locked', storage: 'ok', jobs: 'waiting' });
  jobs = { state: 'starting', active: 0, waiting: { reason: 'database-busy', retryAt: new Date(), message: 'locked' } };
  t.match(await readiness.check(), { ready: false, jobs: 'starting' });
});
