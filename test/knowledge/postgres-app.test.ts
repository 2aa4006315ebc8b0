/**
 * Knowledge files through the whole app on PostgreSQL (DATABASE_URL): the real fixtures
 * uploaded, extracted, indexed and found; listed, deleted, counted against the quota; grounding
 * a post; the retrieval evaluation on both databases; files stored in an S3-compatible bucket;
 * indexing that waits for a database that went away; and two instances indexing one file.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import t, { type Test } from 'tap';
import { FILES, QUERIES, TOP, firstRelevant, retrievalFigures } from '../../bench/retrieval-set.mjs';
import * as pgSchema from '../../src/db/pg-schema.js';
import type { PgDb } from '../../src/db/postgres.js';
import { ask } from '../../src/db/steps.js';
import { writeGroundedPost } from '../../src/generation/grounded.js';
import { passagesToGroundOn } from '../../src/generation/relevance.js';
import type { GenerationRequest, GenerationResult } from '../../src/generation/types.js';
import { extractChunks } from '../../src/knowledge/extract.js';
import { ExtractionError } from '../../src/knowledge/extractor-protocol.js';
import type { ChunkSource } from '../../src/knowledge/indexer.js';
import { BOOTSTRAP_KEY, fixturesDir, startApp, tempDataDir, testConfig, waitFor } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';
import { canControlPostgres, ownPostgres, postgresTests, restartPostgres, startPostgres, stopPostgres } from '../helpers/postgres.js';
import { startS3 } from '../helpers/s3.js';
import { asc, eq, sql } from '../../src/db/orm.js';

const fixture = (relative: string) => fs.readFileSync(path.join(fixturesDir, relative));

interface KnowledgeApp {
  app: FastifyInstance;
  siteId: string;
  call(options: InjectOptions & { key?: string }): Promise<LightMyRequestResponse>;
  upload(name: string, content: Buffer | string, key?: string): Promise<{ statusCode: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  search(q: string, extra?: string, key?: string): Promise<{ fileId: string; fileName: string; text: string; score: number }[]>;
  file(id: string): Promise<{ status: string; error: string | null; chunkCount: number; name: string }>;
}

interface AppSetup {
  env?: Record<string, string>;
  chunkSource?: ChunkSource;
  dataDir?: string;
}

/** The whole app on `env` (DATABASE_URL, STORAGE_URL...), files extracted in this process unless told otherwise. */
async function knowledgeApp(t: Test, setup: AppSetup = {}): Promise<KnowledgeApp> {
  const config = testConfig(setup.dataDir ?? tempDataDir(t), setup.env);
  const app = await startApp(t, config, { chunkSource: setup.chunkSource ?? extractChunks, indexer: { retryBaseMs: 20, retryMaxMs: 200 }, jobs: { autoStart: false } });
  const siteId = (await app.sites.authenticate(BOOTSTRAP_KEY))!.site.id;
  const call: KnowledgeApp['call'] = ({ key, ...options }) =>
    app.inject({ ...options, headers: { authorization: `Bearer ${key ?? BOOTSTRAP_KEY}`, ...options.headers } } as InjectOptions);
  return {
    app,
    siteId,
    call,
    async upload(name, content, key) {
      const form = multipart([{ name: 'file', filename: name, content }]);
      const res = await call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers, key });
      return { statusCode: res.statusCode, body: res.json() };
    },
    async search(q, extra = '', key) {
      const res = await call({ method: 'GET', url: `/api/v1/knowledge/search?q=${encodeURIComponent(q)}${extra}`, key });
      if (res.statusCode !== 200) throw new Error(`search ${q}: ${res.statusCode} ${res.body}`);
      return res.json().data.results;
    },
    async file(id) {
      return (await call({ method: 'GET', url: `/api/v1/knowledge/${id}` })).json().data?.knowledge;
    },
  };
}

/** The app's PostgreSQL database, to look behind the API. */
function pgOf(app: FastifyInstance): PgDb {
  if (app.backend.kind !== 'postgres') throw new Error('the app does not run on PostgreSQL');
  return app.backend.postgres.db;
}

/** A file's chunks as stored: texts in order of their ordinals. */
async function chunksOf(db: PgDb, fileId: string) {
  return db.select({ ordinal: pgSchema.knowledgeChunks.ordinal, text: pgSchema.knowledgeChunks.text }).from(pgSchema.knowledgeChunks).where(eq(pgSchema.knowledgeChunks.fileId, fileId)).orderBy(asc(pgSchema.knowledgeChunks.ordinal));
}

/**
 * A chunk source that waits for `open()` before extracting (or for shutdown: a closing app
 * does not wait for it), so a test can stop the database or start another instance in between.
 */
function gatedSource(extract: ChunkSource = extractChunks) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const calls: string[] = [];
  const source: ChunkSource = async (filePath, extension, fileName, options) => {
    calls.push(fileName);
    const stopped = new Promise<never>((_resolve, reject) => options.signal.addEventListener('abort', () => reject(new ExtractionError('stopped')), { once: true }));
    stopped.catch(() => {});
    await Promise.race([gate, stopped]);
    return extract(filePath, extension, fileName, options);
  };
  return { source, open: () => release(), calls };
}

/** Every file indexed or failed, anywhere, through the app's files store listeners. */
function settledOn(app: FastifyInstance, into: string[], label: string): void {
  app.knowledgeFiles.onSettled(function* (file) {
    // Inside the transaction that marks the file: the row is seen as marked.
    const row = yield* ask('knowledgeFiles', 'current', file.id);
    into.push(`${label}:${file.name}:${row!.status}`);
  });
}

const EXPECTED: [string, string[]][] = [
  ['word/test03.doc', ['GPL v3.0', 'Apache v2.0']],
  ['word/test03.docx', ['GPL v3.0', 'Apache v2.0']],
  ['word/bigfile-01.docx', ['Welcome to BlogCFC']],
  ['word/test11.doc', ['parsing the Word file in node']],
  ['pdf/fd_ins_8859.pdf', ['Form 8859', 'District of Columbia']],
  ['pdf/i216_nuclear.pdf', ['福島第一原子力発電所']],
  ['text/coffee-brewing-guide.md', ['1:16', '60 grams of coffee per litre']],
  ['text/product-catalog.csv', ['CL-101']],
  ['text/release-notes-2026.txt', ['columnar cache']],
];

function defineTests() {
  t.test('on PostgreSQL, every fixture is uploaded, indexed, found, listed and deleted', async (t) => {
    const ctx = await knowledgeApp(t, { env: { DATABASE_URL: await startPostgres(t) } });
    t.equal(ctx.app.backend.kind, 'postgres');
    const db = pgOf(ctx.app);
    const settled: string[] = [];
    settledOn(ctx.app, settled, 'app');

    const ids = new Map<string, string>();
    for (const [file] of EXPECTED) {
      const res = await ctx.upload(path.basename(file), fixture(file));
      t.equal(res.statusCode, 201, file);
      t.equal(res.body.data.knowledge.status, 'uploaded');
      ids.set(file, res.body.data.knowledge.id);
    }
    await ctx.app.indexer.whenIdle();
    for (const [file, phrases] of EXPECTED) {
      const id = ids.get(file)!;
      const item = await ctx.file(id);
      t.equal(item.status, 'indexed', `${file} indexed ${item.error ?? ''}`);
      const chunks = await chunksOf(db, id);
      t.equal(chunks.length, item.chunkCount, `${file}: ${item.chunkCount} chunks, written once`);
      t.same(
        chunks.map((chunk) => chunk.ordinal),
        chunks.map((_chunk, i) => i),
        `${file}: ordinals 0 to ${chunks.length - 1}`,
      );
      for (const phrase of phrases) {
        const found = await ctx.search(phrase, `&fileIds=${id}`);
        t.ok(found.map((r) => r.text).join('\n').includes(phrase), `${file}: "${phrase}"`);
        t.equal(found[0]?.fileName, path.basename(file));
      }
    }
    t.same(settled.sort(), EXPECTED.map(([file]) => `app:${path.basename(file)}:indexed`).sort(), 'each file settled once, inside its transaction');

    const all = await ctx.search('District of Columbia');
    t.equal(all[0]!.fileName, 'fd_ins_8859.pdf', 'best passage first across the site');
    t.same(Object.keys(all[0]!).sort(), ['fileId', 'fileName', 'score', 'text']);
    t.ok(all[0]!.score > 0);
    t.equal((await ctx.search('原子力発電所'))[0]?.fileName, 'i216_nuclear.pdf', 'Chinese and Japanese words are found inside compounds');
    for (const q of ['"', 'NEAR(coffee', "'; drop table knowledge_chunks; --", 'coffee AND', '\u0000', '*** ()']) {
      t.equal((await ctx.call({ method: 'GET', url: `/api/v1/knowledge/search?q=${encodeURIComponent(q)}` })).statusCode, 200, `${JSON.stringify(q)} is a plain query`);
    }
    const unknown = await ctx.call({ method: 'GET', url: '/api/v1/knowledge/search?q=coffee&fileIds=missing-1' });
    t.equal(unknown.statusCode, 400);
    t.same(unknown.json().error.details, [{ path: '/querystring/fileIds', message: 'unknown file id missing-1' }]);

    // Listed newest first, paginated.
    const list = (await ctx.call({ method: 'GET', url: '/api/v1/knowledge?limit=4' })).json().data;
    t.same(list.pagination, { page: 1, limit: 4, total: EXPECTED.length, pages: Math.ceil(EXPECTED.length / 4) });
    t.same(
      list.items.map((item: { name: string }) => item.name),
      EXPECTED.slice(-4).map(([file]) => path.basename(file)).reverse(),
    );
    const last = (await ctx.call({ method: 'GET', url: `/api/v1/knowledge?limit=4&page=${list.pagination.pages}` })).json().data;
    t.equal(last.items.length, EXPECTED.length % 4 || 4);

    // Sites are isolated.
    const other = await ctx.app.sites.create('Other');
    t.same(await ctx.search('District of Columbia', '', other.key), [], "another site finds nothing of this one's files");
    const pdf = ids.get('pdf/fd_ins_8859.pdf')!;
    t.equal((await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${pdf}`, key: other.key })).statusCode, 404);
    t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${pdf}`, key: other.key })).statusCode, 404);

    // Delete: the stored file, the row and its chunks go; a second delete is 404.
    const stored = path.join(ctx.app.config.dataDir, 'storage', (await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${pdf}` })).json().data.knowledge.s3Key);
    t.ok(fs.existsSync(stored));
    const deleted = await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${pdf}` });
    t.equal(deleted.statusCode, 200);
    t.equal(deleted.json().data.knowledgeId, pdf);
    t.notOk(fs.existsSync(stored), 'the stored file is removed');
    t.same(await chunksOf(db, pdf), [], 'its chunks went with it');
    t.notOk((await ctx.search('District of Columbia')).some((r) => r.fileName === 'fd_ins_8859.pdf'), 'and from search');
    t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${pdf}` })).statusCode, 404, 'second delete');
    t.equal((await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${pdf}` })).statusCode, 404);
  });

  t.test('on PostgreSQL, unreadable files end failed with a readable error, without chunks', async (t) => {
    const ctx = await knowledgeApp(t, { env: { DATABASE_URL: await startPostgres(t) } });
    const empty = await ctx.upload('blank.txt', '   \n\n   ');
    const broken = await ctx.upload('i373_err_broken.pdf', fixture('pdf/i373_err_broken.pdf'));
    t.equal(empty.statusCode, 201);
    t.equal(broken.statusCode, 201);
    await ctx.app.indexer.whenIdle();
    const blank = await ctx.file(empty.body.data.knowledge.id);
    t.equal(blank.status, 'failed');
    t.match(blank.error, /no text/);
    t.equal(blank.chunkCount, 0);
    t.same(await chunksOf(pgOf(ctx.app), empty.body.data.knowledge.id), []);
    t.match((await ctx.file(broken.body.data.knowledge.id)).status, /indexed|failed/, 'a broken PDF is indexed as far as it reads, or failed: never left pending');
  });

  t.test('on PostgreSQL, a site past SITE_STORAGE_QUOTA_MB gets 413 QUOTA_EXCEEDED; deleting makes room', async (t) => {
    const ctx = await knowledgeApp(t, { env: { DATABASE_URL: await startPostgres(t), SITE_STORAGE_QUOTA_MB: '1' } });
    const prose = (bytes: number) => 'Espresso is brewed by forcing hot water through finely ground coffee. '.repeat(Math.ceil(bytes / 70)).slice(0, bytes);
    const first = await ctx.upload('first.txt', prose(400_000));
    t.equal(first.statusCode, 201);
    await ctx.app.indexer.whenIdle();
    // 400 KB of file plus its index (~2 x its size): past 1 MB.
    const refused = await ctx.upload('second.txt', prose(1000));
    t.equal(refused.statusCode, 413);
    t.equal(refused.body.error.code, 'QUOTA_EXCEEDED');
    t.match(refused.body.error.message, /uses 1\.\d MB of its 1\.0 MB storage quota/);
    t.ok(refused.body.error.details.usageBytes > 1024 * 1024 && refused.body.error.details.quotaBytes === 1024 * 1024, 'details carry the numbers');
    t.equal((await ctx.call({ method: 'GET', url: '/api/v1/knowledge' })).json().data.pagination.total, 1, 'nothing recorded of the refused upload');

    const other = await ctx.app.sites.create('Other');
    t.equal((await ctx.upload('theirs.txt', prose(1000), other.key)).statusCode, 201, 'another site uploads');

    t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${first.body.data.knowledge.id}` })).statusCode, 200);
    const tooBig = await ctx.upload('big.txt', prose(1_100_000));
    t.equal(tooBig.statusCode, 413);
    t.match(tooBig.body.error.message, /this file \(1\.0 MB\) does not fit/);
    t.equal((await ctx.upload('small.txt', prose(1000))).statusCode, 201);
    await ctx.app.indexer.whenIdle();
  });

  t.test('on PostgreSQL, generation is grounded in the passages search finds', async (t) => {
    const ctx = await knowledgeApp(t, { env: { DATABASE_URL: await startPostgres(t) } });
    const guide = (await ctx.upload('coffee-brewing-guide.md', fixture('text/coffee-brewing-guide.md'))).body.data.knowledge.id;
    const notes = (await ctx.upload('release-notes-2026.txt', fixture('text/release-notes-2026.txt'))).body.data.knowledge.id;
    await ctx.app.indexer.whenIdle();

    let sent: GenerationRequest['passages'] = [];
    const recording = {
      generate: async (request: GenerationRequest): Promise<GenerationResult> => {
        sent = passagesToGroundOn(request);
        return ctx.app.generator.generate(request);
      },
    };
    const deps = { knowledge: ctx.app.knowledge, generator: recording };
    const grounded = await writeGroundedPost(deps, ctx.siteId, { topic: 'How to brew coffee at home: ratio and grind' });
    t.ok(sent.length > 0, `${sent.length} passages ground the post`);
    t.ok(sent.every((passage) => passage.fileName === 'coffee-brewing-guide.md'), 'all from the coffee guide');
    t.match(grounded.result.post.content, /coffee-brewing-guide\.md/, 'the post names its source');
    t.same(grounded.missingFileIds, []);

    // And through the API: the generate endpoint writes a draft grounded in the guide.
    const generated = await ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload: { topic: 'Brewing coffee: grams of coffee per litre', length: 'short' } });
    t.equal(generated.statusCode, 201);
    const post = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${generated.json().post.id}` })).json().data.post;
    t.match(post.content, /coffee-brewing-guide\.md/, 'the generated post is grounded in the stored file');

    const restricted = await writeGroundedPost(deps, ctx.siteId, { topic: 'How to brew coffee at home', selectedFileIds: [notes, 'gone-file'] });
    t.same(restricted.missingFileIds, ['gone-file'], 'a selected file that is not there is reported');
    t.ok(sent.every((passage) => passage.fileId === notes), 'only the selected file is searched');
    t.notOk(sent.some((passage) => passage.fileId === guide));
  });

  t.test('the retrieval evaluation through the app: both databases find the answers', async (t) => {
    const figures: Record<string, ReturnType<typeof retrievalFigures>> = {};
    for (const [label, env] of [
      ['SQLite', {}],
      ['PostgreSQL', { DATABASE_URL: await startPostgres(t) }],
    ] as const) {
      const ctx = await knowledgeApp(t, { env });
      for (const file of FILES) t.equal((await ctx.upload(path.basename(file), fixture(file))).statusCode, 201, `${label}: ${file}`);
      await ctx.app.indexer.whenIdle();
      const listed = (await ctx.call({ method: 'GET', url: '/api/v1/knowledge?limit=100' })).json().data.items;
      t.same(
        listed.filter((item: { status: string }) => item.status !== 'indexed').map((item: { name: string }) => item.name),
        [],
        `${label}: every file indexed`,
      );
      const ranks: (number | null)[] = [];
      for (const { q, answers } of QUERIES) ranks.push(firstRelevant(await ctx.search(q, `&limit=${TOP}`), answers));
      figures[label] = retrievalFigures(ranks);
    }
    for (const [label, f] of Object.entries(figures)) {
      t.comment(`${label}: recall@5 ${f.recallAt5.toFixed(3)}, MRR@10 ${f.mrrAt10.toFixed(3)} over ${f.queries} queries`);
      t.ok(f.recallAt5 >= 0.95, `${label}: recall@5 ${f.recallAt5.toFixed(3)} >= 0.95 (the benchmark's target is 0.9)`);
      t.ok(f.mrrAt10 >= 0.9, `${label}: MRR@10 ${f.mrrAt10.toFixed(3)} >= 0.9`);
    }
  });

  t.test('on PostgreSQL with files in an S3-compatible bucket: stored, indexed from the bucket, searched, deleted', async (t) => {
    const s3 = await startS3(t);
    const ctx = await knowledgeApp(t, { env: { DATABASE_URL: await startPostgres(t), ...s3.env } });
    const files: [string, string][] = [
      ['text/coffee-brewing-guide.md', '60 grams of coffee per litre'],
      ['pdf/fd_ins_8859.pdf', 'District of Columbia'],
      ['word/test03.docx', 'Apache v2.0'],
    ];
    const stored = new Map<string, { id: string; s3Key: string }>();
    for (const [file] of files) {
      const res = await ctx.upload(path.basename(file), fixture(file));
      t.equal(res.statusCode, 201, file);
      stored.set(file, res.body.data.knowledge);
      t.same(await s3.read(`${s3.prefix}/${res.body.data.knowledge.s3Key}`), fixture(file), `${file}: in the bucket byte for byte`);
    }
    await ctx.app.indexer.whenIdle();
    for (const [file, phrase] of files) {
      t.equal((await ctx.file(stored.get(file)!.id)).status, 'indexed', file);
      t.ok((await ctx.search(phrase)).some((r) => r.text.includes(phrase)), `${file}: "${phrase}" is found`);
    }
    const pdf = stored.get('pdf/fd_ins_8859.pdf')!;
    t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${pdf.id}` })).statusCode, 200);
    t.notOk(await s3.exists(`${s3.prefix}/${pdf.s3Key}`), 'the object is removed');
    t.same(await chunksOf(pgOf(ctx.app), pdf.id), []);
    t.equal((await s3.keys()).length, files.length - 1);
    t.notMatch(fs.readdirSync(ctx.app.config.dataDir).join(','), /^storage$|,storage(,|$)/, 'nothing stored under DATA_DIR/storage');
  });

  t.test('files left uploaded by an instance that stopped are indexed when another starts', async (t) => {
    const url = await startPostgres(t);
    const dataDir = tempDataDir(t);
    const stopped = gatedSource();
    const a = await knowledgeApp(t, { env: { DATABASE_URL: url }, dataDir, chunkSource: stopped.source });
    const id = (await a.upload('resume.txt', 'Cardamom coffee is popular in the Middle East.')).body.data.knowledge.id;
    await waitFor(() => stopped.calls.length === 1, 'extraction to start');
    await a.app.close(); // stops mid-extraction: the file stays uploaded

    const b = await knowledgeApp(t, { env: { DATABASE_URL: url }, dataDir });
    await b.app.indexer.whenIdle();
    t.equal((await b.file(id)).status, 'indexed', 'resumed at start');
    t.equal((await b.search('cardamom')).length, 1, 'indexed once');
    t.equal(await b.app.indexer.resumePending(), 0, 'nothing left to resume');
  });

  t.test('two instances indexing the same file at once leave one set of chunks and one final status', async (t) => {
    const url = await startPostgres(t);
    // One DATA_DIR for both, as a shared volume would be (the file store must be shared).
    const dataDir = tempDataDir(t);
    const contents = new Map<string, string>();
    for (let i = 0; i < 6; i++) contents.set(`notes-${i}.md`, `# Notes ${i}\n\n${`Paragraph ${i} about hives, honey and the bees that make it. `.repeat(400)}`);
    const firstGate = gatedSource();
    const a = await knowledgeApp(t, { env: { DATABASE_URL: url }, dataDir, chunkSource: firstGate.source });
    const ids = new Map<string, string>();
    for (const [name, text] of contents) ids.set(name, (await a.upload(name, text)).body.data.knowledge.id);
    await waitFor(() => firstGate.calls.length >= 1, 'the first instance to start extracting');

    // The second instance starts meanwhile: every file is still uploaded, so it resumes them all.
    const secondGate = gatedSource();
    const b = await knowledgeApp(t, { env: { DATABASE_URL: url }, dataDir, chunkSource: secondGate.source });
    const settled: string[] = [];
    settledOn(a.app, settled, 'a');
    settledOn(b.app, settled, 'b');
    await waitFor(() => secondGate.calls.length >= 1, 'the second instance to start extracting');
    // Both let go at once: the same files are written by both, in any interleaving.
    firstGate.open();
    secondGate.open();
    await Promise.all([a.app.indexer.whenIdle(), b.app.indexer.whenIdle()]);
    await waitFor(async () => {
      await Promise.all([a.app.indexer.whenIdle(), b.app.indexer.whenIdle()]);
      return (await pgOf(a.app).select().from(pgSchema.knowledgeFiles).where(eq(pgSchema.knowledgeFiles.status, 'uploaded'))).length === 0;
    }, 'every file to be settled');

    const db = pgOf(a.app);
    t.ok(secondGate.calls.length + firstGate.calls.length > contents.size, `${firstGate.calls.length} + ${secondGate.calls.length} extractions: some files were indexed by both`);
    for (const [name, id] of ids) {
      const file = await a.file(id);
      t.equal(file.status, 'indexed', name);
      const chunks = await chunksOf(db, id);
      t.equal(chunks.length, file.chunkCount, `${name}: ${file.chunkCount} chunks, one set`);
      t.same(
        chunks.map((chunk) => chunk.ordinal),
        chunks.map((_chunk, i) => i),
        `${name}: each ordinal once`,
      );
    }
    t.equal(settled.length, contents.size, 'each file settled once, by one instance');
    t.same(settled.map((entry) => entry.split(':').slice(1).join(':')).sort(), [...contents.keys()].map((name) => `${name}:indexed`).sort());
    let expected = 0;
    for (const id of ids.values()) expected += (await a.file(id)).chunkCount;
    const { rows } = await db.execute<{ n: number }>(sql`select count(*)::int as n from knowledge_chunks`);
    t.equal(rows[0]!.n, expected, 'no stray chunk anywhere');
  });

  t.test('a late attempt at a settled file changes nothing: neither its chunks nor its status', async (t) => {
    const url = await startPostgres(t);
    const dataDir = tempDataDir(t);
    // The first instance's extraction, late, gives other text: it may not reach the file.
    const late = gatedSource(async (filePath, extension, fileName, options) => (await extractChunks(filePath, extension, fileName, options)).map((chunk) => `${chunk} LATE`));
    const a = await knowledgeApp(t, { env: { DATABASE_URL: url }, dataDir, chunkSource: late.source });
    const id = (await a.upload('bees.txt', 'Bees need water in summer.')).body.data.knowledge.id;
    await waitFor(() => late.calls.length === 1, 'the first instance to start extracting');

    const b = await knowledgeApp(t, { env: { DATABASE_URL: url }, dataDir });
    await b.app.indexer.whenIdle();
    const indexed = await b.file(id);
    t.equal(indexed.status, 'indexed', 'indexed by the second instance');
    late.open();
    await a.app.indexer.whenIdle();
    const chunks = await chunksOf(pgOf(a.app), id);
    t.equal(chunks.length, indexed.chunkCount);
    t.notOk(chunks.some((chunk) => chunk.text.endsWith('LATE')), "the late attempt's chunks were not written");
    t.same(await a.file(id), indexed, 'nor its row touched');

    // The same with a failure: a second file, its late attempt failing.
    const again = gatedSource(async () => {
      throw new ExtractionError('The file could not be read');
    });
    const c = await knowledgeApp(t, { env: { DATABASE_URL: url }, dataDir, chunkSource: again.source });
    const second = (await c.upload('wasps.txt', 'Wasps are not bees.')).body.data.knowledge.id;
    await waitFor(() => again.calls.length === 1, 'the failing attempt to start');
    const d = await knowledgeApp(t, { env: { DATABASE_URL: url }, dataDir });
    await d.app.indexer.whenIdle();
    const ok = await d.file(second);
    t.equal(ok.status, 'indexed');
    again.open();
    await c.app.indexer.whenIdle();
    t.same(await c.file(second), ok, 'a late failure does not fail an indexed file');
    t.equal((await chunksOf(pgOf(c.app), second)).length, ok.chunkCount, 'nor take its chunks');
  });

  t.test(
    'PostgreSQL stopped while a file is indexed: indexing waits, /ready says so, and resumes when it is back',
    { skip: !canControlPostgres() && 'TEST_DATABASE_URL is not stopped by tests' },
    async (t) => {
      const gate = gatedSource();
      const ctx = await knowledgeApp(t, { env: { DATABASE_URL: await startPostgres(t) }, chunkSource: gate.source });
      const id = (await ctx.upload('outage.txt', 'Smoke calms bees before the hive is opened.')).body.data.knowledge.id;
      await waitFor(() => gate.calls.length === 1, 'extraction to start');
      // The test server commits asynchronously (synchronous_commit=off) and stops as in a crash:
      // what was committed is flushed first, or the upload's row could be lost with the stop.
      await pgOf(ctx.app).execute(sql`checkpoint`);
      await stopPostgres();
      try {
        gate.open();
        await waitFor(() => ctx.app.indexer.status().waiting?.reason === 'database-unavailable', 'indexing to wait for the database');
        t.match(await ctx.app.readiness.check(), { database: 'unavailable', indexing: 'waiting' });
      } finally {
        await restartPostgres();
      }
      await waitFor(async () => (await ctx.file(id))?.status === 'indexed', 'indexing to resume', 60_000);
      t.equal(ctx.app.indexer.status().waiting, null);
      t.equal((await ctx.search('smoke bees')).length, 1, 'indexed once');
    },
  );
}

// Stops and restarts its server: a cluster of its own, not the suite's shared one.
ownPostgres();
postgresTests(defineTests);
