// npm run bench: the posts API measured side by side with a bare "stack limit" baseline
// (bench/baseline.mjs: Fastify 5 + better-sqlite3 in WAL, a SHA-256-hashed Bearer key looked up
// in SQLite on every request, GET /posts/:id, GET /posts (a page by offset) and POST /posts
// with a JSON schema, 10,000 seeded
// posts of about 800 characters), both started in the same run on this machine.
//
// The service's data folder is seeded with raw SQL before it starts (posts of about 800
// characters, like the baseline's; the per-site counts recomputed after), on three sites:
//   A  10,000 posts with distinct titles: GET one post, a list page (20 of 10,000), POST;
//   B  10,000 posts titled "same-title" (slugs same-title, same-title-2, ...): POST the same
//      title again, at 10,000 existing collisions;
//   C  100,000 posts titled "same-title": a list page (20 of 100,000), POST the same title at
//      100,000 collisions.
// Every run is autocannon, 50 connections, BENCH_DURATION s (default 10) over loopback. Each
// route is measured A/B alternately (service, baseline, ...; the order reversed every other
// round) and reported as medians of the rounds: 3 rounds, 2 for the 100,000-post cases and 1
// for /health to keep the whole run near 5 minutes. Reads run before any write, so the lists
// are of exactly 10,000 and 100,000 posts; list pages rotate over pages 1-500 (the newest
// 10,000 posts) at both sizes, so the two differ only in the site's size; a one-request-at-a-
// time probe prints a page's latency by depth (pages 1, 250, 500, and 5,000 of 100,000), each
// read after a write so that no kept page answers: deep pages start from remembered anchors,
// so depth should not matter. The baseline's list page (plain offset, the same rotation) and
// both servers' page 1 alone give the stack's own list-versus-one-post ratio.
// The service keeps list pages and single posts per content version of the site
// (src/posts/json-cache.ts): in the rotations above (500 posts, 500 pages), with no write
// between them, what the first round read is kept for the next ones.
// "A list page after a write" alternates a PUT (toggling one post) with each list read, so
// every page is read and encoded anew: a page's full cost.
//
// Targets (issue 11): GET one post >= 0.8x the baseline with p99 <= 10 ms; POST >= 0.7x the
// baseline; POST with one repeated title >= 0.9x POST with distinct titles at 10,000 and at
// 100,000 collisions; a list page >= 0.5x GET one post; no error responses.

import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import {
  alternated, apiClient, initDataDir, makeApiKey, measure, median, peakRssMb, printResult, printTable, ratio, round, rssMb,
  runBench, seedPosts, sleep, startBaseline, startServer, tempDir, textGenerator, verdict,
} from './lib.mjs';

const POSTS = 10_000;
const LARGE = 100_000;
const CONTENT_CHARS = 800;
const REPEATED_TITLE = 'same-title';
const CONNECTIONS = 50;
const DURATION = Math.min(Math.max(Number(process.env.BENCH_DURATION) || 10, 1), 30);
const ROUNDS = 3;
const ROUNDS_LARGE = 2;
const ROUNDS_HEALTH = 1;
const LIST_PAGES = 500;

// Health 2 runs, reads 18, writes 9, the 100,000-post cases and lists after writes 4 per round; plus seeding.
const plannedRuns = 2 * ROUNDS_HEALTH + 18 + 9 + 4 * ROUNDS_LARGE;

await runBench(
  'bench/posts',
  async () => {
    console.log(
      `plan: ${plannedRuns} runs of ${DURATION} s (~${Math.round((plannedRuns * (DURATION + 0.5)) / 60 * 10) / 10} min of load) + seeding; ` +
        `${ROUNDS} A/B rounds per route, ${ROUNDS_LARGE} for the ${LARGE.toLocaleString('en-US')}-post cases, ${ROUNDS_HEALTH} for /health`,
    );
    const dataDir = tempDir();
    const baselineDir = tempDir('blog-bench-baseline-');
    const apiKey = makeApiKey();
    const baselineKey = makeApiKey();

    // --- Seeding ------------------------------------------------------------------------------
    let t0 = performance.now();
    const data = await initDataDir(dataDir, apiKey);
    const siteA = data.siteId;
    const siteB = await data.app.sites.create('Bench Repeats 10k');
    const siteC = await data.app.sites.create('Bench Repeats 100k');
    const idsA = seedPosts(data.sqlite, siteA, POSTS, { contentChars: CONTENT_CHARS, exactChars: true });
    seedPosts(data.sqlite, siteB.site.id, POSTS, { contentChars: CONTENT_CHARS, exactChars: true, title: REPEATED_TITLE, seed: 12 });
    seedPosts(data.sqlite, siteC.site.id, LARGE, { contentChars: CONTENT_CHARS, exactChars: true, title: REPEATED_TITLE, seed: 13 });
    const hasCounts = Boolean(data.sqlite.prepare("select 1 from sqlite_master where type = 'table' and name = 'post_counts'").get());
    const hasCounters = Boolean(data.sqlite.prepare("select 1 from sqlite_master where type = 'table' and name = 'slug_counters'").get());
    const avgChars = data.sqlite.prepare('select round(avg(length(content))) from posts').pluck().get();
    await data.close();
    const seedMs = performance.now() - t0;
    console.log(
      `seeded ${(POSTS * 2 + LARGE).toLocaleString('en-US')} posts (site A ${POSTS} distinct titles, B ${POSTS} and C ${LARGE} titled "${REPEATED_TITLE}"; ` +
        `content ${avgChars} characters on average) in ${round(seedMs / 1000, 1)} s; post_counts ${hasCounts ? 'recounted' : 'absent'}, ` +
        `slug_counters ${hasCounters ? 'present (left to the service)' : 'absent'}`,
    );

    // --- Servers ------------------------------------------------------------------------------
    t0 = performance.now();
    const [service, baseline] = await Promise.all([
      startServer({ dataDir, apiKey }),
      startBaseline({ dbFile: path.join(baselineDir, 'baseline.db'), apiKey: baselineKey, posts: POSTS, contentChars: CONTENT_CHARS }),
    ]);
    console.log(
      `service pid ${service.pid} on ${service.baseUrl}, baseline pid ${baseline.pid} on ${baseline.baseUrl}, ready in ${round(performance.now() - t0, 0)} ms ` +
        `(RSS ${rssMb(service.pid)} / ${rssMb(baseline.pid)} MB)`,
    );
    const apiA = apiClient(service, apiKey);
    const apiB = apiClient(service, siteB.key);
    const apiC = apiClient(service, siteC.key);
    const base = apiClient(baseline, baselineKey);
    const baselineIds = (() => {
      const db = new Database(path.join(baselineDir, 'baseline.db'), { readonly: true });
      try {
        return db.prepare('select id from posts order by rowid').pluck().all();
      } finally {
        db.close();
      }
    })();

    // --- Sanity checks: each route answers what the benchmark expects before it is measured ---
    const check = (what, ok, response) => {
      if (!ok) throw new Error(`${what}: ${response.status} ${response.text.slice(0, 400)}`);
    };
    const one = await apiA.get(`/api/v1/posts/${idsA[0]}`);
    check('service GET one post', one.status === 200 && one.json().data.post.id === idsA[0], one);
    const baseOne = await base.get(`/posts/${baselineIds[0]}`);
    check('baseline GET one post', baseOne.status === 200 && baseOne.json().id === baselineIds[0], baseOne);
    const total = async (api) => {
      const response = await api.get('/api/v1/posts?limit=1&status=all');
      check('service list total', response.status === 200, response);
      return response.json().data.pagination.total;
    };
    for (const [name, api, expected] of [['A', apiA, POSTS], ['B', apiB, POSTS], ['C', apiC, LARGE]]) {
      const list = await api.get('/api/v1/posts?page=3&limit=20');
      const listed = list.status === 200 ? list.json().data : null;
      check(`service list of site ${name} (expected 20 posts of ${expected})`, listed?.posts.length === 20 && listed.pagination.total === expected, list);
    }
    console.log(
      `GET one post: service ${one.text.length} bytes, baseline ${baseOne.text.length} bytes; list pages show the seeded totals (${POSTS}, ${POSTS}, ${LARGE})`,
    );

    // --- Workloads ----------------------------------------------------------------------------
    const gen = textGenerator(99, 3000);
    const bodies = Array.from({ length: 64 }, () => ({ words: `${gen.content()} ${gen.content()}`, content: `## ${gen.titleCase(gen.content())}\n\n${gen.textOf(CONTENT_CHARS - 40)}` }));
    let counter = 0;
    const postBody = (title) => {
      const n = counter++;
      const b = bodies[n % bodies.length];
      return JSON.stringify({ title: title ?? `${b.words} bench ${n}`, content: b.content, tags: ['bench', `t${n % 10}`] });
    };
    const rotate = (ids) => {
      // 500 posts spread over the table.
      const rotation = Array.from({ length: 500 }, (_, i) => ids[(i * 7919) % ids.length]);
      let i = 0;
      return () => rotation[i++ % rotation.length];
    };
    const nextA = rotate(idsA);
    const nextBase = rotate(baselineIds);
    let pageIndex = 0;
    const nextPage = () => 1 + ((pageIndex++ * 37) % LIST_PAGES);

    const get = (pathOf) => [{ method: 'GET', setupRequest: (req) => ({ ...req, path: pathOf() }) }];
    const post = (urlPath, key, title) => [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        setupRequest: (req) => ({ ...req, path: urlPath, body: postBody(title) }),
      },
    ];
    const W = {
      healthService: { route: 'GET /health', who: 'service', server: service, path: '/health' },
      healthBaseline: { route: 'GET /health', who: 'baseline', server: baseline, path: '/health' },
      getService: { route: 'GET one post', who: 'service', server: service, key: apiKey, requests: get(() => `/api/v1/posts/${nextA()}`) },
      getBaseline: { route: 'GET one post', who: 'baseline', server: baseline, key: baselineKey, requests: get(() => `/posts/${nextBase()}`) },
      list10k: { route: `GET a list page (20 of ${POSTS.toLocaleString('en-US')})`, who: 'service', server: service, key: apiKey, requests: get(() => `/api/v1/posts?page=${nextPage()}&limit=20`) },
      listBaseline: { route: `GET a list page (20 of ${POSTS.toLocaleString('en-US')})`, who: 'baseline', server: baseline, key: baselineKey, requests: get(() => `/posts?page=${nextPage()}&limit=20`) },
      list10kFirst: { route: `GET list page 1 (20 of ${POSTS.toLocaleString('en-US')})`, who: 'service', server: service, key: apiKey, path: '/api/v1/posts?page=1&limit=20' },
      listBaselineFirst: { route: `GET list page 1 (20 of ${POSTS.toLocaleString('en-US')})`, who: 'baseline', server: baseline, key: baselineKey, path: '/posts?page=1&limit=20' },
      // Every list read after a write (a PUT toggling one post's draft state, which moves the
      // site's content version): the pages kept per version never serve, so this is a page's full cost.
      list10kAfterWrite: {
        route: `GET a list page after a write (20 of ${POSTS.toLocaleString('en-US')}; half the requests are the PUTs)`,
        who: 'service',
        server: service,
        key: apiKey,
        requests: [{ method: 'PUT', setupRequest: (req) => ({ ...req, path: `/api/v1/posts/${idsA[0]}` }) }, ...get(() => `/api/v1/posts?page=${nextPage()}&limit=20`)],
      },
      list100k: { route: `GET a list page (20 of ${LARGE.toLocaleString('en-US')})`, who: 'service', server: service, key: siteC.key, requests: get(() => `/api/v1/posts?page=${nextPage()}&limit=20`) },
      postService: { route: 'POST a post, distinct titles', who: 'service', server: service, requests: post('/api/v1/posts', apiKey) },
      postBaseline: { route: 'POST a post, distinct titles', who: 'baseline', server: baseline, requests: post('/posts', baselineKey) },
      same10k: { route: `POST the same title (${POSTS.toLocaleString('en-US')} collisions)`, who: 'service', server: service, requests: post('/api/v1/posts', siteB.key, REPEATED_TITLE), collisions: apiB },
      postService2: { route: 'POST a post, distinct titles (beside 100k)', who: 'service', server: service, requests: post('/api/v1/posts', apiKey) },
      same100k: { route: `POST the same title (${LARGE.toLocaleString('en-US')} collisions)`, who: 'service', server: service, requests: post('/api/v1/posts', siteC.key, REPEATED_TITLE), collisions: apiC },
    };
    const runs = Object.fromEntries(Object.keys(W).map((k) => [k, []]));

    const run = async (name, { duration = DURATION, connections = CONNECTIONS, quiet = false } = {}) => {
      const w = W[name];
      // A moment for the previous run's last answers (and a WAL checkpoint) to drain.
      await sleep(300);
      const collisionsBefore = w.collisions ? await total(w.collisions) : null;
      const result = await measure(w, { title: `${w.route} [${w.who}]`, connections, duration });
      if (w.collisions) result.collisions = [collisionsBefore, await total(w.collisions)];
      if (quiet) return result;
      runs[name].push(result);
      console.log(
        `  ${`${w.route} [${w.who}]`.padEnd(58)} ${String(result.rps).padStart(7)} req/s  p99 ${String(result.p99Ms).padStart(4)} ms  ` +
          `srv ${result.serverCpuUsPerReq} us/req  non2xx ${result.non2xx}  errors ${result.errors + result.timeouts}` +
          (result.collisions ? `  posts titled "${REPEATED_TITLE}": ${result.collisions[0]} -> ${result.collisions[1]}` : ''),
      );
      return result;
    };
    /** `rounds` rounds over `names`, the order reversed every other round (A B C, C B A, ...). */
    const alternate = async (title, names, rounds) => {
      console.log(`\n${title}`);
      for (const name of alternated(names, rounds)) await run(name);
    };

    // Warm-up (JIT, SQLite page cache), not reported.
    for (const name of ['healthService', 'healthBaseline']) await run(name, { duration: 1, quiet: true });
    for (const name of ['getService', 'getBaseline']) await run(name, { duration: 2, connections: 10, quiet: true });
    await run('list10k', { duration: 1, quiet: true });
    await run('listBaseline', { duration: 1, quiet: true });
    await run('listBaselineFirst', { duration: 1, quiet: true });

    // Reads first: no write has touched the sites yet.
    await alternate(`GET /health, ${ROUNDS_HEALTH} round(s)`, ['healthService', 'healthBaseline'], ROUNDS_HEALTH);
    await alternate(`GET one post and a list page of ${POSTS.toLocaleString('en-US')}, ${ROUNDS} rounds`, ['getService', 'getBaseline', 'list10k', 'listBaseline', 'list10kFirst', 'listBaselineFirst'], ROUNDS);
    await alternate(`A list page of ${POSTS.toLocaleString('en-US')} after a write each (toggles leave the totals as they were), ${ROUNDS_LARGE} rounds`, ['list10kAfterWrite'], ROUNDS_LARGE);
    await run('list100k', { duration: 1, quiet: true });
    // A list page's time by depth, not kept (a post of the site toggled before each read moves
    // its content version): deep pages start from anchors, found again after each write.
    const depth = {};
    for (const [name, api, pages] of [['10k', apiA, [1, 250, 500]], ['100k', apiC, [1, 250, 500, 5000]]]) {
      depth[name] = {};
      const toggled = (await api.get('/api/v1/posts?page=1&limit=1&status=all')).json().data.posts[0].id;
      for (const page of pages) {
        const times = [];
        for (let i = 0; i < 40; i++) {
          check('toggle before a list read', (await api.put(`/api/v1/posts/${toggled}`)).status === 200, { status: 'PUT', text: toggled });
          times.push((await api.get(`/api/v1/posts?page=${page}&limit=20`)).ms);
        }
        depth[name][page] = round(median(times), 2);
      }
    }
    console.log(
      `\nlist page latency by depth, one request at a time (median ms): ${Object.entries(depth)
        .map(([name, pages]) => `${name}: ${Object.entries(pages).map(([page, ms]) => `page ${page} ${ms}`).join(', ')}`)
        .join('; ')}`,
    );
    await alternate(`A list page of ${LARGE.toLocaleString('en-US')}, ${ROUNDS_LARGE} rounds (fewer, to keep the run short)`, ['list100k'], ROUNDS_LARGE);

    // Writes. The first POST of the repeated title on a site may count its collisions once.
    const created = await apiA.post('/api/v1/posts', { title: 'Sanity check post', content: '# Hello', tags: ['bench'] });
    check('service POST', created.status === 201, created);
    const baseCreated = await base.post('/posts', { title: 'Sanity check post', content: '# Hello', tags: ['bench'] });
    check('baseline POST', baseCreated.status === 201 && baseCreated.json().title === 'Sanity check post', baseCreated);
    const firstSlugs = {};
    for (const [name, api] of [['B', apiB], ['C', apiC]]) {
      const t = performance.now();
      const response = await api.post('/api/v1/posts', { title: REPEATED_TITLE, content: '# Again', tags: ['bench'] });
      check(`service POST of "${REPEATED_TITLE}" on site ${name}`, response.status === 201 && response.json().data.post.slug.startsWith(`${REPEATED_TITLE}-`), response);
      firstSlugs[name] = `${response.json().data.post.slug} in ${round(performance.now() - t, 1)} ms`;
    }
    console.log(`\nfirst POST of "${REPEATED_TITLE}": site B -> ${firstSlugs.B}, site C -> ${firstSlugs.C}`);
    for (const name of ['postService', 'postBaseline', 'same10k']) await run(name, { duration: 1, quiet: true });
    await alternate(`POST, distinct titles and one repeated title (${POSTS.toLocaleString('en-US')} collisions), ${ROUNDS} rounds`, ['postService', 'postBaseline', 'same10k'], ROUNDS);
    await alternate(
      `POST, one repeated title (${LARGE.toLocaleString('en-US')} collisions) and distinct titles, ${ROUNDS_LARGE} rounds (fewer, to keep the run short)`,
      ['same100k', 'postService2'],
      ROUNDS_LARGE,
    );

    const rssService = rssMb(service.pid);
    const rssServicePeak = peakRssMb(service.pid);
    const rssBaseline = rssMb(baseline.pid);
    const warnings = service.warnings();
    const [stopped] = await Promise.all([service.stop(), baseline.stop()]);

    // --- Report -------------------------------------------------------------------------------
    const med = (name, field = 'rps') => median(runs[name].map((r) => r[field]));
    const m = Object.fromEntries(Object.keys(W).map((k) => [k, { rps: med(k), p99: med(k, 'p99Ms'), cpu: med(k, 'serverCpuUsPerReq') }]));
    const baselineOf = {
      healthService: 'healthBaseline', getService: 'getBaseline', list10k: 'listBaseline', list10kFirst: 'listBaselineFirst', postService: 'postBaseline', same10k: 'postBaseline', same100k: 'postBaseline',
      postService2: 'postBaseline',
    };
    const failures = Object.values(runs).flat().reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0);
    printTable(
      `Posts API beside the baseline: ${CONNECTIONS} connections, ${DURATION} s per run, medians of the rounds (loopback)`,
      Object.keys(W).map((k) => ({
        route: W[k].route,
        server: W[k].who,
        rounds: runs[k].length,
        'req/s': round(m[k].rps, 0),
        'p99 ms': m[k].p99,
        'x baseline': baselineOf[k] ? ratio(m[k].rps, m[baselineOf[k]].rps, 2) : null,
        // After a write: half the requests are the writes.
        'x GET one': k.startsWith('list') ? ratio(m[k].rps / (k === 'list10kAfterWrite' ? 2 : 1), m[W[k].who === 'baseline' ? 'getBaseline' : 'getService'].rps, 2) : null,
        'x distinct': k === 'same10k' ? ratio(m[k].rps, m.postService.rps, 2) : k === 'same100k' ? ratio(m[k].rps, m.postService2.rps, 2) : null,
        'srv us/req': m[k].cpu,
        'req/s per round': runs[k].map((r) => r.rps).join(' '),
        'non2xx+err': runs[k].reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0),
      })),
    );

    const ratios = {
      getVsBaseline: ratio(m.getService.rps, m.getBaseline.rps),
      postVsBaseline: ratio(m.postService.rps, m.postBaseline.rps),
      same10kVsDistinct: ratio(m.same10k.rps, m.postService.rps),
      same100kVsDistinct: ratio(m.same100k.rps, m.postService2.rps),
      list10kVsGet: ratio(m.list10k.rps, m.getService.rps),
      list100kVsGet: ratio(m.list100k.rps, m.getService.rps),
      baselineListVsGet: ratio(m.listBaseline.rps, m.getBaseline.rps),
      firstPageVsGet: ratio(m.list10kFirst.rps, m.getService.rps),
      baselineFirstPageVsGet: ratio(m.listBaselineFirst.rps, m.getBaseline.rps),
      listVsBaselineList: ratio(m.list10k.rps, m.listBaseline.rps),
      listAfterWriteVsGet: ratio(m.list10kAfterWrite.rps / 2, m.getService.rps),
      listAfterWriteVsBaselineList: ratio(m.list10kAfterWrite.rps / 2, m.listBaseline.rps),
    };
    const target = (value, ok, text) => ({ target: text, measured: value, verdict: verdict(value === null ? null : ok) });
    const targets = {
      'GET one post vs baseline': target(ratios.getVsBaseline, ratios.getVsBaseline >= 0.8, '>= 0.8'),
      'GET one post p99 (ms)': target(m.getService.p99, m.getService.p99 <= 10, '<= 10'),
      'POST vs baseline': target(ratios.postVsBaseline, ratios.postVsBaseline >= 0.7, '>= 0.7'),
      [`POST same title vs distinct, ${POSTS / 1000}k collisions`]: target(ratios.same10kVsDistinct, ratios.same10kVsDistinct >= 0.9, '>= 0.9'),
      [`POST same title vs distinct, ${LARGE / 1000}k collisions`]: target(ratios.same100kVsDistinct, ratios.same100kVsDistinct >= 0.9, '>= 0.9'),
      [`list page (${POSTS / 1000}k) vs GET one post`]: target(ratios.list10kVsGet, ratios.list10kVsGet >= 0.5, '>= 0.5'),
      [`list page (${LARGE / 1000}k) vs GET one post`]: target(ratios.list100kVsGet, ratios.list100kVsGet >= 0.5, '>= 0.5'),
      'for reference: list page 1 vs GET one post': target(ratios.firstPageVsGet, null, '-'),
      'for reference: a list page after a write (not kept) vs GET one post': target(ratios.listAfterWriteVsGet, null, '-'),
      'for reference: a list page after a write vs the baseline\'s list page': target(ratios.listAfterWriteVsBaselineList, null, '-'),
      'for reference: the baseline\'s own list page vs its GET one post': target(ratios.baselineListVsGet, null, '(the stack limit)'),
      'for reference: the baseline\'s own page 1 vs its GET one post': target(ratios.baselineFirstPageVsGet, null, '(the stack limit)'),
      'error responses': target(failures, failures === 0, '0'),
    };
    printTable('Targets (issue 11)', Object.entries(targets).map(([check, t]) => ({ check, ...t })));
    const collisionsOf = (k) => runs[k].map((r) => r.collisions.join('->')).join(', ');
    console.log(
      `\nThe ${LARGE.toLocaleString('en-US')}-post cases ran ${ROUNDS_LARGE} rounds and /health ${ROUNDS_HEALTH}, the others ${ROUNDS}, to keep the run short. ` +
        `"same title ... vs distinct" at ${LARGE / 1000}k compares with the distinct-title runs alternated with it; list ratios use the GET one post median.`,
    );
    console.log(`posts titled "${REPEATED_TITLE}" before -> after each run: site B ${collisionsOf('same10k')}; site C ${collisionsOf('same100k')}`);
    console.log(
      `service RSS after run ${rssService} MB (peak ${rssServicePeak} MB), baseline ${rssBaseline} MB; service warn/error log lines: ${warnings.warn}/${warnings.error}; ` +
        `stop: ${stopped.graceful ? 'graceful' : 'SIGKILL'}`,
    );

    printResult('posts', {
      posts: POSTS,
      largePosts: LARGE,
      contentChars: avgChars,
      connections: CONNECTIONS,
      durationSec: DURATION,
      rounds: { default: ROUNDS, large: ROUNDS_LARGE, health: ROUNDS_HEALTH },
      seedSec: round(seedMs / 1000, 2),
      medians: m,
      ratios,
      listLatencyByDepthMs: depth,
      runs,
      failures,
      rssServiceMb: rssService,
      rssServicePeakMb: rssServicePeak,
      rssBaselineMb: rssBaseline,
      serverLog: warnings,
      targets,
    });
  },
  { timeLimitMs: (150 + (plannedRuns + 6) * (DURATION + 1)) * 1000 },
);
