// npm run bench:knowledge:hybrid (bench/knowledge.mjs --hybrid): hybrid retrieval beside lexical.
//
// (a) Search p50/p95 on a site with 10,000 chunks (seeded as bench:knowledge seeds them), over
//     HTTP: a server without OLLAMA_EMBED_MODEL (lexical, BM25) and the same data on a server with
//     it (hybrid: the query embedded by the fake server, the site's 10,000 vectors scanned with
//     sqlite-vec, fused with BM25's 50 best by reciprocal rank). In process: the vector side alone
//     (ChunkEmbeddings.nearest). Vectors have 768 dimensions, as nomic-embed-text's.
// (b) Embedding throughput: the 10,000 seeded chunks embedded by the job the start queues
//     (batches of 64 through /api/embed), chunks per second; and a generated 2 MB text file
//     uploaded to a fresh server without and with the model: upload -> `indexed` (embedding must
//     not slow indexing), and -> every chunk embedded.
// The embedding server is bench/fake-embeddings.mjs, in this process: its own cost (hashing the
// words, JSON of 64 x 768 numbers) is in the figures; a real model's is far larger (tens of
// milliseconds per chunk on a CPU), so (b) measures the service's share, not Ollama's.

import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { fakeVector, startFakeEmbeddings } from './fake-embeddings.mjs';
import {
  apiClient, buildApp, buildTextFile, dist, initDataDir, makeApiKey, makeQueries, mib, multipartFile, onCleanup, pollUntil, printResult,
  printTable, round, runBench, seedKnowledge, startServer, summarize, tempDir, textGenerator,
} from './lib.mjs';

const CHUNKS = 10_000;
const QUERIES = 300;
const SEARCH_LIMIT = 10;
const DIMENSIONS = 768;
const MODEL = 'nomic-embed-text';
const UPLOAD_BYTES = 2 * 1024 * 1024;

export async function hybridBench() {
  await runBench(
    'bench/knowledge --hybrid',
    async () => {
      const fake = await startFakeEmbeddings({ models: [`${MODEL}:latest`], dimensions: DIMENSIONS });
      onCleanup(() => fake.close());
      const embedEnv = { OLLAMA_HOST: fake.url, OLLAMA_EMBED_MODEL: MODEL };
      const apiKey = makeApiKey();

      // ---- seed --------------------------------------------------------------------------------
      const dataDir = tempDir();
      const data = await initDataDir(dataDir, apiKey);
      const { siteId } = data;
      const seeded = seedKnowledge(data.sqlite, siteId, { chunks: CHUNKS });
      await data.close();
      console.log(`seeded ${seeded.chunks} chunks (avg ${seeded.avgChunkChars} chars)`);
      const queries = makeQueries(seeded.gen, QUERIES);
      const searchPath = (q) => `/api/v1/knowledge/search?q=${encodeURIComponent(q)}&limit=${SEARCH_LIMIT}`;

      async function searchTimes(server, expectedMode) {
        const api = apiClient(server, apiKey);
        for (const { q } of queries) await api.get(searchPath(q)); // warm-up pass, not measured
        const rows = [];
        for (const { kind, q } of queries) {
          const res = await api.get(searchPath(q));
          if (res.status !== 200) throw new Error(`search ${q}: ${res.status} ${res.text.slice(0, 200)}`);
          const body = res.json().data;
          if (body.mode !== expectedMode) throw new Error(`search ${q} answered mode ${body.mode}, expected ${expectedMode}`);
          rows.push({ kind, ms: res.ms, results: body.results.length });
        }
        return rows;
      }

      // ---- (a) lexical ---------------------------------------------------------------------------
      let server = await startServer({ dataDir, apiKey });
      const lexical = await searchTimes(server, 'lexical');
      await server.stop();

      // ---- (b) the seeded chunks embedded by the job the start queues ---------------------------
      const reader = new Database(path.join(dataDir, 'blog.db'), { readonly: true, fileMustExist: true });
      onCleanup(() => reader.close());
      const embedded = reader.prepare('select count(*) as n from knowledge_embeddings where model = ?');
      const callsBefore = fake.calls.length;
      const started = performance.now();
      server = await startServer({ dataDir, apiKey, env: embedEnv });
      await pollUntil(() => embedded.get(MODEL).n >= CHUNKS, { intervalMs: 50, timeoutMs: 150_000, what: 'the seeded chunks to be embedded' });
      const seededEmbedMs = performance.now() - started;
      const seededCalls = fake.calls.slice(callsBefore);
      console.log(`embedded ${CHUNKS} chunks in ${round(seededEmbedMs / 1000, 1)} s (${seededCalls.length} calls, server start included)`);

      // ---- (a) hybrid --------------------------------------------------------------------------
      const hybrid = await searchTimes(server, 'hybrid');
      await server.stop();
      reader.close();

      // ---- (a) the vector side alone, in process ---------------------------------------------------
      const { app, close } = await buildApp(dataDir);
      const { unitVector } = await dist('src/knowledge/embedder.js');
      const store = app.stores.knowledge.embeddings;
      const vectors = queries.map(({ kind, q }) => ({ kind, vector: unitVector(fakeVector(q, `${MODEL}:latest`, DIMENSIONS)) }));
      for (const { vector } of vectors.slice(0, 30)) await store.nearest(siteId, MODEL, vector, { limit: 50 });
      const vectorSide = [];
      for (const { kind, vector } of vectors) {
        const t = performance.now();
        await store.nearest(siteId, MODEL, vector, { limit: 50 });
        vectorSide.push({ kind, ms: performance.now() - t });
      }
      await close();

      // ---- (b) a file uploaded without and with embeddings ----------------------------------------
      const text = buildTextFile(UPLOAD_BYTES, textGenerator(5));
      async function uploadRun(env) {
        const dir = tempDir();
        const fresh = await initDataDir(dir, apiKey);
        await fresh.close();
        const s = await startServer({ dataDir: dir, apiKey, env });
        const api = apiClient(s, apiKey);
        const form = multipartFile('generated-2mb.txt', Buffer.from(text));
        const t = performance.now();
        const res = await api.post('/api/v1/knowledge', form.body, { headers: { 'content-type': form.contentType }, timeoutMs: 60_000 });
        const uploadMs = performance.now() - t;
        if (res.status !== 201) throw new Error(`upload: ${res.status} ${res.text.slice(0, 300)}`);
        const id = res.json().data.knowledge.id;
        const row = await pollUntil(
          async () => {
            const k = (await api.get(`/api/v1/knowledge/${id}`)).json().data.knowledge;
            return k.status === 'uploaded' ? null : k;
          },
          { intervalMs: 20, timeoutMs: 120_000, what: 'the file to be indexed' },
        );
        const indexedMs = performance.now() - t;
        let embeddedMs = null;
        if (env.OLLAMA_EMBED_MODEL) {
          const db = new Database(path.join(dir, 'blog.db'), { readonly: true, fileMustExist: true });
          try {
            const count = db.prepare('select count(*) as n from knowledge_embeddings');
            await pollUntil(() => count.get().n >= row.chunkCount, { intervalMs: 20, timeoutMs: 120_000, what: 'the file to be embedded' });
          } finally {
            db.close();
          }
          embeddedMs = performance.now() - t;
        }
        await s.stop();
        return { uploadMs, indexedMs, embeddedMs, chunks: row.chunkCount };
      }
      const withoutModel = await uploadRun({});
      const withModel = await uploadRun(embedEnv);

      // ---- report ----------------------------------------------------------------------------------
      const stats = (rows, kind) => summarize(rows.filter((r) => !kind || r.kind === kind).map((r) => r.ms), 2);
      const kinds = [null, 'keywords', 'natural', 'rare'];
      printTable(
        `(a) Search over HTTP, ${CHUNKS} chunks, limit ${SEARCH_LIMIT}, ${QUERIES} queries (ms); vector side = ChunkEmbeddings.nearest in process, 50 candidates, ${DIMENSIONS} dimensions`,
        kinds.map((kind) => {
          const l = stats(lexical, kind);
          const h = stats(hybrid, kind);
          const v = stats(vectorSide, kind);
          return { queries: kind ?? 'all', 'lexical p50': l.p50, 'lexical p95': l.p95, 'hybrid p50': h.p50, 'hybrid p95': h.p95, 'vector side p50': v.p50, 'vector side p95': v.p95 };
        }),
      );
      const mbps = (ms) => round(mib(UPLOAD_BYTES) / (ms / 1000), 2);
      printTable(`(b) Embedding and indexing throughput (fake embedding server in this process, batches of 64)`, [
        { what: `${CHUNKS} seeded chunks, start -> all embedded`, ms: round(seededEmbedMs, 0), 'chunks/s': round(CHUNKS / (seededEmbedMs / 1000), 0), calls: seededCalls.length, 'inputs/call': round(CHUNKS / seededCalls.length, 1) },
        { what: '2 MB .txt, model off: upload -> indexed', ms: round(withoutModel.indexedMs, 0), 'MB/s': mbps(withoutModel.indexedMs), chunks: withoutModel.chunks },
        { what: '2 MB .txt, model on: upload -> indexed', ms: round(withModel.indexedMs, 0), 'MB/s': mbps(withModel.indexedMs), chunks: withModel.chunks },
        { what: '2 MB .txt, model on: upload -> embedded', ms: round(withModel.embeddedMs, 0), 'MB/s': mbps(withModel.embeddedMs), 'chunks/s': round(withModel.chunks / (withModel.embeddedMs / 1000), 0) },
      ]);
      printResult('knowledge-hybrid', {
        chunks: CHUNKS,
        dimensions: DIMENSIONS,
        searchLexicalP50Ms: stats(lexical).p50,
        searchLexicalP95Ms: stats(lexical).p95,
        searchHybridP50Ms: stats(hybrid).p50,
        searchHybridP95Ms: stats(hybrid).p95,
        vectorSideP95Ms: stats(vectorSide).p95,
        seededEmbedChunksPerSecond: round(CHUNKS / (seededEmbedMs / 1000), 0),
        uploadIndexedMsWithout: round(withoutModel.indexedMs, 0),
        uploadIndexedMsWith: round(withModel.indexedMs, 0),
        uploadEmbeddedMsWith: round(withModel.embeddedMs, 0),
      });
    },
    { timeLimitMs: 400_000 },
  );
}
