// npm run bench:site: throughput and latency of the public site beside the JSON API, on a site
// with 10,000 published posts.
//
// Creates a temporary data folder (migrations, the site and its API key, by building the app in
// this process the way the server's first start does), gives the site a description, then
// inserts 10,000 published public posts (~800 characters of Markdown, 2-3 tags, a category)
// straight into DATA_DIR/blog.db with better-sqlite3, and starts the built server on it.
// Each URL is requested once to warm it (the first view of a post renders its Markdown, the
// first view of a page renders and caches it), then autocannon (50 connections, BENCH_DURATION
// s a run, default 3) measures, against the JSON GET /api/v1/posts/:id of the same post, in
// A/B pairs alternated 3 times (order swapped every other round, so drift hits both sides):
//   the post page, the index page, RSS, the sitemap (all 10,000 posts), and a 304 revalidation
//   of the post page (If-None-Match: its ETag).
// Figures are medians of the 3 runs; "x JSON" is the median of the per-pair ratios.
// Targets (from the issue): post and index pages >= 1x JSON GET, RSS >= 0.5x, p99 < 15 ms,
// 304 faster than the full post page.
// Other work on this machine (and autocannon itself, in this process) skews absolute figures:
// compare ratios, and the server's CPU time per request (srv us/req).

import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import {
  buildApp, cannon, cpuSeconds, makeApiKey, printResult, printTable, ratio, recountPosts, request, round, rssMb, runBench, startServer, tempDir,
  textGenerator, verdict,
} from './lib.mjs';

const POSTS = 10_000;
const CONNECTIONS = 50;
const ROUNDS = 3;
const DURATION = Math.min(Math.max(Number(process.env.BENCH_DURATION) || 3, 1), 10);
const SITE_DESCRIPTION = 'Notes, guides and field reports from the bench site.';

const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!sorted.length) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * A fresh data folder with its migrations and one site keyed by `apiKey` (the app built in
 * this process with BOOTSTRAP_API_KEY, as the server's first start does), given a description.
 * Returns the site's id and handle; the app is closed before returning.
 */
async function initSite(dataDir, apiKey) {
  const { app, close } = await buildApp(dataDir, { env: { BOOTSTRAP_API_KEY: apiKey, SITE_NAME: 'Bench Site' } });
  try {
    const headers = { authorization: `Bearer ${apiKey}` };
    const patched = await app.inject({ method: 'PATCH', url: '/api/v1/site', headers, payload: { description: SITE_DESCRIPTION } });
    if (patched.statusCode !== 200) throw new Error(`PATCH /api/v1/site: ${patched.statusCode} ${patched.body.slice(0, 300)}`);
    const { site } = patched.json().data;
    return { siteId: site.id, handle: site.handle };
  } finally {
    await close();
  }
}

const TAGS = [
  'JavaScript', 'TypeScript', 'Node.js', 'SQLite', 'Performance', 'Testing', 'DevOps', 'Security', 'Design', 'Accessibility',
  'CSS', 'HTML', 'Databases', 'Caching', 'Networking', 'Linux', 'Tooling', 'Writing', 'Career', 'Open Source',
  'Cooking', 'Travel', 'Photography', 'Gardening', 'Running', 'Books', 'Music', 'Coffee', 'Science', 'History',
];
const CATEGORIES = ['Technology', 'Food & Drink', 'Travel', 'Business', 'Science', 'Education', 'Health & Fitness', 'Home & Garden'];

/**
 * Inserts `count` published public posts of about 800 characters of Markdown (a subheading,
 * paragraphs with emphasis, code and a link, a short list) in one transaction, straight into
 * the posts table (html and reading_time left null, as the API leaves them), then recounts the
 * site's posts (recountPosts). The site's content version stays as it was. Returns [{ id, slug }], oldest first.
 */
function seedPosts(dbFile, siteId, count) {
  const gen = textGenerator(23, 3000);
  const sqlite = new Database(dbFile);
  try {
    sqlite.pragma('busy_timeout = 5000');
    const insert = sqlite.prepare(
      `insert into posts (id, site_id, slug, title, description, content, category, tags, author_id, is_draft, visibility,
         published_at, generator_provider, generator_model, source_task_id, html, reading_time, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, null, 0, 'public', ?, null, null, null, null, null, ?, ?)`,
    );
    const posts = [];
    const base = Date.now() - (count + 10) * 60_000;
    sqlite.transaction(() => {
      for (let i = 0; i < count; i++) {
        const id = randomUUID();
        const title = `${gen.titleCase(`${gen.content()} ${gen.content()} ${gen.content()}`)} ${i + 1}`;
        const slug = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 80);
        let content = `${gen.paragraph(220)}\n\n## ${gen.titleCase(`${gen.content()} ${gen.content()}`)}\n\n`;
        content += `${gen.sentence()} Use **${gen.content()}** with \`${gen.content()}()\` as the [guide](https://example.com/${gen.content()}) shows. ${gen.paragraph(120)}\n\n`;
        content += `- ${gen.sentence()}\n- ${gen.sentence()}\n- ${gen.sentence()}\n\n`;
        while (content.length < 760) content += `${gen.sentence()} `;
        content = content.slice(0, 840).trimEnd();
        const tagCount = 2 + (i % 2);
        const tags = Array.from({ length: tagCount }, (_, t) => TAGS[(i * 7 + t * 11) % TAGS.length]);
        const at = base + i * 60_000;
        insert.run(id, siteId, slug, title, gen.sentence(), content, CATEGORIES[i % CATEGORIES.length], JSON.stringify(tags), at, at, at);
        posts.push({ id, slug, contentChars: content.length });
      }
    })();
    // The service keeps per-site counts on its writes; these inserts bypassed it.
    recountPosts(sqlite);
    return posts;
  } finally {
    sqlite.close();
  }
}

await runBench('bench/site', async () => {
  const dataDir = tempDir();
  const apiKey = makeApiKey();

  let t0 = performance.now();
  const { siteId, handle } = await initSite(dataDir, apiKey);
  const posts = seedPosts(path.join(dataDir, 'blog.db'), siteId, POSTS);
  const seedMs = performance.now() - t0;
  const avgChars = Math.round(posts.reduce((sum, p) => sum + p.contentChars, 0) / posts.length);
  console.log(`seeded ${posts.length} published posts (~${avgChars} characters of Markdown each) in ${round(seedMs / 1000, 1)} s`);

  t0 = performance.now();
  const server = await startServer({ dataDir, apiKey });
  console.log(`server pid ${server.pid} ready on ${server.baseUrl} in ${round(performance.now() - t0, 0)} ms (RSS ${rssMb(server.pid)} MB)`);
  const auth = { authorization: `Bearer ${apiKey}` };
  const get = (urlPath, headers = {}) => request(server.baseUrl, 'GET', urlPath, { headers });

  // The handle as the API shows it, and the seeded posts as the API counts them.
  const siteInfo = await get('/api/v1/site', auth);
  if (siteInfo.status !== 200 || siteInfo.json().data.site.handle !== handle) throw new Error(`GET /api/v1/site: ${siteInfo.status} ${siteInfo.text.slice(0, 300)}`);
  const counted = (await get('/api/v1/posts?limit=1', auth)).json().data.pagination.total;
  if (counted !== POSTS) throw new Error(`the API counts ${counted} posts, expected ${POSTS}`);

  const post = posts[Math.floor(POSTS / 2)];
  const base = `/sites/${handle}`;
  const json = { key: 'json', title: 'GET /api/v1/posts/:id (JSON)', path: `/api/v1/posts/${post.id}`, headers: auth, status: 200, type: /^application\/json/ };
  const targets = [
    { key: 'post', title: 'post page /<slug>/', path: `${base}/${post.slug}/`, status: 200, type: /^text\/html/ },
    { key: 'index', title: 'index page /', path: `${base}/`, status: 200, type: /^text\/html/ },
    { key: 'rss', title: 'RSS /rss.xml', path: `${base}/rss.xml`, status: 200, type: /^application\/rss\+xml/ },
    { key: 'sitemap', title: 'sitemap /sitemap.xml', path: `${base}/sitemap.xml`, status: 200, type: /^application\/xml/ },
    { key: 'notModified', title: '304 post page (If-None-Match)', path: `${base}/${post.slug}/`, status: 304, type: null },
  ];

  // Warm each URL once, checking it answers what is measured.
  for (const route of [json, ...targets.filter((t) => t.key !== 'notModified')]) {
    const res = await get(route.path, route.headers);
    if (res.status !== route.status || !route.type.test(res.headers['content-type'] ?? '')) {
      throw new Error(`${route.title}: ${res.status} ${res.headers['content-type']} ${res.text.slice(0, 300)}`);
    }
    route.bytes = Buffer.byteLength(res.text);
    route.firstMs = round(res.ms, 1);
    if (route.key === 'json' && res.json().data.post.id !== post.id) throw new Error('GET /api/v1/posts/:id answered another post');
    if (route.key === 'post') {
      if (!res.headers.etag) throw new Error('the post page has no ETag');
      targets.find((t) => t.key === 'notModified').headers = { 'if-none-match': res.headers.etag };
    }
    // The home page and every post.
    const listedUrls = route.key === 'sitemap' ? (res.text.match(/<loc>/g) ?? []).length : null;
    if (listedUrls !== null && listedUrls !== POSTS + 1) throw new Error(`the sitemap lists ${listedUrls} URLs for ${POSTS} posts`);
  }
  const revalidation = targets.find((t) => t.key === 'notModified');
  const revalidated = await get(revalidation.path, revalidation.headers);
  if (revalidated.status !== 304) throw new Error(`If-None-Match on the post page: ${revalidated.status}, expected 304`);
  revalidation.bytes = 0;
  revalidation.firstMs = round(revalidated.ms, 1);
  console.log(`site /sites/${handle}/, post ${post.slug}; first (uncached) requests: ${[json, ...targets].map((r) => `${r.key} ${r.firstMs} ms`).join(', ')}`);

  // A short JIT warm-up under load, not reported.
  for (const route of [json, ...targets]) await cannon({ server, title: 'warm-up', path: route.path, headers: route.headers, connections: CONNECTIONS, duration: 1 });

  const measure = async (route) => {
    const cpuBefore = cpuSeconds(server.pid);
    const r = await cannon({ server, title: route.title, path: route.path, headers: route.headers, connections: CONNECTIONS, duration: DURATION });
    const cpu = cpuSeconds(server.pid) - cpuBefore;
    const expected = r.statusCodes[route.status] ?? 0;
    return { ...r, srvUsPerReq: r.requests ? round((cpu * 1e6) / r.requests, 0) : null, unexpected: r.requests - expected + r.errors + r.timeouts };
  };

  // A/B pairs: JSON beside each target, three rounds, the order swapped in the middle round.
  const runs = Object.fromEntries(targets.map((t) => [t.key, { a: [], b: [] }]));
  for (let roundNo = 0; roundNo < ROUNDS; roundNo++) {
    for (const target of targets) {
      const pair = {};
      for (const side of roundNo % 2 === 0 ? ['a', 'b'] : ['b', 'a']) pair[side] = await measure(side === 'a' ? json : target);
      runs[target.key].a.push(pair.a);
      runs[target.key].b.push(pair.b);
      console.log(
        `round ${roundNo + 1}  ${target.title.padEnd(30)} ${String(pair.b.rps).padStart(6)} req/s p99 ${pair.b.p99Ms} ms` +
          `  | JSON ${String(pair.a.rps).padStart(6)} req/s p99 ${pair.a.p99Ms} ms  | x ${ratio(pair.b.rps, pair.a.rps, 2)}`,
      );
    }
  }

  const rssAfter = rssMb(server.pid);
  const warnings = server.warnings();
  const stopped = await server.stop();

  const summarizeRuns = (list) => ({
    rps: round(median(list.map((r) => r.rps)), 0),
    p50Ms: median(list.map((r) => r.p50Ms)),
    p99Ms: median(list.map((r) => r.p99Ms)),
    srvUsPerReq: median(list.map((r) => r.srvUsPerReq)),
    unexpected: list.reduce((sum, r) => sum + r.unexpected, 0),
    requests: list.reduce((sum, r) => sum + r.requests, 0),
  });
  const allJson = Object.values(runs).flatMap((r) => r.a);
  const rows = [{ route: json.title, bytes: json.bytes, ...summarizeRuns(allJson), xJson: 1 }];
  const figures = { json: rows[0] };
  for (const target of targets) {
    const { a, b } = runs[target.key];
    const row = { route: target.title, bytes: target.bytes, ...summarizeRuns(b), xJson: round(median(b.map((r, i) => r.rps / a[i].rps)), 2), jsonRps: round(median(a.map((r) => r.rps)), 0) };
    rows.push(row);
    figures[target.key] = row;
  }

  printTable(
    `Public site vs JSON API, ${POSTS.toLocaleString('en-US')} published posts, ${CONNECTIONS} connections, ${DURATION} s a run, median of ${ROUNDS} A/B pairs`,
    rows.map((r) => ({
      route: r.route,
      'req/s': r.rps,
      'x JSON': r.xJson,
      'p50 ms': r.p50Ms,
      'p99 ms': r.p99Ms,
      'srv us/req': r.srvUsPerReq,
      'body bytes': r.bytes,
      'requests (all runs)': r.requests,
      'bad status/errors': r.unexpected,
    })),
  );

  const failures = rows.reduce((sum, r) => sum + r.unexpected, 0);
  const p99Routes = ['post', 'index', 'rss', 'notModified'];
  const worstP99 = Math.max(...p99Routes.map((k) => figures[k].p99Ms));
  const checks = [
    { check: 'post page >= 1x JSON GET', measured: figures.post.xJson, ok: figures.post.xJson >= 1 },
    { check: 'index page >= 1x JSON GET', measured: figures.index.xJson, ok: figures.index.xJson >= 1 },
    { check: 'RSS >= 0.5x JSON GET', measured: figures.rss.xJson, ok: figures.rss.xJson >= 0.5 },
    { check: 'p99 < 15 ms (post, index, RSS, 304)', measured: worstP99, ok: worstP99 < 15 },
    { check: '304 req/s > post page req/s', measured: `${figures.notModified.rps} vs ${figures.post.rps}`, ok: figures.notModified.rps > figures.post.rps },
    { check: 'no bad status or errors', measured: failures, ok: failures === 0 },
  ];
  printTable('Targets', checks.map((c) => ({ ...c, verdict: verdict(c.ok) })), ['check', 'measured', 'verdict']);
  console.log(`\nsitemap (${POSTS} URLs, ${figures.sitemap.bytes} bytes): ${figures.sitemap.rps} req/s, p99 ${figures.sitemap.p99Ms} ms (no target; shown for scale)`);
  console.log(`server RSS after run ${rssAfter} MB; server warn/error log lines: ${warnings.warn}/${warnings.error}; stop: ${stopped.graceful ? 'graceful' : 'SIGKILL'}`);

  printResult('site', {
    posts: POSTS,
    connections: CONNECTIONS,
    durationSec: DURATION,
    rounds: ROUNDS,
    seedSec: round(seedMs / 1000, 2),
    routes: figures,
    failures,
    rssAfterMb: rssAfter,
    serverLog: warnings,
    targets: Object.fromEntries(checks.map((c) => [c.check, { measured: c.measured, ok: c.ok }])),
  });
});
