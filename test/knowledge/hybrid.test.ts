import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { startFakeEmbeddings, type FakeEmbeddings } from '../../bench/fake-embeddings.mjs';
import { ConfigError, loadConfig, type Config } from '../../src/config.js';
import { extractChunks } from '../../src/knowledge/extract.js';
import { fromInt8Blob, toInt8Blob } from '../../src/db/vectors.js';
import { unitVector } from '../../src/knowledge/embedder.js';
import { fuseRankings } from '../../src/knowledge/hybrid.js';
import { SQLITE_ONLY, buildTestApp, startApp, startService, tempDataDir, waitFor, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';
import { sql } from '../../src/db/orm.js';

// Hybrid retrieval (OLLAMA_EMBED_MODEL): chunks embedded by a job of their own loop, against a
// fake Ollama whose vectors make paraphrases close (bench/fake-embeddings.mjs), and search
// fusing BM25 with vector similarity by reciprocal rank.

const MODEL = 'nomic-embed-text';

const TOMATOES = `# Balcony Tomatoes: A Season of Notes

## Seedlings

Sow the seeds indoors in early spring, two to a cell, and keep them warm until they sprout.

## Pots and soil

Each plant gets a 20-litre pot filled with a peat-free mix; a smaller pot dries out in a day.

## Watering

Water deeply in the morning, at the base of the plant, and twice a day in a heatwave.

## Feeding and support

Feed weekly once the first flowers set, and tie the stems to a cane as they grow.
`;

const COFFEE = `# Coffee at home

Grind the beans just before you brew. A finer grind extracts faster; espresso wants the finest.
Keep the beans in an airtight tin, away from light.
`;

/** A long text file of `paragraphs` distinct paragraphs (about one chunk each). */
function longText(paragraphs: number): string {
  return Array.from(
    { length: paragraphs },
    (_, i) => `Section ${i + 1}. ` + `Observation ${i + 1} about the garden log entry number ${i + 1}, written on day ${i + 1} of the season. `.repeat(9),
  ).join('\n\n');
}

interface Setup {
  ctx: TestApp;
  fake: FakeEmbeddings;
  /** Moves the loops' clock on: a job put off becomes due. */
  advance(ms: number): void;
}

/** The loops' clock: real time plus what the test skipped, so jobs queued at real times stay due. */
function skippingClock() {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms: number) => void (offset += ms) };
}

/** A test app with the embedding model on, against a fake Ollama; loops driven by the test. */
async function setup(t: Test, env: Record<string, string> = {}, fake?: FakeEmbeddings): Promise<Setup> {
  fake ??= await startFakeEmbeddings({ models: [`${MODEL}:latest`, 'other-embed:latest'] });
  t.teardown(() => fake.close());
  const clock = skippingClock();
  const ctx = await buildTestApp(
    t,
    { OLLAMA_HOST: fake.url, OLLAMA_EMBED_MODEL: MODEL, ...env },
    // A job put off waits 0.5-1 s of the clock (the loop's refill never catches it at once); tests skip that time.
    { jobs: { autoStart: false, clock }, embeddings: { retryAfterMs: 0, checkTtlMs: 0, backoffBaseMs: 1000 } },
  );
  return { ctx, fake, advance: clock.advance };
}

async function upload(ctx: Pick<TestApp, 'call'>, filename: string, content: string) {
  const form = multipart([{ name: 'file', filename, content }]);
  const res = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers });
  if (res.statusCode !== 201) throw new Error(`upload answered ${res.statusCode}: ${res.body}`);
  return res.json().data.knowledge.id as string;
}

const search = async (ctx: Pick<TestApp, 'call'>, q: string, extra = '') => {
  const res = await ctx.call({ method: 'GET', url: `/api/v1/knowledge/search?q=${encodeURIComponent(q)}${extra}` });
  if (res.statusCode !== 200) throw new Error(`search answered ${res.statusCode}: ${res.body}`);
  return res.json().data as { mode: string; results: { fileId: string; fileName: string; score: number; text: string }[] };
};

/** Runs the embedding loop until no embedding job is due. */
async function embedAll(app: TestApp['app']) {
  const loop = app.embeddings!.loop;
  await loop.tick();
  await loop.whenIdle();
}

/**
 * Runs the loop until no embedding job waits. On a busy machine the model check can time out
 * (the fake server answers late), which only puts the job off: it runs again then, the wait
 * skipped on the test's clock (`advance`) where the app has one.
 */
async function embedUntilDone(app: TestApp['app'], advance?: (ms: number) => void) {
  await waitFor(async () => {
    await embedAll(app);
    const [waiting] = await rowsOf(app, `select count(*) as n from jobs where kind = 'knowledge-embedding' and status in ('pending', 'running')`);
    if (waiting!.n === 0) return true;
    advance?.(60_000);
    return false;
  }, 'the embedding jobs to be done');
}

/** Rows of a query on an app's database, either one; counts (`n`) as numbers. */
async function rowsOf(app: TestApp['app'], query: string): Promise<Record<string, unknown>[]> {
  const { backend } = app;
  const rows = backend.kind === 'sqlite' ? backend.sqlite.db.all<Record<string, unknown>>(sql.raw(query)) : (await backend.postgres.db.execute(sql.raw(query))).rows;
  return rows.map((row) => ('n' in row ? { ...row, n: Number(row.n) } : row));
}

const vectorCount = (ctx: TestApp, model = MODEL) => ctx.count('select count(*) as n from knowledge_embeddings where model = ?', model);
const chunkCount = (ctx: TestApp) => ctx.count('select count(*) as n from knowledge_chunks');
const embedInputs = (fake: FakeEmbeddings, from = 0) => fake.calls.slice(from).flatMap((call) => call.input);

t.test('OLLAMA_EMBED_MODEL: unset is the default model in auto (off with GENERATOR=builtin), "off" is off, a model name is taken, anything else stops the start naming it', async (t) => {
  t.same([loadConfig({}).ollamaEmbedModel, loadConfig({}).ollamaEmbedAuto], ['nomic-embed-text', true], 'Ollama in play: the default model, auto');
  t.same([loadConfig({ GENERATOR: 'ollama' }).ollamaEmbedModel, loadConfig({ GENERATOR: 'ollama' }).ollamaEmbedAuto], ['nomic-embed-text', true]);
  t.equal(loadConfig({ GENERATOR: 'builtin' }).ollamaEmbedModel, null, 'no Ollama: lexical');
  t.equal(loadConfig({ OLLAMA_EMBED_MODEL: 'off' }).ollamaEmbedModel, null);
  t.equal(loadConfig({ OLLAMA_EMBED_MODEL: ' OFF ', GENERATOR: 'ollama' }).ollamaEmbedModel, null);
  t.same([loadConfig({ OLLAMA_EMBED_MODEL: '  ' }).ollamaEmbedModel, loadConfig({ OLLAMA_EMBED_MODEL: '  ', GENERATOR: 'builtin' }).ollamaEmbedModel], ['nomic-embed-text', null]);
  t.equal(loadConfig({ OLLAMA_EMBED_MODEL: 'bge-m3' }).ollamaEmbedAuto, false, 'a named model is configured, not auto');
  t.equal(loadConfig({ OLLAMA_EMBED_MODEL: ' nomic-embed-text ' }).ollamaEmbedModel, 'nomic-embed-text');
  t.equal(loadConfig({ OLLAMA_EMBED_MODEL: 'library/bge-m3:567m' }).ollamaEmbedModel, 'library/bge-m3:567m');
  for (const bad of ['nomic embed', '$(rm -rf)', ':latest', 'x'.repeat(201)]) {
    t.throws(() => loadConfig({ OLLAMA_EMBED_MODEL: bad }), { name: 'ConfigError', message: /OLLAMA_EMBED_MODEL/ }, bad.slice(0, 20));
  }
  t.ok(new ConfigError('OLLAMA_EMBED_MODEL', 'x') instanceof Error);
});

t.test('reciprocal rank fusion: sums 1/(60 + rank), higher is better, a passage of one list only comes through', async (t) => {
  const passage = (fileId: string, ordinal: number) => ({ fileId, fileName: `${fileId}.md`, text: `${fileId} ${ordinal}`, score: 0, ordinal });
  const fused = fuseRankings(
    [
      [passage('a', 0), passage('b', 0), passage('c', 0)],
      [passage('b', 0), passage('d', 0)],
    ],
    10,
  );
  t.same(
    fused.map((p) => `${p.fileId}${p.ordinal}`),
    ['b0', 'a0', 'd0', 'c0'],
  );
  t.equal(fused[0]!.score, Number((1 / 62 + 1 / 61).toPrecision(4)));
  t.equal(fused[1]!.score, Number((1 / 61).toPrecision(4)));
  t.ok(fused.every((p, i) => i === 0 || fused[i - 1]!.score >= p.score), 'best first');
  t.equal(fuseRankings([[passage('a', 0)], []], 10).length, 1);
  t.equal(fuseRankings([[passage('a', 0), passage('a', 1)]], 1).length, 1, 'cut to the limit');
});

t.test('SQLite keeps the direction of a vector in int8: a quarter of the bytes, cosine within 0.001', async (t) => {
  const random = (seed: number) => unitVector(Array.from({ length: 768 }, (_, i) => Math.sin(seed * 7919 + i * 104729)));
  const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);
  for (const seed of [1, 2, 3]) {
    const vector = random(seed);
    const blob = toInt8Blob(vector);
    t.equal(blob.byteLength, 768);
    t.ok(Math.abs(cosine(fromInt8Blob(blob), vector) - 1) < 0.001, 'the same direction');
    t.ok(Math.abs(cosine(fromInt8Blob(blob), random(seed + 10)) - cosine(vector, random(seed + 10))) < 0.001, 'the same cosine with another');
  }
  t.same([...fromInt8Blob(toInt8Blob(new Float32Array(3)))], [0, 0, 0], 'a zero vector stays zero');
});

t.test('without OLLAMA_EMBED_MODEL: search is lexical and says so, /ready too, and no embedding job is queued', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });
  t.equal(ctx.app.embeddings, null);
  await upload(ctx, 'tomatoes.md', TOMATOES);
  await ctx.app.indexer.whenIdle();
  const found = await search(ctx, 'watering tomatoes');
  t.equal(found.mode, 'lexical');
  t.equal(found.results[0]!.fileName, 'tomatoes.md');
  t.same((await search(ctx, 'irrigating planters')).results, [], 'no shared word, nothing found');
  t.equal(await ctx.count(`select count(*) as n from jobs where kind = 'knowledge-embedding'`), 0);
  const ready = (await ctx.call({ method: 'GET', url: '/ready' })).json();
  t.same(ready.retrieval, { mode: 'lexical' });
});

t.test('auto: with Ollama in play and OLLAMA_EMBED_MODEL unset, retrieval is hybrid once Ollama has nomic-embed-text, lexical (nothing queued, no query sent) while it has not', async (t) => {
  const fake = await startFakeEmbeddings({ models: ['llama3.2:latest'] });
  t.teardown(() => fake.close());
  const clock = skippingClock();
  const ctx = await buildTestApp(
    t,
    { GENERATOR: 'auto', OLLAMA_HOST: fake.url },
    { jobs: { autoStart: false, clock }, embeddings: { retryAfterMs: 0, checkTtlMs: 0, backoffBaseMs: 1000 } },
  );
  t.ok(ctx.app.embeddings, 'the embedding loop is there, for when the model is');
  await upload(ctx, 'tomatoes.md', TOMATOES);
  await ctx.app.indexer.whenIdle();
  const lexical = await search(ctx, 'watering tomatoes');
  t.equal(lexical.mode, 'lexical', 'the model is not pulled: lexical');
  t.equal(lexical.results[0]!.fileName, 'tomatoes.md');
  t.equal(fake.calls.length, 0, 'no query was sent to a model Ollama does not have');
  t.equal(await ctx.count(`select count(*) as n from jobs where kind = 'knowledge-embedding'`), 0, 'nothing queued for it');
  t.same((await ctx.call({ method: 'GET', url: '/ready' })).json().retrieval, { mode: 'lexical', model: 'nomic-embed-text' }, '/ready says which model it waits for');

  // Pulled: the next look (a search, /ready) finds it, the chunks are queued and embedded, search is hybrid.
  fake.models.push('nomic-embed-text:latest');
  await search(ctx, 'watering tomatoes');
  // autoStart is off here: the chunks already indexed are queued as a start would queue them.
  await ctx.app.embeddings!.queueMissing();
  await embedUntilDone(ctx.app, clock.advance);
  t.equal(await vectorCount(ctx), await chunkCount(ctx), 'every chunk embedded with the default model');
  await upload(ctx, 'coffee.md', COFFEE);
  await ctx.app.indexer.whenIdle();
  t.equal(await ctx.count(`select count(*) as n from jobs where kind = 'knowledge-embedding' and status = 'pending'`), 1, 'a new file is queued now that the model is seen');
  await embedUntilDone(ctx.app, clock.advance);
  const paraphrase = await search(ctx, 'irrigating planters');
  t.equal(paraphrase.mode, 'hybrid');
  t.equal(paraphrase.results[0]?.fileName, 'tomatoes.md', 'found by meaning');
  t.ok(fake.calls.every((call) => call.model === 'nomic-embed-text'), 'the default model');
  t.same((await ctx.call({ method: 'GET', url: '/ready' })).json().retrieval, { mode: 'hybrid', model: 'nomic-embed-text' });
});

t.test('plumbing: an upload is embedded by the loop, search fuses and finds a paraphrase, delete removes the vectors', async (t) => {
  const { ctx, fake, advance } = await setup(t);
  t.ok(ctx.app.embeddings);
  const tomatoes = await upload(ctx, 'tomatoes.md', TOMATOES);
  await upload(ctx, 'coffee.md', COFFEE);
  await ctx.app.indexer.whenIdle();
  t.equal(await ctx.count(`select count(*) as n from jobs where kind = 'knowledge-embedding' and status = 'pending'`), 1, 'one job for the site, however many files');
  t.equal(await vectorCount(ctx), 0, 'embedding waits for its loop: the upload did not');

  await embedUntilDone(ctx.app, advance);
  const chunks = await chunkCount(ctx);
  t.equal(await vectorCount(ctx), chunks, 'every chunk has a vector of the model');
  t.same(
    await ctx.rows(`select status, attempts from jobs where kind = 'knowledge-embedding'`),
    [{ status: 'succeeded', attempts: 1 }],
  );
  t.same(embedInputs(fake).length, chunks, 'each chunk embedded once');
  if (ctx.app.backend.kind === 'sqlite') t.same(await ctx.rows('select distinct length(vector) as n from knowledge_embeddings'), [{ n: 64 }], 'int8 vectors');
  t.ok(
    fake.calls.every((call) => call.model === MODEL),
    'the configured model',
  );

  // "irrigating planters" shares no word with the file: BM25 finds nothing, the vectors do.
  const paraphrase = await search(ctx, 'irrigating planters');
  t.equal(paraphrase.mode, 'hybrid');
  t.equal(paraphrase.results[0]?.fileId, tomatoes, 'found by meaning');
  t.match(paraphrase.results[0]!.text, /Water deeply/);
  t.equal(fake.calls.at(-1)!.input.length, 1, 'the query embedded through the same client');

  const both = await search(ctx, 'watering tomatoes in pots');
  t.equal(both.mode, 'hybrid');
  t.equal(both.results[0]!.fileId, tomatoes);
  t.ok(both.results.every((r, i) => i === 0 || both.results[i - 1]!.score >= r.score), 'fused scores, higher is better');
  t.ok(both.results[0]!.score <= 0.0328 && both.results[0]!.score > 0, 'a reciprocal rank score (at most 2/61)');
  t.same(Object.keys(both.results[0]!).sort(), ['fileId', 'fileName', 'score', 'text'], 'passages keep their shape');
  t.same((await search(ctx, 'watering tomatoes', `&fileIds=${tomatoes}&limit=1`)).results.length, 1);

  const ready = (await ctx.call({ method: 'GET', url: '/ready' })).json();
  t.same(ready.retrieval, { mode: 'hybrid', model: MODEL });
  t.notMatch(JSON.stringify(ready.retrieval), /127\.0\.0\.1|\//, 'no host, no path');

  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${tomatoes}` })).statusCode, 200);
  t.equal(await vectorCount(ctx), await chunkCount(ctx), 'the file\'s vectors went with its chunks');
  t.equal((await search(ctx, 'irrigating planters')).results.some((r) => r.fileId === tomatoes), false);
});

t.test('batching: a file of many chunks is embedded in a few calls of many inputs', async (t) => {
  const { ctx, fake, advance } = await setup(t);
  await upload(ctx, 'garden-log.txt', longText(150));
  await ctx.app.indexer.whenIdle();
  const chunks = await chunkCount(ctx);
  t.ok(chunks > 100, `${chunks} chunks`);
  await embedUntilDone(ctx.app, advance);
  const sizes = fake.calls.map((call) => call.input.length);
  t.equal(sizes.reduce((a, b) => a + b, 0), chunks, 'every chunk once');
  t.equal(fake.calls.length, Math.ceil(chunks / 64), 'batches of 64');
  t.ok(sizes.slice(0, -1).every((n) => n === 64), `calls carry 64 inputs (${sizes.join(', ')})`);
  t.equal(await vectorCount(ctx), chunks);
});

t.test('resume: a job cut short keeps the batches it saved and asks only for the missing chunks', async (t) => {
  const { ctx, fake, advance } = await setup(t);
  await upload(ctx, 'garden-log.txt', longText(150));
  await ctx.app.indexer.whenIdle();
  const chunks = await chunkCount(ctx);
  // The first batch succeeds, the second meets a server error: the job is put off.
  fake.failNext(1, 500, 1);
  await embedAll(ctx.app);
  t.equal(await vectorCount(ctx), 64, 'the first batch was saved');
  const [job] = await ctx.rows<{ status: string; attempts: number; waits: number; last_error: string }>(
    `select status, attempts, waits, last_error from jobs where kind = 'knowledge-embedding'`,
  );
  t.match(job, { status: 'pending', attempts: 0, waits: 1, last_error: /500/ }, 'put off, no attempt spent');
  const firstBatch = new Set(fake.calls[0]!.input);
  const before = fake.calls.length;

  advance(60_000);
  await embedAll(ctx.app);
  t.equal(await vectorCount(ctx), chunks, 'the job ran again');
  const resumed = embedInputs(fake, before);
  t.equal(resumed.length, chunks - 64, 'only the missing chunks');
  t.notOk(
    resumed.some((text) => firstBatch.has(text)),
    'none of the saved ones again',
  );
});

t.test('model change: chunks whose vector is of another model are embedded again', async (t) => {
  const { ctx, fake, advance } = await setup(t);
  await upload(ctx, 'tomatoes.md', TOMATOES);
  await ctx.app.indexer.whenIdle();
  await embedUntilDone(ctx.app, advance);
  const chunks = await chunkCount(ctx);
  t.equal(await vectorCount(ctx), chunks);
  await ctx.app.close();

  // The same database, started again with another model.
  const config: Config = { ...ctx.config, ollamaEmbedModel: 'other-embed' };
  const app = await startApp(t, config, {
    chunkSource: extractChunks,
    jobs: { autoStart: false, backoffBaseMs: 10 },
    embeddings: { retryAfterMs: 0, checkTtlMs: 0, backoffBaseMs: 10 },
  });
  const call: TestApp['call'] = ({ key: _key, headers, ...rest }) => app.inject({ ...rest, headers: { authorization: `Bearer ${ctx.key}`, ...headers } } as never);
  const before = fake.calls.length;
  t.equal(await app.embeddings!.queueMissing(), 1, 'the site is queued at start');
  t.equal(await app.embeddings!.queueMissing(), 1, 'asked twice...');
  t.same(await rowsOf(app, `select count(*) as n from jobs where kind = 'knowledge-embedding' and status = 'pending'`), [{ n: 1 }], '...one job');
  await embedUntilDone(app);
  t.equal(embedInputs(fake, before).length, chunks, 'every chunk again');
  t.ok(fake.calls.slice(before).every((c) => c.model === 'other-embed'));
  t.same(await rowsOf(app, `select model, count(*) as n from knowledge_embeddings group by model`), [{ model: 'other-embed', n: chunks }]);
  const found = await search({ call }, 'irrigating planters');
  t.equal(found.mode, 'hybrid');
  t.equal(found.results[0]?.fileName, 'tomatoes.md');
});

t.test('outage: search stays lexical while Ollama is down and the job waits; both resume when it is back', async (t) => {
  const { ctx, fake, advance } = await setup(t);
  await upload(ctx, 'tomatoes.md', TOMATOES);
  await ctx.app.indexer.whenIdle();
  await embedAll(ctx.app);
  t.equal((await search(ctx, 'watering tomatoes')).mode, 'hybrid');

  await fake.stop();
  const down = await search(ctx, 'watering tomatoes');
  t.equal(down.mode, 'lexical', 'the query cannot be embedded: lexical');
  t.equal(down.results[0]?.fileName, 'tomatoes.md', 'and it still answers');
  t.same((await ctx.call({ method: 'GET', url: '/ready' })).json().retrieval, { mode: 'lexical', model: MODEL });

  // A file indexed meanwhile: its job waits for Ollama without spending attempts.
  await upload(ctx, 'coffee.md', COFFEE);
  await ctx.app.indexer.whenIdle();
  await embedAll(ctx.app);
  const [waiting] = await ctx.rows<{ status: string; attempts: number; waits: number; last_error: string }>(
    `select status, attempts, waits, last_error from jobs where kind = 'knowledge-embedding' and status <> 'succeeded'`,
  );
  t.match(waiting, { status: 'pending', attempts: 0, waits: 1, last_error: /cannot be reached|cannot embed/ });
  t.ok((await vectorCount(ctx)) < (await chunkCount(ctx)), 'the new file has no vectors yet');
  t.equal((await search(ctx, 'espresso grind')).results[0]?.fileName, 'coffee.md', 'found lexically meanwhile');

  await fake.start();
  advance(60_000);
  await embedAll(ctx.app);
  t.equal(await vectorCount(ctx), await chunkCount(ctx), 'the waiting job ran once Ollama was back');
  const up = await search(ctx, 'brewing caffeine');
  t.equal(up.mode, 'hybrid');
  t.equal(up.results[0]?.fileName, 'coffee.md');
  t.same((await ctx.call({ method: 'GET', url: '/ready' })).json().retrieval, { mode: 'hybrid', model: MODEL });
});

t.test('a model Ollama does not have: search lexical, the job waits for it', async (t) => {
  const fake = await startFakeEmbeddings({ models: ['llama3.2:latest'] });
  const { ctx, advance } = await setup(t, {}, fake);
  await upload(ctx, 'tomatoes.md', TOMATOES);
  await ctx.app.indexer.whenIdle();
  await embedAll(ctx.app);
  t.equal((await search(ctx, 'watering tomatoes')).mode, 'lexical');
  const [job] = await ctx.rows<{ status: string; last_error: string }>(`select status, last_error from jobs where kind = 'knowledge-embedding'`);
  t.match(job, { status: 'pending', last_error: /ollama pull nomic-embed-text/ });
  t.same((await ctx.call({ method: 'GET', url: '/ready' })).json().retrieval, { mode: 'lexical', model: MODEL });
  fake.models = [`${MODEL}:latest`];
  advance(60_000);
  await embedAll(ctx.app);
  t.equal(await vectorCount(ctx), await chunkCount(ctx), 'embedded once the model was pulled');
  t.equal((await search(ctx, 'irrigating planters')).mode, 'hybrid');
});

t.test('crash: a server killed mid-embedding resumes at its next start with the chunks still missing', { skip: SQLITE_ONLY }, async (t) => {
  const fake = await startFakeEmbeddings({ models: [`${MODEL}:latest`] });
  t.teardown(() => fake.close());
  const dataDir = tempDataDir(t);
  const env = { DATA_DIR: dataDir, OLLAMA_HOST: fake.url, OLLAMA_EMBED_MODEL: MODEL, GENERATOR: 'builtin', BUILTIN_WORKERS: '0', JOB_POLL_MS: '50' };
  const first = await startService(env);
  t.teardown(() => first.child.kill('SIGKILL'));
  const api = (service: { url: string }) => ({
    call: async (options: { method: string; url: string; payload?: unknown; headers?: Record<string, string> }) => {
      const res = await fetch(service.url + options.url, { method: options.method, body: options.payload as never, headers: { authorization: 'Bearer blog_test-bootstrap-key-0123456789abcdef', ...options.headers } });
      const body = await res.text();
      return { statusCode: res.status, body, json: () => JSON.parse(body) };
    },
  });
  // The second batch is held: the server is killed while it waits for it.
  const release = fake.hold(1);
  await upload(api(first) as never, 'garden-log.txt', longText(150));
  await waitFor(() => fake.calls.length >= 2, 'the second batch to be asked for');
  first.child.kill('SIGKILL');
  await first.exited;
  release();

  const db = new Database(path.join(dataDir, 'blog.db'), { readonly: true });
  t.teardown(() => db.close());
  const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
  const chunks = count('select count(*) as n from knowledge_chunks');
  t.equal(count('select count(*) as n from knowledge_embeddings'), 64, 'the first batch survived the crash');
  const firstBatch = new Set(fake.calls[0]!.input);
  const before = fake.calls.length;

  const second = await startService(env);
  t.teardown(() => second.child.kill('SIGKILL'));
  await waitFor(() => count('select count(*) as n from knowledge_embeddings') === chunks, 'the restarted server to finish', 60_000);
  const resumed = embedInputs(fake, before);
  t.equal(resumed.length, chunks - 64, 'only the missing chunks were asked for');
  t.notOk(resumed.some((text) => firstBatch.has(text)));
  t.equal((await search(api(second) as never, 'irrigating the garden log')).mode, 'hybrid');
  second.child.kill('SIGTERM');
  await second.exited;
  t.ok(fs.existsSync(dataDir));
});
