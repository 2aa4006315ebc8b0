import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import * as pgSchema from '../../src/db/pg-schema.js';
import { openPostgres, type PostgresHandle } from '../../src/db/postgres.js';
import * as sqliteSchema from '../../src/db/schema.js';
import { AppError } from '../../src/errors.js';
import type { Begin, StoredResponse } from '../../src/idempotency/decisions.js';
import { postgresStepDatabase } from '../../src/db/postgres-steps.js';
import { sqliteStepDatabase } from '../../src/db/sqlite-steps.js';
import { IdempotencyStore, InProcessRequests, LeasedClaims } from '../../src/idempotency/store.js';
import { postgresAdapters } from '../../src/stores/postgres.js';
import { sqliteAdapters } from '../../src/stores/sqlite.js';
import { IDEMPOTENCY_RUNNING_LEASE_MS, IDEMPOTENCY_TTL_MS } from '../../src/limits.js';
import { ExtractionError } from '../../src/knowledge/extractor-protocol.js';
import { ask, type StepDatabase } from '../../src/db/steps.js';
import { chunkRows, chunkTextBytes, uploadedFileRow, type KnowledgeFileRow } from '../../src/knowledge/file-rows.js';
import { KnowledgeIndexer } from '../../src/knowledge/indexer.js';
import { KnowledgeService } from '../../src/knowledge/service.js';
import { sqliteKnowledgeOptions } from '../../src/knowledge/sqlite.js';
import { knowledgeStores, type KnowledgeStores } from '../../src/knowledge/store.js';
import type { ObjectStore } from '../../src/knowledge/storage.js';
import { SiteStorageUsage, storageUsage } from '../../src/knowledge/usage.js';
import { bothDatabases, type Databases } from '../helpers/both-databases.js';
import { postgresTests } from '../helpers/postgres.js';
import { asc } from '../../src/db/orm.js';

// The idempotency store (src/idempotency/store.ts) and the knowledge stores on PostgreSQL
// (src/knowledge/postgres.ts answering files.ts and usage.ts) beside SQLite's: the same scenario played on both
// databases, with the same clock, must tell the same; then what only several instances sharing
// PostgreSQL can show: requests with one key arriving at once on two instances.

const SITE = 'site-1';
const OTHER_SITE = 'site-2';
const T0 = Date.parse('2026-03-02T09:00:00.000Z');
const siteRow = (id: string) => ({ id, name: id, handle: id, createdAt: new Date(T0 - 60_000) });

/** A SQLite and a PostgreSQL database, each with the two sites. */
function databases(t: Test): Promise<Databases> {
  return bothDatabases(t, [SITE, OTHER_SITE].map(siteRow));
}

/** The store as each database's wiring builds it (src/stores/): on PostgreSQL, one per instance. */
const sqliteKeys = (db: Databases['sqlite']) => new IdempotencyStore(sqliteStepDatabase(db, sqliteAdapters), new InProcessRequests());
const pgKeys = (handle: PostgresHandle) => new IdempotencyStore(postgresStepDatabase(handle, postgresAdapters), new LeasedClaims());

const CREATED: StoredResponse = { status: 201, contentType: 'application/json; charset=utf-8', body: '{"id":"é 東京 🎉"}' };
const ACCEPTED: StoredResponse = { status: 202, contentType: null, body: '' };

/** Every decision of a scenario, in order: the same on both databases. */
async function playIdempotency(keys: IdempotencyStore): Promise<unknown[]> {
  const steps: unknown[] = [];
  const begin = async (label: string, siteId: string, key: string, fingerprint: string | null, now: number) =>
    steps.push([label, await keys.begin(siteId, key, fingerprint, now)]);

  await begin('first request runs', SITE, 'k1', 'f1', T0);
  await begin('its retry while it runs', SITE, 'k1', 'f1', T0 + 10);
  await begin('another request while it runs', SITE, 'k1', 'f2', T0 + 10);
  await begin('an upload while it runs', SITE, 'k1', null, T0 + 10);
  await begin('the key on another site', OTHER_SITE, 'k1', 'f2', T0 + 10);
  await keys.complete(SITE, 'k1', 'f1', CREATED);
  await keys.complete(OTHER_SITE, 'k1', 'f2', ACCEPTED);
  await begin('the same request replays', SITE, 'k1', 'f1', T0 + 20);
  await begin('another request is refused', SITE, 'k1', 'f2', T0 + 20);
  await begin('an upload compares', SITE, 'k1', null, T0 + 20);
  await begin('the other site replays its own', OTHER_SITE, 'k1', 'f2', T0 + 20);

  await begin('a request that will fail', SITE, 'k2', 'f1', T0 + 30);
  await keys.release(SITE, 'k2');
  await begin('its retry runs anew', SITE, 'k2', 'f1', T0 + 40);
  await begin('in use again', SITE, 'k2', 'f1', T0 + 40);
  await keys.release(SITE, 'k2');
  await begin('a release frees it for another request too', SITE, 'k2', 'f3', T0 + 50);
  await keys.complete(SITE, 'k2', 'f3', ACCEPTED);

  await begin('an upload runs', SITE, 'k3', null, T0 + 60);
  await begin('a JSON request while it is hashed', SITE, 'k3', 'f1', T0 + 60);
  await begin('another upload while it runs', SITE, 'k3', null, T0 + 60);
  await keys.complete(SITE, 'k3', 'upload-digest', CREATED);
  await begin('the upload compares', SITE, 'k3', null, T0 + 70);

  // A day after the first request began, its answer is gone; the last millisecond before, not.
  await begin('the last millisecond replays', SITE, 'k1', 'f1', T0 + IDEMPOTENCY_TTL_MS - 1);
  await begin('expired: runs again', SITE, 'k1', 'f2', T0 + IDEMPOTENCY_TTL_MS);
  await keys.complete(SITE, 'k1', 'f2', ACCEPTED);
  await begin('the new answer replays', SITE, 'k1', 'f2', T0 + IDEMPOTENCY_TTL_MS + 1);
  steps.push(['purged a minute before the day ends', await keys.purge(T0 + IDEMPOTENCY_TTL_MS - 60_000)]);
  steps.push(['purged after the day', await keys.purge(T0 + IDEMPOTENCY_TTL_MS + 60_000)]);
  await begin('a purged key runs', SITE, 'k2', 'f1', T0 + IDEMPOTENCY_TTL_MS + 60_000);
  await keys.release(SITE, 'k2');
  await begin('the renewed key still replays', SITE, 'k1', 'f2', T0 + IDEMPOTENCY_TTL_MS + 60_000);
  steps.push(['nothing more to purge', await keys.purge(T0 + IDEMPOTENCY_TTL_MS + 60_000)]);
  return steps;
}

/** The file rows and chunks of a knowledge scenario, on one database. */
interface KnowledgeBackend {
  insert(row: KnowledgeFileRow): Promise<void>;
  /** Indexes the file as the indexer does: its chunks, or a failure of extraction. */
  index(fileId: string, chunks: string[] | ExtractionError): Promise<void>;
  get(siteId: string, fileId: string): Promise<KnowledgeFileRow>;
  list(siteId: string, page: number, limit: number): Promise<unknown>;
  existingIds(siteId: string, ids: string[]): Promise<Set<string>>;
  delete(siteId: string, fileId: string): Promise<void>;
  chunks(): Promise<{ fileId: string; siteId: string; ordinal: number; text: string }[]>;
  /** Usage with its tally kept by the writes, and counted afresh from the database. */
  usage(siteId: string): Promise<{ kept: number; counted: number }>;
}

/** Files stored nowhere: the statements are what is compared. */
const noStorage = {
  withLocalFile: (_key: string, use: (filePath: string) => Promise<unknown>) => use('/nonexistent'),
  remove: async () => {},
} as unknown as ObjectStore;

const silent = { info() {}, warn() {}, error() {} };

/** The indexer and the service over a database's knowledge stores, extracting what the scenario says. */
function indexing({ files, search, usage }: KnowledgeStores) {
  const extracted = new Map<string, string[] | ExtractionError>();
  const indexer = new KnowledgeIndexer(
    files,
    noStorage,
    silent,
    async (_path, _extension, fileName) => {
      const chunks = extracted.get(fileName)!;
      if (chunks instanceof ExtractionError) throw chunks;
      return chunks;
    },
    { concurrency: 1, smallFileBytes: 0 },
  );
  const service = new KnowledgeService(files, search, noStorage, indexer, { usage });
  return {
    async index(fileId: string, chunks: string[] | ExtractionError) {
      extracted.set((await files.current(fileId))!.name, chunks);
      indexer.enqueue(fileId);
      await indexer.whenIdle();
    },
    get: (siteId: string, fileId: string) => service.get(siteId, fileId),
    list: (siteId: string, page: number, limit: number) => service.list(siteId, page, limit),
    existingIds: (siteId: string, ids: string[]) => service.existingIds(siteId, ids),
    delete: (siteId: string, fileId: string) => service.delete(siteId, fileId),
  };
}

/** A database's knowledge stores, and its usage counted afresh (a new tally). */
function knowledgeOn(db: StepDatabase, options = {}) {
  const stores = knowledgeStores(db, options);
  return { stores, usage: async (siteId: string) => ({ kept: await stores.usage.usage(siteId), counted: await new SiteStorageUsage(db).usage(siteId) }) };
}

function sqliteKnowledge(db: Databases['sqlite']): KnowledgeBackend {
  const { stores, usage } = knowledgeOn(sqliteStepDatabase(db, sqliteAdapters), sqliteKnowledgeOptions);
  return {
    ...indexing(stores),
    insert: (row) => stores.files.insert(row),
    chunks: async () =>
      db
        .select({ fileId: sqliteSchema.knowledgeChunks.fileId, siteId: sqliteSchema.knowledgeChunks.siteId, ordinal: sqliteSchema.knowledgeChunks.ordinal, text: sqliteSchema.knowledgeChunks.text })
        .from(sqliteSchema.knowledgeChunks)
        .orderBy(asc(sqliteSchema.knowledgeChunks.id))
        .all(),
    usage,
  };
}

function pgKnowledge(handle: PostgresHandle): KnowledgeBackend & { files: KnowledgeStores['files'] } {
  const { stores, usage } = knowledgeOn(postgresStepDatabase(handle, postgresAdapters));
  return {
    ...indexing(stores),
    files: stores.files,
    insert: (row) => stores.files.insert(row),
    chunks: () =>
      handle.db
        .select({ fileId: pgSchema.knowledgeChunks.fileId, siteId: pgSchema.knowledgeChunks.siteId, ordinal: pgSchema.knowledgeChunks.ordinal, text: pgSchema.knowledgeChunks.text })
        .from(pgSchema.knowledgeChunks)
        .orderBy(asc(pgSchema.knowledgeChunks.id)),
    usage,
  };
}

/** An AppError as the API reports it; anything else fails the test. */
function reported(error: unknown) {
  if (!(error instanceof AppError)) throw error;
  return { error: { statusCode: error.statusCode, code: error.code, message: error.message } };
}

// Multi-byte text: accents (2 bytes), CJK (3 bytes), emoji (4 bytes, a surrogate pair in JavaScript).
const TEXTS = {
  english: ['Brewing coffee at home: a ratio of 1:16.', 'Grind the beans just before brewing.'],
  accents: ['Le CAFÉ crème de Zürich est servi à 8 heures.'],
  cjk: ['東京電力の福島第一原子力発電所は日本の発電所です。', '机器学习是人工智能的一个分支。', '한국어 문장입니다.'],
  emoji: ['Launch day 🚀🎉 — thanks 👩🏽‍💻!', '🏳️‍🌈 flags and ZWJ sequences 👨‍👩‍👧‍👦'],
  many: Array.from({ length: 60 }, (_, i) => `Chunk ${i}: 東京 ${'🎉'.repeat(i % 4)} café`),
};

/** The files of the scenario: ids fixed, so both databases list them alike; two share a creation time. */
function scenarioFiles(): KnowledgeFileRow[] {
  const upload = (name: string, size: number) => ({ name, extension: 'txt' as const, size });
  return [
    uploadedFileRow(SITE, randomUUID(), upload('english.txt', 1_000), new Date(T0)),
    uploadedFileRow(SITE, randomUUID(), upload('accents.txt', 2_000), new Date(T0 + 1_000)),
    uploadedFileRow(SITE, randomUUID(), upload('cjk.txt', 3_000), new Date(T0 + 2_000)),
    uploadedFileRow(SITE, randomUUID(), upload('emoji.txt', 4_000), new Date(T0 + 2_000)),
    uploadedFileRow(SITE, randomUUID(), upload('many.txt', 5_000), new Date(T0 + 3_000)),
    uploadedFileRow(SITE, randomUUID(), upload('empty.txt', 6_000), new Date(T0 + 4_000)),
    uploadedFileRow(OTHER_SITE, randomUUID(), upload('other.txt', 7_000), new Date(T0 + 5_000)),
  ];
}

/** Everything a knowledge scenario showed, with ids named and indexing times (the clock's) left out. */
async function playKnowledge(backend: KnowledgeBackend, files: KnowledgeFileRow[]): Promise<string> {
  const steps: [string, unknown][] = [];
  const names = new Map(files.map((file) => [file.id, file.name]));
  const step = async (label: string, action: () => Promise<unknown>) => {
    try {
      steps.push([label, await action()]);
    } catch (error) {
      steps.push([label, reported(error)]);
    }
  };
  const byName = (name: string) => files.find((file) => file.name === name)!;
  const usage = async (label: string) => {
    await step(`usage ${label}`, async () => ({ [SITE]: await backend.usage(SITE), [OTHER_SITE]: await backend.usage(OTHER_SITE) }));
  };

  for (const file of files) await backend.insert(file);
  await step('uploaded, listed', () => backend.list(SITE, 1, 10));
  await usage('of files alone');
  await backend.index(byName('english.txt').id, TEXTS.english);
  await backend.index(byName('accents.txt').id, TEXTS.accents);
  await backend.index(byName('cjk.txt').id, TEXTS.cjk);
  await backend.index(byName('emoji.txt').id, TEXTS.emoji);
  await backend.index(byName('many.txt').id, TEXTS.many);
  await backend.index(byName('empty.txt').id, new ExtractionError('The file contains no text'));
  await backend.index(byName('other.txt').id, ['other site 🌍']);
  await step('indexed once only', () => backend.index(byName('cjk.txt').id, ['never written']));
  await usage('after indexing');
  for (const [page, limit] of [[1, 2], [2, 2], [3, 2], [4, 2], [1, 6], [2, 6]]) await step(`page ${page} of ${limit}`, () => backend.list(SITE, page!, limit!));
  await step('the other site', () => backend.list(OTHER_SITE, 1, 10));
  await step('get', () => backend.get(SITE, byName('emoji.txt').id));
  await step('get failed', () => backend.get(SITE, byName('empty.txt').id));
  await step("get another site's file", () => backend.get(SITE, byName('other.txt').id));
  await step('existing ids', async () => [...(await backend.existingIds(SITE, [byName('cjk.txt').id, byName('other.txt').id, 'missing']))]);
  await step('delete', () => backend.delete(SITE, byName('cjk.txt').id));
  await step('delete again', () => backend.delete(SITE, byName('cjk.txt').id));
  await step("delete another site's file", () => backend.delete(SITE, byName('other.txt').id));
  await step('listed after delete', () => backend.list(SITE, 1, 10));
  await usage('after delete');
  await step('chunks', () => backend.chunks());

  // Ids as names; updatedAt is the indexer's clock, not the scenario's.
  return JSON.stringify(steps, (key, value) => {
    if (key === 'updatedAt') return undefined;
    if (typeof value === 'string' && names.has(value)) return names.get(value);
    return value;
  }, 1);
}

function defineTests() {
  t.test('idempotency decisions are the same on both databases', async (t) => {
    const { sqlite, pg } = await databases(t);
    const onSqlite = await playIdempotency(sqliteKeys(sqlite));
    const onPostgres = await playIdempotency(pgKeys(pg));
    t.same(onPostgres, onSqlite);
    // The scenario tells what it should, not merely the same on both.
    const decisions = new Map(onSqlite as [string, Begin | number][]);
    t.same(decisions.get('the same request replays'), { action: 'replay', response: CREATED });
    t.same(decisions.get('an upload compares'), { action: 'compare', fingerprint: 'f1', response: CREATED });
    t.same(decisions.get('another request while it runs'), { action: 'mismatch' });
    t.same(decisions.get('an upload while it runs'), { action: 'in-use' });
    t.same(decisions.get('its retry runs anew'), { action: 'run' });
    t.same(decisions.get('expired: runs again'), { action: 'run' });
    t.equal(decisions.get('purged after the day'), 3, 'the answers of k2, k3 and the other site');
  });

  t.test('a claim left by an instance that stopped frees its key once its lease ends', async (t) => {
    const { pg } = await databases(t);
    const stopped = pgKeys(pg);
    const other = pgKeys(pg);
    t.same(await stopped.begin(SITE, 'k', 'f1', T0), { action: 'run' });
    t.same(await other.begin(SITE, 'k', 'f1', T0 + IDEMPOTENCY_RUNNING_LEASE_MS - 1), { action: 'in-use' });
    t.equal(await other.purge(T0 + IDEMPOTENCY_RUNNING_LEASE_MS - 1), 0, 'a live claim is not purged');
    t.same(await other.begin(SITE, 'k', 'f2', T0 + IDEMPOTENCY_RUNNING_LEASE_MS), { action: 'run' }, 'taken over');
    // The first instance, still alive after all, neither frees nor overwrites the new claim.
    await stopped.release(SITE, 'k');
    await stopped.complete(SITE, 'k', 'f1', CREATED);
    t.same(await stopped.begin(SITE, 'k', 'f2', T0 + IDEMPOTENCY_RUNNING_LEASE_MS + 1), { action: 'in-use' });
    await other.complete(SITE, 'k', 'f2', ACCEPTED);
    t.same(await stopped.begin(SITE, 'k', 'f2', T0 + IDEMPOTENCY_RUNNING_LEASE_MS + 2), { action: 'replay', response: ACCEPTED });
    t.same(await stopped.begin(SITE, 'k', 'f1', T0 + IDEMPOTENCY_RUNNING_LEASE_MS + 2), { action: 'mismatch' });
  });

  t.test('one key sent at once to two instances runs once', async (t) => {
    const { pg, url } = await databases(t);
    const second = await openPostgres(url, { poolMax: 10 });
    t.teardown(() => second.close());
    const instances = [pgKeys(pg), pgKeys(second)];
    const KEYS = 20;
    for (const round of ['fresh keys', 'expired keys']) {
      const now = round === 'fresh keys' ? T0 : T0 + IDEMPOTENCY_TTL_MS;
      const decisions = await Promise.all(
        Array.from({ length: KEYS }, (_, k) => Promise.all(instances.map((store) => store.begin(SITE, `key-${k}`, `f${k}`, now)))),
      );
      for (const [k, pair] of decisions.entries()) {
        t.same(pair.map((d) => d.action).sort(), ['in-use', 'run'], `${round}: key-${k} runs on exactly one instance`);
      }
      // The instance that ran each key keeps its answer (its response names the round); the key then replays everywhere.
      await Promise.all(
        decisions.map((pair, k) => instances[pair.findIndex((d) => d.action === 'run')]!.complete(SITE, `key-${k}`, `f${k}`, { ...CREATED, body: round })),
      );
      for (let k = 0; k < KEYS; k++) {
        for (const store of instances) t.same(await store.begin(SITE, `key-${k}`, `f${k}`, now + 1), { action: 'replay', response: { ...CREATED, body: round } });
      }
    }
  });

  t.test('knowledge rows, chunks and usage are the same on both databases', async (t) => {
    const { sqlite, pg } = await databases(t);
    const files = scenarioFiles();
    const onSqlite = await playKnowledge(sqliteKnowledge(sqlite), files);
    const onPostgres = await playKnowledge(pgKnowledge(pg), files);
    t.equal(onPostgres, onSqlite);

    // The numbers themselves: files plus their index, from UTF-8 bytes of the text.
    const steps = new Map(JSON.parse(onSqlite) as [string, unknown][]);
    const textBytes = chunkTextBytes([...TEXTS.english, ...TEXTS.accents, ...TEXTS.cjk, ...TEXTS.emoji, ...TEXTS.many]);
    t.ok(textBytes > [...TEXTS.english, ...TEXTS.accents, ...TEXTS.cjk, ...TEXTS.emoji, ...TEXTS.many].join('').length, 'the text is multi-byte');
    const expected = storageUsage(21_000, textBytes);
    t.same((steps.get('usage after indexing') as Record<string, unknown>)[SITE], { kept: expected, counted: expected });
    const afterDelete = storageUsage(18_000, textBytes - chunkTextBytes(TEXTS.cjk));
    t.same((steps.get('usage after delete') as Record<string, unknown>)[SITE], { kept: afterDelete, counted: afterDelete });
    t.same((steps.get('get failed') as KnowledgeFileRow).status, 'failed');
    t.equal((steps.get('chunks') as unknown[]).length, 2 + 1 + 2 + 60 + 1, 'the deleted file took its chunks along');
  });

  t.test('a failed file keeps no chunks, a settled file keeps its own, and chunks of a deleted file are not written', async (t) => {
    const { pg } = await databases(t);
    const knowledge = pgKnowledge(pg);
    const settled: string[] = [];
    knowledge.files.onSettled(function* (file) {
      // Inside the transaction: the row is seen as marked.
      const row = yield* ask('knowledgeFiles', 'current', file.id);
      settled.push(`${file.name}:${row!.status}`);
    });
    const [failing, deleted, indexed] = [0, 1, 2].map((i) => uploadedFileRow(SITE, randomUUID(), { name: `f${i}.txt`, extension: 'txt', size: 10 }, new Date(T0 + i)));
    for (const row of [failing!, deleted!, indexed!]) await knowledge.insert(row);
    // Chunks an attempt left behind (as a crash of SQLite's batched writes would).
    await pg.db.insert(pgSchema.knowledgeChunks).values(chunkRows(failing!.id, SITE, ['half', 'written']));
    const failed = await knowledge.files.finish(failing!.id, { status: 'failed', error: 'Indexing failed unexpectedly; upload the file again', chunkCount: 0 });
    t.equal(failed?.status, 'failed');
    t.same(await knowledge.chunks(), [], 'its chunks went with the failure');
    t.equal(await knowledge.files.finish(failing!.id, { status: 'indexed', error: null, chunkCount: 2 }), undefined, 'settled once only');

    const row = await knowledge.files.writeIndex(indexed!.id, SITE, ['kept', 'chunks']);
    t.match(row, { status: 'indexed', chunkCount: 2 });
    t.equal(await knowledge.files.writeIndex(indexed!.id, SITE, ['a', 'second', 'attempt']), undefined, 'a second attempt writes nothing');
    t.equal(await knowledge.files.finish(indexed!.id, { status: 'failed', error: 'late failure', chunkCount: 0 }), undefined, 'nor fails it');
    await knowledge.files.clearChunks(indexed!.id, SITE);
    t.same((await knowledge.chunks()).map((chunk) => chunk.text), ['kept', 'chunks'], 'an indexed file keeps its chunks');

    await knowledge.delete(SITE, deleted!.id);
    t.equal(await knowledge.files.writeIndex(deleted!.id, SITE, ['late']), undefined);
    t.same((await knowledge.chunks()).map((chunk) => chunk.text), ['kept', 'chunks']);
    t.same(settled, ['f0.txt:failed', 'f2.txt:indexed']);
    t.same(await knowledge.files.pending(), [], 'nothing left uploaded');

    const stopped = uploadedFileRow(SITE, randomUUID(), { name: 'stopped.txt', extension: 'txt', size: 10 }, new Date(T0 + 3));
    await knowledge.insert(stopped);
    t.equal(await knowledge.files.writeIndex(stopped.id, SITE, ['never'], AbortSignal.abort()), undefined, 'stopped by its signal');
    t.equal((await knowledge.files.current(stopped.id))?.status, 'uploaded', 'rolled back: left to index again');
    t.same((await knowledge.chunks()).map((chunk) => chunk.text), ['kept', 'chunks']);
  });
}

// Last: the first test starts as it is defined, and uses the constants above.
postgresTests(defineTests);
