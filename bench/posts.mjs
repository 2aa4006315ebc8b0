// npm run bench: HTTP throughput and latency of the posts API on a site with 10,000 posts.
//
// Seeds a temporary data folder with 10,000 posts, starts the built server on it, then drives it
// with autocannon over loopback (50 connections, BENCH_DURATION s per route, default 8):
// GET /health, GET one post (rotating ids), GET a list page (varying page), POST a post
// (distinct titles), and GET /health again to see drift on this noisy machine.
// Targets: GET one post >= 0.7x /health req/s, POST >= 0.4x, no error responses, RSS < 200 MB.

import {
  apiClient, cannon, cpuSeconds, initDataDir, makeApiKey, peakRssMb, printResult, printTable, ratio, round, rssMb, runBench,
  seedPosts, startServer, tempDir, textGenerator, verdict,
} from './lib.mjs';
import { performance } from 'node:perf_hooks';

const POSTS = 10_000;
const CONNECTIONS = 50;
const DURATION = Math.min(Math.max(Number(process.env.BENCH_DURATION) || 8, 2), 20);

await runBench('bench/posts', async () => {
  const dataDir = tempDir();
  const apiKey = makeApiKey();

  let t0 = performance.now();
  const data = await initDataDir(dataDir, apiKey);
  const { siteId } = data;
  const ids = seedPosts(data.sqlite, siteId, POSTS);
  await data.close();
  const seedMs = performance.now() - t0;
  console.log(`seeded ${ids.length} posts in ${round(seedMs / 1000, 1)} s`);

  t0 = performance.now();
  const server = await startServer({ dataDir, apiKey });
  console.log(`server pid ${server.pid} ready on ${server.baseUrl} in ${round(performance.now() - t0, 0)} ms (RSS ${rssMb(server.pid)} MB)`);
  const api = apiClient(server, apiKey);

  // Sanity checks: the routes answer what the benchmark expects before it measures them.
  const one = await api.get(`/api/v1/posts/${ids[0]}`);
  if (one.status !== 200 || one.json().data.post.id !== ids[0]) throw new Error(`GET one post: ${one.status} ${one.text.slice(0, 300)}`);
  const list = await api.get('/api/v1/posts?page=3&limit=20');
  const listed = list.json().data;
  if (list.status !== 200 || listed.posts.length !== 20 || listed.pagination.total !== POSTS) {
    throw new Error(`GET list: ${list.status} ${list.text.slice(0, 300)}`);
  }
  const created = await api.post('/api/v1/posts', { title: 'Sanity check post', content: '# Hello' });
  if (created.status !== 201) throw new Error(`POST: ${created.status} ${created.text.slice(0, 300)}`);

  // Rotate among 500 posts spread over the table; pages 1..500 of 20 cover all 10,000.
  const rotation = Array.from({ length: 500 }, (_, i) => ids[(i * 7919) % ids.length]);
  let getIndex = 0;
  let pageIndex = 0;
  let titleCounter = 0;
  const gen = textGenerator(99, 3000);
  const bodies = Array.from({ length: 64 }, () => ({
    words: `${gen.content()} ${gen.content()}`,
    content: `## ${gen.titleCase(gen.content())}\n\n${gen.text(1500)}`,
    description: gen.sentence(),
  }));

  const routes = [
    { title: 'GET /health', path: '/health' },
    {
      title: 'GET /api/v1/posts/:id',
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/posts/${rotation[getIndex++ % rotation.length]}` }) }],
    },
    {
      title: 'GET /api/v1/posts?page=N&limit=20',
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/posts?page=${1 + ((pageIndex++ * 37) % 500)}&limit=20` }) }],
    },
    {
      title: 'POST /api/v1/posts',
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: api.auth.authorization },
          setupRequest: (req) => {
            const n = titleCounter++;
            const b = bodies[n % bodies.length];
            return {
              ...req,
              path: '/api/v1/posts',
              body: JSON.stringify({ title: `${b.words} bench ${n}`, description: b.description, content: b.content, tags: ['bench', `t${n % 10}`], category: 'Bench' }),
            };
          },
        },
      ],
    },
    { title: 'GET /health (again)', path: '/health' },
  ];

  // Warm-up (JIT, SQLite page cache), not reported.
  await cannon({ server, apiKey, title: 'warm-up', path: '/health', connections: CONNECTIONS, duration: 1 });
  await cannon({ server, apiKey, title: 'warm-up', path: `/api/v1/posts/${ids[1]}`, connections: 10, duration: 2 });

  const results = [];
  for (const route of routes) {
    const cpuBefore = cpuSeconds(server.pid);
    const result = await cannon({ server, apiKey, title: route.title, path: route.path, requests: route.requests, connections: CONNECTIONS, duration: DURATION });
    const cpu = cpuSeconds(server.pid) - cpuBefore;
    // Server CPU per request is less sensitive to this noisy machine than req/s.
    result.serverCpuPct = round((100 * cpu) / result.seconds, 0);
    result.serverCpuUsPerReq = result.requests ? round((cpu * 1e6) / result.requests, 0) : null;
    results.push(result);
    console.log(`${route.title.padEnd(36)} ${String(result.rps).padStart(7)} req/s  p99 ${result.p99Ms} ms  non2xx ${result.non2xx}  errors ${result.errors}  server CPU ${result.serverCpuPct}% (${result.serverCpuUsPerReq} us/req)`);
  }
  const rssAfter = rssMb(server.pid);
  const rssPeak = peakRssMb(server.pid);
  const countAfter = (await api.get('/api/v1/posts?limit=1&status=all')).json().data.pagination.total;
  const warnings = server.warnings();
  const stopped = await server.stop();

  const [health1, getOne, listPage, postOne, health2] = results;
  const healthRps = (health1.rps + health2.rps) / 2;
  const failures = results.reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0);
  const targets = {
    getOneRatio: { target: '>= 0.7x /health', value: ratio(getOne.rps, healthRps), ok: ratio(getOne.rps, healthRps) >= 0.7 },
    postRatio: { target: '>= 0.4x /health', value: ratio(postOne.rps, healthRps), ok: ratio(postOne.rps, healthRps) >= 0.4 },
    noErrors: { target: '0 non-2xx/errors', value: failures, ok: failures === 0 },
    rss: { target: '< 200 MB', value: rssAfter, ok: rssAfter !== null && rssAfter < 200 },
  };

  printTable(
    `Posts API, ${POSTS.toLocaleString('en-US')} seeded posts, ${CONNECTIONS} connections, ${DURATION} s per route (loopback, ${process.env.npm_config_user_agent ? 'npm' : 'node'})`,
    results.map((r) => ({
      route: r.title,
      'req/s': r.rps,
      'x /health': ratio(r.rps, healthRps),
      'p50 ms': r.p50Ms,
      'p99 ms': r.p99Ms,
      'max ms': r.maxMs,
      requests: r.requests,
      'srv CPU %': r.serverCpuPct,
      'srv us/req': r.serverCpuUsPerReq,
      non2xx: r.non2xx,
      errors: r.errors + r.timeouts,
    })),
  );
  printTable(
    'Targets',
    Object.entries(targets).map(([name, t]) => ({ check: name, target: t.target, measured: t.value, verdict: verdict(t.ok) })),
  );
  console.log(`\n/health req/s used for ratios: ${round(healthRps, 0)} (mean of first ${health1.rps} and last ${health2.rps})`);
  console.log(`server RSS after run ${rssAfter} MB (peak ${rssPeak} MB); posts after run: ${countAfter}; server warn/error log lines: ${warnings.warn}/${warnings.error}; stop: ${stopped.graceful ? 'graceful' : 'SIGKILL'}`);

  printResult('posts', {
    posts: POSTS,
    connections: CONNECTIONS,
    durationSec: DURATION,
    seedSec: round(seedMs / 1000, 2),
    healthRps: round(healthRps, 0),
    routes: results,
    ratios: { getOne: ratio(getOne.rps, healthRps), list: ratio(listPage.rps, healthRps), post: ratio(postOne.rps, healthRps) },
    failures,
    rssAfterMb: rssAfter,
    rssPeakMb: rssPeak,
    postsAfter: countAfter,
    serverLog: warnings,
    targets: Object.fromEntries(Object.entries(targets).map(([k, t]) => [k, { ...t }])),
  });
});
