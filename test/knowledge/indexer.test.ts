/**
 * The indexer over a files store that answers asynchronously, as PostgreSQL's does: files
 * enqueued by id are looked up before they count as queued, pending files are resumed, a file
 * queued again while it is indexed is not indexed twice at once, and the database's own
 * conditions (PostgreSQL's disk full, lock conflicts, a server gone) make indexing wait.
 */
import t from 'tap';
import { openDatabase } from '../../src/db/sqlite.js';
import { ask } from '../../src/db/steps.js';
import { uploadedFileRow, type IndexOutcome, type KnowledgeFileRow, type KnowledgeFileStore, type QueuedFile } from '../../src/knowledge/file-rows.js';
import { KnowledgeIndexer, type ChunkSource } from '../../src/knowledge/indexer.js';
import type { ObjectStore } from '../../src/knowledge/storage.js';
import { createSite } from '../helpers/sites.js';
import { sqliteStores } from '../../src/stores/sqlite.js';
import { tempDataDir, waitFor } from '../helpers/app.js';

const silent = { info() {}, warn() {}, error() {} };
const noStorage = { withLocalFile: (_key: string, use: (filePath: string) => Promise<unknown>) => use('/nonexistent') } as unknown as ObjectStore;
const queued = (row: KnowledgeFileRow): QueuedFile => ({ id: row.id, siteId: row.siteId, sizeBytes: row.sizeBytes, extension: row.extension });

/** Rows in memory behind promises; `fail` makes the next calls of a method throw. */
function memoryStore() {
  const rows = new Map<string, KnowledgeFileRow>();
  const chunks = new Map<string, readonly string[]>();
  const fail = new Map<string, () => Error>();
  const later = async <T>(method: string, answer: () => T): Promise<T> => {
    await new Promise((resolve) => setImmediate(resolve));
    const error = fail.get(method);
    if (error) throw error();
    return answer();
  };
  const settle = (fileId: string, outcome: IndexOutcome) => {
    const row = rows.get(fileId);
    if (row?.status !== 'uploaded') return undefined;
    const settled = { ...row, ...outcome };
    rows.set(fileId, settled);
    return settled;
  };
  const store: KnowledgeFileStore = {
    existingIds: (_siteId, ids) => later('existingIds', () => new Set(ids.filter((id) => rows.has(id)))),
    get: (_siteId, id) => later('get', () => rows.get(id)!),
    list: () => later('list', () => ({ items: [...rows.values()], pagination: { page: 1, limit: 10, total: rows.size, pages: 1 } })),
    insert: (row) => later('insert', () => void rows.set(row.id, row)),
    delete: (_siteId, id) => later('delete', () => void rows.delete(id)),
    pending: () => later('pending', () => [...rows.values()].filter((row) => row.status === 'uploaded').map(queued)),
    lookUp: (id) => later('lookUp', () => (rows.has(id) ? queued(rows.get(id)!) : undefined)),
    current: (id) => later('current', () => rows.get(id)),
    clearChunks: (id) => later('clearChunks', () => void (rows.get(id)?.status === 'uploaded' && chunks.delete(id))),
    writeIndex: (id, _siteId, texts) =>
      later('writeIndex', () => {
        const row = settle(id, { status: 'indexed', error: null, chunkCount: texts.length });
        if (row) chunks.set(id, texts);
        return row;
      }),
    finish: (id, outcome) => later('finish', () => settle(id, outcome)),
  };
  return { store, rows, chunks, fail };
}

const fileRow = (name: string) => uploadedFileRow('site-1', `id-${name}`, { name, extension: 'txt', size: 10 }, new Date());

t.test('files enqueued by id are looked up, then indexed; whenIdle waits for the look', async (t) => {
  const { store, rows, chunks } = memoryStore();
  const extracted: string[] = [];
  const source: ChunkSource = async (_path, _extension, name) => (extracted.push(name), [`text of ${name}`]);
  const indexer = new KnowledgeIndexer(store, noStorage, silent, source, { concurrency: 1 });
  t.teardown(() => indexer.close());
  const row = fileRow('a.txt');
  rows.set(row.id, row);
  indexer.enqueue(row.id);
  indexer.enqueue('missing');
  await indexer.whenIdle();
  t.equal(rows.get(row.id)!.status, 'indexed');
  t.same(chunks.get(row.id), ['text of a.txt']);
  t.same(extracted, ['a.txt']);
  t.equal(await indexer.resumePending(), 0, 'nothing pending: answered asynchronously');
});

t.test('pending files are resumed; one queued again while it is indexed is not indexed twice at once', async (t) => {
  const { store, rows } = memoryStore();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const extracted: string[] = [];
  const source: ChunkSource = async (_path, _extension, name) => {
    extracted.push(name);
    await gate;
    return [name];
  };
  const indexer = new KnowledgeIndexer(store, noStorage, silent, source, { concurrency: 1, smallFileBytes: 0 });
  t.teardown(() => indexer.close());
  for (const name of ['a.txt', 'b.txt']) rows.set(`id-${name}`, fileRow(name));
  const resumed = indexer.resumePending();
  t.type(resumed, Promise, 'a promise from an asynchronous store');
  t.equal(await resumed, 2);
  await waitFor(() => extracted.length === 1, 'the first file to be extracted');
  t.equal(await indexer.resumePending(), 2, 'both still pending');
  indexer.enqueue('id-a.txt');
  release();
  await indexer.whenIdle();
  t.same(extracted, ['a.txt', 'b.txt'], 'each extracted once');
  t.same([...rows.values()].map((row) => row.status), ['indexed', 'indexed']);
});

t.test("the database's own conditions make indexing wait, then it resumes", async (t) => {
  const pgError = (code: string) => () => new Error('Failed query', { cause: Object.assign(new Error(`postgres ${code}`), { code }) });
  const cases: [string, () => Error, string][] = [
    ['disk full', pgError('53100'), 'storage-full'],
    ['deadlock', pgError('40P01'), 'database-busy'],
    ['serialization failure', pgError('40001'), 'database-busy'],
    ['lock not available', pgError('55P03'), 'database-busy'],
    ['server shutting down', pgError('57P01'), 'database-unavailable'],
    ['connection refused', () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), 'database-unavailable'],
    ['connection lost', () => new Error('Connection terminated unexpectedly'), 'database-unavailable'],
  ];
  for (const [label, error, reason] of cases) {
    const { store, rows, fail } = memoryStore();
    const indexer = new KnowledgeIndexer(store, noStorage, silent, async () => ['text'], { concurrency: 1, retryBaseMs: 10, retryMaxMs: 20 });
    t.teardown(() => indexer.close());
    const row = fileRow(`${label}.txt`);
    rows.set(row.id, row);
    fail.set('writeIndex', error);
    fail.set('clearChunks', error);
    indexer.enqueue(queued(row));
    await waitFor(() => indexer.status().waiting?.reason === reason, `${label}: indexing to wait`);
    t.equal(rows.get(row.id)!.status, 'uploaded', `${label}: waits as ${reason}, the file left pending`);
    fail.clear();
    await waitFor(() => rows.get(row.id)!.status === 'indexed', `${label}: indexing to resume`);
    await indexer.whenIdle();
    t.equal(indexer.status().waiting, null);
  }
});

t.test('any other error fails the file; one that cannot be recorded leaves it pending', async (t) => {
  const { store, rows, fail } = memoryStore();
  const logged: string[] = [];
  const log = { ...silent, error: (_obj: object, msg: string) => logged.push(msg), warn: (_obj: object, msg: string) => logged.push(msg) };
  const indexer = new KnowledgeIndexer(store, noStorage, log, async () => ['text'], { concurrency: 1 });
  t.teardown(() => indexer.close());
  const [broken, unrecorded] = [fileRow('broken.txt'), fileRow('unrecorded.txt')];
  rows.set(broken.id, broken);
  fail.set('writeIndex', () => new Error('a bug'));
  indexer.enqueue(queued(broken));
  await indexer.whenIdle();
  t.match(rows.get(broken.id), { status: 'failed', error: 'Indexing failed unexpectedly; upload the file again' });

  rows.set(unrecorded.id, unrecorded);
  fail.set('finish', () => new Error('another bug'));
  indexer.enqueue(queued(unrecorded));
  await indexer.whenIdle();
  t.equal(rows.get(unrecorded.id)!.status, 'uploaded', 'left for the next start');
  t.ok(logged.includes('could not record a knowledge file as failed'));

  fail.set('lookUp', () => new Error('lost'));
  indexer.enqueue('id-unrecorded.txt');
  await indexer.whenIdle();
  t.ok(logged.includes('could not look up a knowledge file to index; it is indexed at the next start'), 'a failed look-up is logged');
});

t.test("on SQLite, the files store's settled listeners run inside the transaction that marks the file", async (t) => {
  const handle = openDatabase(tempDataDir(t));
  t.teardown(() => handle.close());
  const site = createSite(handle.db, 'Site');
  const { files } = sqliteStores(handle).knowledge;
  const indexer = new KnowledgeIndexer(files, noStorage, silent, async (_path, _extension, name) => [`text of ${name}`], { concurrency: 1 });
  t.teardown(() => indexer.close());
  const seen: string[] = [];
  files.onSettled(function* (file) {
    seen.push(`${file.name}:${(yield* ask('knowledgeFiles', 'current', file.id))!.status}`);
  });
  const row = uploadedFileRow(site.id, 'file-1', { name: 'a.txt', extension: 'txt', size: 10 }, new Date());
  await files.insert(row);
  t.equal(await indexer.resumePending(), 1);
  await indexer.whenIdle();
  t.same(seen, ['a.txt:indexed']);
});
