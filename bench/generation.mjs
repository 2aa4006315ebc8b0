// npm run bench:generation: time to generate one post on a site with 10,000 knowledge chunks.
//
// 1. GENERATOR=builtin: POST /api/v1/posts/generate sequentially with varied topics (defaults:
//    professional, medium, informative). Target < 50 ms per post (p50 and p95 reported). The
//    same topics are also run in process (searchKnowledge + BuiltinGenerator.generate) to split
//    the time between retrieval, composition and the HTTP/insert around them.
// 2. GENERATOR=ollama against a fake Ollama in this process that answers at once (GET /api/tags,
//    POST /api/chat as an NDJSON stream): the service's own overhead around a provider is the
//    request latency minus the time the fake server spent on the chat call.

import http from 'node:http';
import { performance } from 'node:perf_hooks';
import {
  apiClient, buildApp, dist, freePort, initDataDir, makeApiKey, makeTopics, onCleanup, printResult, printTable, request, round, rssMb,
  runBench, seedKnowledge, startServer, summarize, tempDir, verdict,
} from './lib.mjs';

const CHUNKS = 10_000;
const RUNS = Math.min(Math.max(Number(process.env.BENCH_GENERATIONS) || 200, 20), 1000);
const WARMUP = 15;
const FAKE_MODEL = 'llama3.2:latest';

/** A fake Ollama server: instant answers, and the time spent on each chat request. */
async function startFakeOllama() {
  const chats = [];
  let counter = 0;
  const server = http.createServer((req, res) => {
    const started = performance.now();
    const parts = [];
    req.on('data', (part) => parts.push(part));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/api/tags') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ models: [{ name: FAKE_MODEL, model: FAKE_MODEL, modified_at: new Date().toISOString(), size: 1, digest: 'bench', details: {} }] }));
        return;
      }
      if (req.method === 'POST' && req.url === '/api/chat') {
        const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
        const n = ++counter;
        const post = {
          title: `Fake model post ${n}: ${body.messages?.at(-1)?.content?.split('\n')[0]?.slice(24, 80) ?? 'topic'}`,
          description: 'A post written by the fake model of the benchmark.',
          category: 'Technology',
          tags: ['bench', 'fake', `n${n % 10}`],
          content: `## Introduction\n\n${'The fake model answers at once with a fixed body of text. '.repeat(40)}\n\n## Conclusion\n\nDone.`,
        };
        const now = new Date().toISOString();
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.write(`${JSON.stringify({ model: body.model, created_at: now, message: { role: 'assistant', content: JSON.stringify(post) }, done: false })}\n`);
        res.end(
          `${JSON.stringify({ model: body.model, created_at: now, message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', total_duration: 1, load_duration: 0, prompt_eval_count: 1, prompt_eval_duration: 0, eval_count: 1, eval_duration: 0 })}\n`,
        );
        res.on('finish', () => chats.push({ ms: performance.now() - started, promptChars: body.messages?.reduce((s, m) => s + m.content.length, 0) ?? 0, stream: body.stream, model: body.model }));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'not found' }));
    });
  });
  const port = await freePort();
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const close = () => new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });
  onCleanup(close);
  return { url: `http://127.0.0.1:${port}`, chats, close };
}

await runBench('bench/generation', async () => {
  const dataDir = tempDir();
  const apiKey = makeApiKey();

  let t0 = performance.now();
  const data = await initDataDir(dataDir, apiKey);
  const { siteId } = data;
  const seeded = seedKnowledge(data.sqlite, siteId, { chunks: CHUNKS });
  const seedMs = performance.now() - t0;
  console.log(`seeded ${seeded.chunks} chunks (avg ${seeded.avgChunkChars} chars) in ${round(seedMs / 1000, 1)} s`);
  const topics = makeTopics(seeded.gen, RUNS + WARMUP);

  // ---- in process: retrieval and composition alone ---------------------------------------------
  // The app's search store, as KnowledgeService.search calls it.
  const searchKnowledge = (siteId, query, options) => data.app.stores.knowledge.search.search(siteId, query, options);
  const { BuiltinGenerator } = await dist('src/generation/builtin/index.js');
  const { GENERATION_DEFAULTS, GROUNDING_PASSAGES } = await dist('src/generation/grounded.js');
  const builtin = new BuiltinGenerator();
  const compose = (topic, passages) => builtin.generate({ topic, ...GENERATION_DEFAULTS, targetAudience: null, passages, model: null });
  for (const topic of topics.slice(0, WARMUP)) await compose(topic, await searchKnowledge(siteId, topic, { limit: GROUNDING_PASSAGES }));
  const inProcess = [];
  for (const topic of topics.slice(WARMUP)) {
    const t = performance.now();
    const passages = await searchKnowledge(siteId, topic, { limit: GROUNDING_PASSAGES });
    const t2 = performance.now();
    const { post } = await compose(topic, passages);
    inProcess.push({ searchMs: t2 - t, composeMs: performance.now() - t2, passages: passages.length, contentChars: post.content.length });
  }
  await data.close();

  // ---- 1. builtin over HTTP -------------------------------------------------------------------
  // Sequential requests; `fake` (when given) attributes the fake Ollama's chat time to each one.
  const generateAll = async (api, label, server, fake = null) => {
    const rows = [];
    const errors = {};
    let failures = 0;
    for (const [i, topic] of topics.entries()) {
      const chatsBefore = fake?.chats.length ?? 0;
      const res = await api.post('/api/v1/posts/generate', { topic }, { timeoutMs: 30_000 });
      const chats = fake ? fake.chats.slice(chatsBefore) : [];
      if (res.status !== 201) {
        failures++;
        const key = `${res.status} ${res.text.slice(0, 160)}`.replace(/"requestId":"[^"]+"/, '"requestId":"..."');
        errors[key] = (errors[key] ?? 0) + 1;
        // A provider path that never works is reported, not retried 200 times.
        if (failures >= 10 && rows.length === 0) break;
        if (failures > 20) throw new Error(`${label} generate keeps failing: ${key}\nserver log:\n${server.logTail().slice(-3000)}`);
        continue;
      }
      if (i < WARMUP) continue;
      rows.push({ ms: res.ms, fakeMs: chats.reduce((sum, c) => sum + c.ms, 0), chats: chats.length, promptChars: chats[0]?.promptChars ?? null });
    }
    return { rows, failures, errors };
  };
  const healthLatency = async (server) => {
    const ms = [];
    for (let i = 0; i < 100; i++) ms.push((await request(server.baseUrl, 'GET', '/health')).ms);
    return summarize(ms, 2);
  };

  t0 = performance.now();
  let server = await startServer({ dataDir, apiKey, env: { GENERATOR: 'builtin' } });
  console.log(`builtin server pid ${server.pid} ready in ${round(performance.now() - t0, 0)} ms`);
  let api = apiClient(server, apiKey);
  const builtinRun = await generateAll(api, 'builtin', server);
  if (builtinRun.failures) throw new Error(`builtin generate failed: ${JSON.stringify(builtinRun.errors)}`);
  const builtinHealth = await healthLatency(server);
  const builtinRss = rssMb(server.pid);
  const builtinWarnings = server.warnings();
  await server.stop();
  const builtinStats = summarize(builtinRun.rows.map((r) => r.ms), 2);
  console.log(`builtin: p50 ${builtinStats.p50} ms, p95 ${builtinStats.p95} ms, mean ${builtinStats.mean} ms over ${builtinStats.n}`);

  // ---- 2. ollama (fake, instant) over HTTP ----------------------------------------------------
  const fake = await startFakeOllama();
  server = await startServer({ dataDir, apiKey, env: { GENERATOR: 'ollama', OLLAMA_HOST: fake.url, OLLAMA_MODEL: 'llama3.2' } });
  console.log(`ollama server pid ${server.pid} ready, fake Ollama at ${fake.url}`);
  api = apiClient(server, apiKey);
  const ollamaRun = await generateAll(api, 'ollama', server, fake);
  const ollamaHealth = await healthLatency(server);
  const ollamaWarnings = server.warnings();
  const ollamaLogTail = server.logTail();
  await server.stop();
  const ollamaHttpWorks = ollamaRun.rows.length > 0;
  const ollamaStats = summarize(ollamaRun.rows.map((r) => r.ms), 2);
  const fakeHttpStats = summarize(ollamaRun.rows.map((r) => r.fakeMs), 3);
  const overheadStats = summarize(ollamaRun.rows.map((r) => r.ms - r.fakeMs), 2);
  if (ollamaHttpWorks) {
    console.log(`ollama (fake) over HTTP: p50 ${ollamaStats.p50} ms, p95 ${ollamaStats.p95} ms; fake time p50 ${fakeHttpStats.p50} ms; ${ollamaRun.failures} failures`);
  } else {
    const firstError = /"msg":"request failed"[^\n]*|"message":"([^"]+)"/.exec(ollamaLogTail);
    console.log(`ollama (fake) over HTTP: EVERY request failed: ${JSON.stringify(ollamaRun.errors)}`);
    console.log(`  server log: ${(/"err":\{"type":"\w+","message":"[^"]+"/.exec(ollamaLogTail) ?? firstError ?? [''])[0]}`);
  }

  // ---- 2b. the same provider path in process: what the route does, minus Fastify and HTTP ------
  // writeGroundedPost (search + prompt + Ollama client call + parse) and PostService.create, as
  // the generate route's PostWriter does them, with the services of the app built in this
  // process in GENERATOR=ollama mode (its own GeneratorService) against the same fake server.
  const { writeGroundedPost } = await dist('src/generation/grounded.js');
  const ollamaApp = await buildApp(dataDir, {
    env: { GENERATOR: 'ollama', OLLAMA_HOST: fake.url, OLLAMA_MODEL: 'llama3.2', GENERATION_TIMEOUT_MS: '120000' },
  });
  const { knowledge, generator, posts } = ollamaApp.app;
  const inProcessOllama = [];
  for (const [i, topic] of topics.entries()) {
    const chatsBefore = fake.chats.length;
    const t = performance.now();
    const { result } = await writeGroundedPost({ knowledge, generator }, siteId, { topic });
    await posts.create(siteId, { ...result.post, isDraft: true }, { generatorProvider: result.provider, generatorModel: result.model });
    const ms = performance.now() - t;
    if (i < WARMUP) continue;
    const fakeMs = fake.chats.slice(chatsBefore).reduce((sum, c) => sum + c.ms, 0);
    inProcessOllama.push({ ms, fakeMs });
  }
  await ollamaApp.close();
  await fake.close();
  const inProcOllamaStats = summarize(inProcessOllama.map((r) => r.ms), 2);
  const inProcOverheadStats = summarize(inProcessOllama.map((r) => r.ms - r.fakeMs), 2);
  const inProcFakeStats = summarize(inProcessOllama.map((r) => r.fakeMs), 3);
  const chats = fake.chats;

  // ---- report ------------------------------------------------------------------------------
  const search = summarize(inProcess.map((r) => r.searchMs), 2);
  const composeStats = summarize(inProcess.map((r) => r.composeMs), 2);
  const searchPlusCompose = summarize(inProcess.map((r) => r.searchMs + r.composeMs), 2);
  printTable(`Generate one post, ${seeded.chunks.toLocaleString('en-US')} chunks, ${RUNS} sequential requests with varied topics (ms)`, [
    { measure: 'builtin, POST /generate (HTTP)', n: builtinStats.n, mean: builtinStats.mean, p50: builtinStats.p50, p95: builtinStats.p95, max: builtinStats.max, 'vs 50 ms (p95)': round(builtinStats.p95 / 50, 2) },
    { measure: '  in process: searchKnowledge', n: search.n, mean: search.mean, p50: search.p50, p95: search.p95, max: search.max },
    { measure: '  in process: builtin compose', n: composeStats.n, mean: composeStats.mean, p50: composeStats.p50, p95: composeStats.p95, max: composeStats.max },
    { measure: '  in process: search + compose', n: searchPlusCompose.n, mean: searchPlusCompose.mean, p50: searchPlusCompose.p50, p95: searchPlusCompose.p95, max: searchPlusCompose.max },
    ollamaHttpWorks
      ? { measure: 'ollama (fake), POST /generate (HTTP)', n: ollamaStats.n, mean: ollamaStats.mean, p50: ollamaStats.p50, p95: ollamaStats.p95, max: ollamaStats.max }
      : { measure: `ollama (fake), POST /generate: ${ollamaRun.failures} of ${ollamaRun.failures} FAILED`, n: 0 },
    { measure: '  fake Ollama time (HTTP runs)', n: fakeHttpStats.n, mean: fakeHttpStats.mean, p50: fakeHttpStats.p50, p95: fakeHttpStats.p95, max: fakeHttpStats.max },
    { measure: '  service overhead, HTTP (latency - fake)', n: overheadStats.n, mean: overheadStats.mean, p50: overheadStats.p50, p95: overheadStats.p95, max: overheadStats.max },
    { measure: 'ollama (fake), in process: grounded+insert', n: inProcOllamaStats.n, mean: inProcOllamaStats.mean, p50: inProcOllamaStats.p50, p95: inProcOllamaStats.p95, max: inProcOllamaStats.max },
    { measure: '  fake Ollama time (in-process runs)', n: inProcFakeStats.n, mean: inProcFakeStats.mean, p50: inProcFakeStats.p50, p95: inProcFakeStats.p95, max: inProcFakeStats.max },
    { measure: '  service overhead, in process', n: inProcOverheadStats.n, mean: inProcOverheadStats.mean, p50: inProcOverheadStats.p50, p95: inProcOverheadStats.p95, max: inProcOverheadStats.max },
    { measure: 'GET /health (same client, builtin srv)', n: builtinHealth.n, mean: builtinHealth.mean, p50: builtinHealth.p50, p95: builtinHealth.p95, max: builtinHealth.max },
  ]);
  const passagesAvg = round(inProcess.reduce((s, r) => s + r.passages, 0) / inProcess.length, 1);
  console.log(`\npassages per generation (in process): avg ${passagesAvg}; builtin content ${Math.round(inProcess.reduce((s, r) => s + r.contentChars, 0) / inProcess.length)} chars avg; prompt to fake Ollama ${Math.round(chats.reduce((s, c) => s + c.promptChars, 0) / Math.max(1, chats.length))} chars avg`);
  console.log(`share of builtin p50 spent in searchKnowledge (in process): ${round((100 * search.p50) / builtinStats.p50, 0)}%; in-process Ollama overhead p50 minus search p50: ${round(inProcOverheadStats.p50 - search.p50, 2)} ms`);
  if (!ollamaHttpWorks) console.log(`POST /api/v1/posts/generate with GENERATOR=ollama failed every time over real HTTP: ${JSON.stringify(ollamaRun.errors)}`);
  console.log(`server warn/error log lines: builtin ${builtinWarnings.warn}/${builtinWarnings.error}, ollama ${ollamaWarnings.warn}/${ollamaWarnings.error}; builtin server RSS ${builtinRss} MB`);
  printTable('Targets', [
    { check: 'builtin generate p50', target: '< 50 ms', measured: builtinStats.p50, verdict: verdict(builtinStats.p50 < 50) },
    { check: 'builtin generate p95', target: '< 50 ms', measured: builtinStats.p95, verdict: verdict(builtinStats.p95 < 50) },
    { check: 'ollama generate over HTTP works', target: '201', measured: ollamaHttpWorks ? '201' : `${ollamaRun.failures} failures`, verdict: verdict(ollamaHttpWorks) },
  ]);

  printResult('generation', {
    chunks: seeded.chunks,
    runs: RUNS,
    warmup: WARMUP,
    seedSec: round(seedMs / 1000, 2),
    builtin: { http: builtinStats, failures: builtinRun.failures, inProcess: { search, compose: composeStats, searchPlusCompose, passagesAvg }, healthHttp: builtinHealth, rssMb: builtinRss },
    ollamaFake: {
      httpWorks: ollamaHttpWorks,
      http: ollamaStats,
      httpFailures: ollamaRun.failures,
      httpErrors: ollamaRun.errors,
      fakeChatHttp: fakeHttpStats,
      overheadHttp: overheadStats,
      inProcess: inProcOllamaStats,
      fakeChatInProcess: inProcFakeStats,
      overheadInProcess: inProcOverheadStats,
      chats: chats.length,
      healthHttp: ollamaHealth,
    },
    serverLog: { builtin: builtinWarnings, ollama: ollamaWarnings },
    targets: {
      ollamaHttpWorks: { target: 'POST /generate answers 201 with GENERATOR=ollama', value: ollamaHttpWorks, ok: ollamaHttpWorks },
      builtinP50: { target: '< 50 ms', value: builtinStats.p50, ok: builtinStats.p50 < 50 },
      builtinP95: { target: '< 50 ms', value: builtinStats.p95, ok: builtinStats.p95 < 50 },
    },
  });
});
