// npm run bench:knowledge: knowledge-base indexing throughput, search latency, and the effect of
// indexing a ~10 MB PDF on request latency.
//
// (a) Indexing throughput (MB/s) for PDF, DOCX and text: the core alone (the service's worker
//     path, extractChunksInWorker, called from this process, with extractText and chunkText
//     timed separately without a worker) and end to end over HTTP (upload -> `indexed`, polled).
//     Files: test/fixtures text/release-notes-2026.txt (760 B: the fixed cost of a file),
//     pdf/i216_nuclear.pdf and word/bigfile-01.docx, a generated 5 MB .txt and a generated PDF
//     just under 10 MiB (uncompressed text pages, hand-written writer).
// (b) Search p50/p95 on a site with 10,000 chunks (seeded straight into knowledge_files and
//     knowledge_chunks; knowledge_fts follows by trigger), in process (the search store) and over HTTP
//     (GET /api/v1/knowledge/search), with keyword, rare-word and natural-language queries.
//     Target p95 < 10 ms.
// (c) GET one post p99 (autocannon, 10 connections) with nothing being indexed (6 s before and
//     6 s after, averaged), and for the whole time the ~10 MB PDF is being indexed (201 of its
//     upload -> `indexed`). Target <= 2x. A /health probe every 100 ms shows when stalls happen.

import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import {
  FIXTURES_DIR, apiClient, buildTextFile, buildTextPdf, cannon, dist, initDataDir, makeApiKey, makeQueries, mib, multipartFile,
  onCleanup, peakRssMb, pollUntil, printResult, printTable, ratio, request, round, rssMb, runBench, seedKnowledge, seedPosts, sleep,
  startCannon, startServer, summarize, tempDir, textGenerator, verdict,
} from './lib.mjs';

const CHUNKS = 10_000;
const QUERIES = 300;
const SEARCH_LIMIT = 10; // the search route's default
const PDF_MAX_BYTES = 10 * 1024 * 1024 - 16 * 1024; // just under the 10 MiB upload limit
const TEXT_BYTES = 5 * 1024 * 1024;
const IDLE_SECONDS = 6;
const GET_CONNECTIONS = 10;

// --hybrid (npm run bench:knowledge:hybrid): lexical beside hybrid retrieval instead (knowledge-hybrid.mjs); it exits when done.
if (process.argv.includes('--hybrid')) {
  const { hybridBench } = await import('./knowledge-hybrid.mjs');
  await hybridBench();
}

await runBench('bench/knowledge', async () => {
  const dataDir = tempDir();
  const workDir = tempDir('blog-bench-files-');
  const apiKey = makeApiKey();

  // ---- files ---------------------------------------------------------------------------------
  const gen = textGenerator(3);
  let t0 = performance.now();
  const bigPdf = buildTextPdf(PDF_MAX_BYTES, gen);
  const bigPdfPath = path.join(workDir, 'generated-10mb.pdf');
  fs.writeFileSync(bigPdfPath, bigPdf.bytes);
  const textPath = path.join(workDir, 'generated-5mb.txt');
  fs.writeFileSync(textPath, buildTextFile(TEXT_BYTES, gen));
  console.log(`generated ${path.basename(bigPdfPath)} (${bigPdf.bytes.length} bytes, ${bigPdf.pages} pages) and ${path.basename(textPath)} in ${round(performance.now() - t0, 0)} ms`);
  const files = [
    { label: 'TXT release-notes (760 B)', path: path.join(FIXTURES_DIR, 'text', 'release-notes-2026.txt'), ext: 'txt' },
    { label: 'PDF i216_nuclear.pdf', path: path.join(FIXTURES_DIR, 'pdf', 'i216_nuclear.pdf'), ext: 'pdf' },
    { label: 'DOCX bigfile-01.docx', path: path.join(FIXTURES_DIR, 'word', 'bigfile-01.docx'), ext: 'docx' },
    { label: 'TXT generated 5 MB', path: textPath, ext: 'txt' },
    { label: 'PDF generated ~10 MB', path: bigPdfPath, ext: 'pdf' },
  ];
  for (const f of files) {
    if (!fs.existsSync(f.path)) throw new Error(`fixture missing: ${f.path}`);
    f.bytes = fs.statSync(f.path).size;
  }

  // ---- seed ----------------------------------------------------------------------------------
  t0 = performance.now();
  const data = await initDataDir(dataDir, apiKey);
  const { siteId } = data;
  const postIds = seedPosts(data.sqlite, siteId, 1000);
  const seeded = seedKnowledge(data.sqlite, siteId, { chunks: CHUNKS });
  const seedMs = performance.now() - t0;
  console.log(`seeded ${postIds.length} posts and ${seeded.chunks} chunks (avg ${seeded.avgChunkChars} chars) in ${round(seedMs / 1000, 1)} s`);

  // ---- (b) search, in process ------------------------------------------------------------------
  // The app's search store, as KnowledgeService.search calls it.
  const { search } = data.app.stores.knowledge;
  const queries = makeQueries(seeded.gen, QUERIES);
  for (const { q } of queries) await search.search(siteId, q, { limit: SEARCH_LIMIT }); // warm-up pass, not measured
  const inProcess = [];
  for (const { kind, q } of queries) {
    const t = performance.now();
    const results = await search.search(siteId, q, { limit: SEARCH_LIMIT });
    inProcess.push({ kind, ms: performance.now() - t, results: results.length });
  }
  const matchCount = data.sqlite.prepare('select count(*) as n from knowledge_fts where knowledge_fts match ?');
  const { toFtsQuery } = await dist('src/knowledge/sqlite.js');
  const matchedRows = Object.fromEntries(
    ['keywords', 'natural', 'rare'].map((kind) => {
      const sample = queries.filter((x) => x.kind === kind).slice(0, 20);
      return [kind, Math.round(sample.reduce((s, x) => s + matchCount.get(toFtsQuery(x.q)).n, 0) / sample.length)];
    }),
  );
  await data.close();

  // ---- (a) indexing, core only ------------------------------------------------------------------
  // The service's own path: extractChunksInWorker (extract + chunk in a worker thread), or, in
  // older builds, extractInWorker + chunkText on the calling thread. Then the same two steps
  // without a worker (extractText, chunkText) for the breakdown; the difference is the worker's
  // fixed cost (thread start, module loading, copying the result back).
  const runner = await dist('src/knowledge/extract-runner.js');
  const { extractText } = await dist('src/knowledge/extract.js');
  const { chunkText } = await dist('src/knowledge/chunk.js');
  const servicePath = runner.extractChunksInWorker ? 'extractChunksInWorker' : 'extractInWorker + chunkText';
  const core = [];
  for (const f of files) {
    const name = path.basename(f.path);
    const t = performance.now();
    const chunks = runner.extractChunksInWorker
      ? await runner.extractChunksInWorker(f.path, f.ext, name, { timeoutMs: 120_000 })
      : chunkText(name, await runner.extractInWorker(f.path, f.ext, { timeoutMs: 120_000 }));
    const pathMs = performance.now() - t;
    const t1 = performance.now();
    const text = await extractText(f.path, f.ext);
    const extractMs = performance.now() - t1;
    const t2 = performance.now();
    const direct = chunkText(name, text);
    const chunkMs = performance.now() - t2;
    core.push({ ...f, pathMs, extractMs, chunkMs, textChars: text.length, chunks: chunks.length, directChunks: direct.length });
    console.log(`core ${f.label}: ${servicePath} ${round(pathMs, 0)} ms (${chunks.length} chunks); without a worker: extractText ${round(extractMs, 0)} ms + chunkText ${round(chunkMs, 0)} ms`);
  }

  // ---- server ----------------------------------------------------------------------------------
  const server = await startServer({ dataDir, apiKey });
  const api = apiClient(server, apiKey);
  console.log(`server pid ${server.pid} ready on ${server.baseUrl} (RSS ${rssMb(server.pid)} MB)`);

  // ---- (b) search over HTTP ---------------------------------------------------------------------
  const searchPath = (q) => `/api/v1/knowledge/search?q=${encodeURIComponent(q)}&limit=${SEARCH_LIMIT}`;
  for (const { q } of queries) await api.get(searchPath(q)); // warm-up pass, not measured
  const overHttp = [];
  for (const { kind, q } of queries) {
    const res = await api.get(searchPath(q));
    if (res.status !== 200) throw new Error(`search ${q}: ${res.status} ${res.text.slice(0, 200)}`);
    overHttp.push({ kind, ms: res.ms, results: res.json().data.results.length });
  }
  const healthMs = [];
  for (let i = 0; i < 100; i++) healthMs.push((await request(server.baseUrl, 'GET', '/health')).ms);

  // ---- (a) indexing over HTTP -----------------------------------------------------------------
  async function uploadAndIndex(f, { pollMs = 25, timeoutMs = 120_000 } = {}) {
    const bytes = fs.readFileSync(f.path);
    const form = multipartFile(path.basename(f.path), bytes);
    const t = performance.now();
    const res = await api.post('/api/v1/knowledge', form.body, { headers: { 'content-type': form.contentType }, timeoutMs: 60_000 });
    const uploadMs = performance.now() - t;
    if (res.status !== 201) throw new Error(`upload ${f.label}: ${res.status} ${res.text.slice(0, 300)}`);
    const id = res.json().data.knowledge.id;
    return {
      id,
      uploadMs,
      started: t,
      uploadedAt: performance.now(),
      finished: (async () => {
        const row = await pollUntil(
          async () => {
            const k = (await api.get(`/api/v1/knowledge/${id}`)).json().data.knowledge;
            return k.status === 'uploaded' ? null : k;
          },
          { intervalMs: pollMs, timeoutMs, what: `${f.label} to be indexed` },
        );
        return { row, totalMs: performance.now() - t, indexMs: performance.now() - t - uploadMs };
      })(),
    };
  }
  const http = [];
  for (const f of files.slice(0, -1)) {
    const job = await uploadAndIndex(f);
    const done = await job.finished;
    if (done.row.status !== 'indexed') throw new Error(`${f.label} ended ${done.row.status}: ${done.row.error}`);
    http.push({ ...f, uploadMs: job.uploadMs, indexMs: done.indexMs, totalMs: done.totalMs, chunks: done.row.chunkCount });
    console.log(`http ${f.label}: upload ${round(job.uploadMs, 0)} ms, then indexed after ${round(done.indexMs, 0)} ms (${done.row.chunkCount} chunks)`);
  }

  // ---- (c) GET one post p99: idle, then while the ~10 MB PDF is indexed -------------------------
  let k = 0;
  const rotation = Array.from({ length: 200 }, (_, i) => postIds[(i * 37) % postIds.length]);
  const getRequests = [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/posts/${rotation[k++ % rotation.length]}` }) }];
  await cannon({ server, apiKey, title: 'warm-up', requests: getRequests, connections: GET_CONNECTIONS, duration: 2 });
  const idleBefore = await cannon({ server, apiKey, title: 'GET one post, idle (before)', requests: getRequests, connections: GET_CONNECTIONS, duration: IDLE_SECONDS });
  console.log(`idle before: ${idleBefore.rps} req/s, p99 ${idleBefore.p99Ms} ms, max ${idleBefore.maxMs} ms`);

  const big = files.at(-1);
  const rssBefore = rssMb(server.pid);
  const job = await uploadAndIndex(big, { pollMs: 50 });
  // Runs until the file is indexed (then stopped), at most 150 s.
  const during = startCannon({ server, apiKey, title: 'GET one post, indexing 10 MB PDF', requests: getRequests, connections: GET_CONNECTIONS, duration: 150 });
  // Health probe every 100 ms, to see when the event loop stalls.
  // A read-only connection on the same database (WAL) sees when the first chunk rows land: that
  // splits indexing into extraction (worker thread) and writing (event loop) phases.
  const reader = new Database(path.join(dataDir, 'blog.db'), { readonly: true, fileMustExist: true });
  onCleanup(() => reader.close());
  const chunkRows = reader.prepare('select count(*) as n from knowledge_chunks where file_id = ?');
  let writeStartAt = null;
  const probes = [];
  let probing = true;
  const prober = (async () => {
    for (let i = 0; probing && i < 3000; i++) {
      const at = performance.now() - job.uploadedAt;
      if (writeStartAt === null && chunkRows.get(job.id).n > 0) writeStartAt = at;
      try {
        probes.push({ at, ms: (await request(server.baseUrl, 'GET', '/health', { timeoutMs: 30_000 })).ms });
      } catch {
        probes.push({ at, ms: null });
      }
      await sleep(100);
    }
  })();
  let bigDone;
  let rssPeakDuring = rssBefore;
  const rssSampler = setInterval(() => (rssPeakDuring = Math.max(rssPeakDuring, rssMb(server.pid) ?? 0)), 200);
  try {
    bigDone = await job.finished;
  } finally {
    clearInterval(rssSampler);
    during.instance.stop();
    probing = false;
  }
  const duringResult = await during.done;
  await prober;
  reader.close();
  const phase = (from, to) => {
    const ms = probes.filter((p) => p.ms !== null && p.at >= from && p.at < to).map((p) => p.ms);
    return summarize(ms, 1);
  };
  const extractPhase = phase(0, writeStartAt ?? Infinity);
  const writePhase = writeStartAt === null ? summarize([]) : phase(writeStartAt, Infinity);
  if (bigDone.row.status !== 'indexed') throw new Error(`${big.label} ended ${bigDone.row.status}: ${bigDone.row.error}`);
  console.log(`during: ${duringResult.rps} req/s, p99 ${duringResult.p99Ms} ms, max ${duringResult.maxMs} ms over ${duringResult.seconds} s; PDF indexed in ${round(bigDone.indexMs, 0)} ms after a ${round(job.uploadMs, 0)} ms upload`);
  http.push({ ...big, uploadMs: job.uploadMs, indexMs: bigDone.indexMs, totalMs: bigDone.totalMs, chunks: bigDone.row.chunkCount });
  // Idle again afterwards: on this noisy machine one idle window is not a reliable baseline.
  const idleAfter = await cannon({ server, apiKey, title: 'GET one post, idle (after)', requests: getRequests, connections: GET_CONNECTIONS, duration: IDLE_SECONDS });
  console.log(`idle after: ${idleAfter.rps} req/s, p99 ${idleAfter.p99Ms} ms, max ${idleAfter.maxMs} ms`);
  const idleP99 = (idleBefore.p99Ms + idleAfter.p99Ms) / 2;

  const rssAfter = rssMb(server.pid);
  const rssPeak = peakRssMb(server.pid);
  const warnings = server.warnings();
  const stopped = await server.stop();

  // ---- report ------------------------------------------------------------------------------
  const mbps = (bytes, ms) => round(mib(bytes) / (ms / 1000), 2);
  printTable(
    `(a) Indexing throughput (MB = MiB of file; core = ${servicePath} called from this process; extract/chunk = the same steps without a worker; http = upload 201 -> status indexed)`,
    files.map((f, i) => {
      const c = core[i];
      const h = http[i];
      return {
        file: f.label,
        'size MB': round(mib(f.bytes), 2),
        'core ms': round(c.pathMs, 0),
        'core MB/s': mbps(f.bytes, c.pathMs),
        'extract ms': round(c.extractMs, 0),
        'chunk ms': round(c.chunkMs, 0),
        'upload ms': round(h.uploadMs, 0),
        'index ms': round(h.indexMs, 0),
        'http MB/s': mbps(f.bytes, h.totalMs),
        chunks: h.chunks,
      };
    }),
  );

  const stats = (rows, kind) => summarize(rows.filter((r) => !kind || r.kind === kind).map((r) => r.ms), 2);
  const searchRows = [];
  for (const kind of [null, 'keywords', 'natural', 'rare']) {
    const a = stats(inProcess, kind);
    const b = stats(overHttp, kind);
    searchRows.push({
      queries: kind ?? 'all',
      n: a.n,
      'fts rows matched': kind ? matchedRows[kind] : null,
      'in-proc p50': a.p50,
      'in-proc p95': a.p95,
      'in-proc max': a.max,
      'http p50': b.p50,
      'http p95': b.p95,
      'http max': b.max,
      'p95 < 10 ms': b.p95 < 10,
    });
  }
  const healthStats = summarize(healthMs, 2);
  printTable(`(b) Search latency, ms, ${seeded.chunks.toLocaleString('en-US')} chunks, limit ${SEARCH_LIMIT}, sequential (GET /health over the same client: p50 ${healthStats.p50}, p95 ${healthStats.p95})`, searchRows);

  const p99Ratio = ratio(duringResult.p99Ms, idleP99, 2);
  const worstProbes = [...probes].filter((p) => p.ms !== null).sort((a, b) => b.ms - a.ms).slice(0, 5);
  printTable('(c) GET one post under indexing (autocannon, 10 connections)', [
    ...[idleBefore, idleAfter].map((r, i) => ({ run: i ? 'idle, after' : 'idle, before', seconds: r.seconds, 'req/s': r.rps, 'p50 ms': r.p50Ms, 'p99 ms': r.p99Ms, 'max ms': r.maxMs, non2xx: r.non2xx, errors: r.errors + r.timeouts })),
    {
      run: 'indexing 10 MB PDF',
      seconds: duringResult.seconds,
      'req/s': duringResult.rps,
      'p50 ms': duringResult.p50Ms,
      'p99 ms': duringResult.p99Ms,
      'max ms': duringResult.maxMs,
      non2xx: duringResult.non2xx,
      errors: duringResult.errors + duringResult.timeouts,
    },
  ]);
  console.log(`p99 during / idle (mean of before and after: ${idleP99} ms) = ${p99Ratio} (target <= 2): ${verdict(p99Ratio !== null && p99Ratio <= 2)}`);
  console.log(`10 MB PDF: ${bigPdf.pages} pages, ${bigDone.row.chunkCount} chunks, indexed ${round(bigDone.indexMs / 1000, 2)} s after its upload (${round(job.uploadMs, 0)} ms); server RSS ${rssBefore} MB before, peak ${rssPeakDuring} MB during, ${rssAfter} MB after (VmHWM ${rssPeak} MB)`);
  console.log(`slowest /health probes during indexing (ms after upload -> latency): ${worstProbes.map((p) => `${round(p.at, 0)} -> ${round(p.ms, 0)} ms`).join(', ')}`);
  console.log(
    `/health probes by phase: extraction (0-${round(writeStartAt, 0)} ms, worker thread) p50 ${extractPhase.p50} / max ${extractPhase.max} ms (n ${extractPhase.n}); ` +
      `writing chunks (${round(writeStartAt, 0)}-${round(bigDone.indexMs, 0)} ms, event loop) p50 ${writePhase.p50} / max ${writePhase.max} ms (n ${writePhase.n})`,
  );
  console.log(`server warn/error log lines: ${warnings.warn}/${warnings.error}; stop: ${stopped.graceful ? 'graceful' : 'SIGKILL'}`);

  const searchP95 = stats(overHttp).p95;
  printTable('Targets', [
    { check: 'search p95 (HTTP)', target: '< 10 ms', measured: searchP95, verdict: verdict(searchP95 < 10) },
    { check: 'search p95 (in process)', target: '< 10 ms', measured: stats(inProcess).p95, verdict: verdict(stats(inProcess).p95 < 10) },
    { check: 'GET p99 indexing/idle', target: '<= 2x', measured: p99Ratio, verdict: verdict(p99Ratio !== null && p99Ratio <= 2) },
  ]);

  printResult('knowledge', {
    seedSec: round(seedMs / 1000, 2),
    chunksSeeded: seeded.chunks,
    avgChunkChars: seeded.avgChunkChars,
    indexing: files.map((f, i) => ({
      file: f.label,
      bytes: f.bytes,
      core: { path: servicePath, ms: round(core[i].pathMs, 1), mbPerSec: mbps(f.bytes, core[i].pathMs), extractMs: round(core[i].extractMs, 1), chunkMs: round(core[i].chunkMs, 1), chunks: core[i].chunks, textChars: core[i].textChars },
      http: { uploadMs: round(http[i].uploadMs, 1), indexMs: round(http[i].indexMs, 1), totalMs: round(http[i].totalMs, 1), mbPerSec: mbps(f.bytes, http[i].totalMs), chunks: http[i].chunks },
    })),
    search: {
      limit: SEARCH_LIMIT,
      matchedRowsAvg: matchedRows,
      inProcess: Object.fromEntries(['all', 'keywords', 'natural', 'rare'].map((k) => [k, stats(inProcess, k === 'all' ? null : k)])),
      http: Object.fromEntries(['all', 'keywords', 'natural', 'rare'].map((k) => [k, stats(overHttp, k === 'all' ? null : k)])),
      healthHttp: healthStats,
      zeroResultQueries: overHttp.filter((r) => r.results === 0).length,
    },
    underIndexing: {
      idleBefore,
      idleAfter,
      idleP99,
      during: duringResult,
      p99Ratio,
      pdf: { bytes: bigPdf.bytes.length, pages: bigPdf.pages, chunks: bigDone.row.chunkCount, uploadMs: round(job.uploadMs, 1), indexMs: round(bigDone.indexMs, 1) },
      worstHealthProbes: worstProbes.map((p) => ({ atMs: round(p.at, 0), ms: round(p.ms, 1) })),
      writeStartMs: round(writeStartAt, 0),
      healthProbesExtractionPhase: extractPhase,
      healthProbesWritePhase: writePhase,
      rssMb: { before: rssBefore, peakDuring: rssPeakDuring, after: rssAfter, vmHwm: rssPeak },
    },
    serverLog: warnings,
    targets: {
      searchP95Http: { target: '< 10 ms', value: searchP95, ok: searchP95 < 10 },
      getP99Ratio: { target: '<= 2', value: p99Ratio, ok: p99Ratio !== null && p99Ratio <= 2 },
    },
  });
});
