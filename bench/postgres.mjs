// npm run bench:postgres: the service on PostgreSQL beside the service on SQLite, in the same run.
//
// PostgreSQL: a throwaway PostgreSQL 15 cluster started here (bench/postgres-cluster.mjs: initdb
// in a temporary folder, a free port, durability settings at PostgreSQL's defaults), or the
// server at BENCH_DATABASE_URL (databases created on it and dropped at the end).
//
// Data: one SQLite data folder is seeded with raw SQL (10,000 posts of about 800 characters, and
// BENCH_CHUNKS knowledge chunks, default 10,000, of about 900 characters in 20 files), then
// copied row for row into an empty PostgreSQL database by the service's own migration
// (blog-admin migrate-to-postgres), then VACUUM ANALYZE (statistics and the search index's
// pending list as autovacuum leaves them): both servers hold the same site, key, posts and chunks.
//
// (1) HTTP, two servers (dist/src/server.js): one on the SQLite folder, one with DATABASE_URL
//     and its own DATA_DIR. autocannon, BENCH_CONNECTIONS connections (default 20), BENCH_DURATION
//     s per run (default 5), A/B alternated rounds (SQLite, PostgreSQL; reversed every other
//     round), medians of 3: GET one post, GET a list page (20 of 10,000), knowledge search
//     (GET /api/v1/knowledge/search, limit 10, keyword, rare-word and natural-language queries),
//     then POST a post (distinct titles). Between reads and writes, one request at a time: a
//     list page's latency at pages 1, 250 and 500 (offset pagination), and search latency by
//     kind of query (20 of each). On the cluster started here, POST is also measured
//     with synchronous_commit=off (set with ALTER SYSTEM between runs), PostgreSQL's nearest
//     match of SQLite's synchronous=NORMAL (a commit does not wait for its log to reach disk).
// Then how soon a write on one instance shows on another (instances keep posts and pages per
//     content version, told by LISTEN/NOTIFY and checked by a shared fence: src/db/pg-content-versions.ts):
//     when a committed version change's notification reaches a listening connection against when
//     its writer heard the commit answered, and 100 PATCHes on one instance each followed at once
//     by a GET of the post on the other (stale answers counted; the expectation is none).
// (2) Claim lag: 1,000 generate-post tasks due at once (10 POST /api/v1/posts/batch of 100, no
//     dates), builtin generator, JOB_POLL_MS=250 and JOB_CONCURRENCY=2 on every instance: on
//     SQLite (one instance), on PostgreSQL with one instance, then with two instances on the
//     same database (a second server process, its own DATA_DIR and port; batches submitted
//     through both). From the job rows: lag from due to claim (startedAt - scheduledFor)
//     p50/p95, first claim -> last finish, submit -> last finish, and that every task ran once
//     (one attempt each, one post per task).
// CPU time per request is shown for the service (its process) and, on the cluster started here,
// for PostgreSQL (all its processes): on PostgreSQL part of the work moves out of the service.
//
// About 5 minutes on 2 busy cores. Settings: BENCH_DURATION, BENCH_CONNECTIONS, BENCH_CHUNKS,
// BENCH_DATABASE_URL, PG_BIN.
//
// A part that cannot run (PostgreSQL's job loop or search not wired in this build, say) prints
// "skipped: <why>" and the rest goes on. Run after `npm run build` (npm run bench:postgres does).

import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import pg from 'pg';
import { benchPostgres, query } from './postgres-cluster.mjs';
import {
  alternated, apiClient, cpuSeconds, dist, initDataDir, makeApiKey, makeQueries, makeTopics, measure, median, onCleanup, printResult,
  printTable, ratio, request, round, rssMb, runBench, seedKnowledge, seedPosts, sleep, startServer, submitBatches, summarize, taskTimings,
  tempDir, textGenerator, waitForTasks,
} from './lib.mjs';

const POSTS = 10_000;
const CONTENT_CHARS = 800;
const CHUNKS = Math.min(Math.max(Number(process.env.BENCH_CHUNKS) || 10_000, 100), 100_000);
const CONNECTIONS = Math.min(Math.max(Number(process.env.BENCH_CONNECTIONS) || 20, 1), 200);
const DURATION = Math.min(Math.max(Number(process.env.BENCH_DURATION) || 5, 1), 30);
const ROUNDS = 3;
const LIST_PAGES = 500;
const SEARCH_LIMIT = 10;
const TASKS = 1000;
const PER_BATCH = 100;
const POLL_MS = 250;
const CONCURRENCY = 2;
const TASK_WAIT_MS = 150_000; // bound on waiting for one run of tasks

const JOB_ENV = { GENERATOR: 'builtin', JOB_POLL_MS: String(POLL_MS), JOB_CONCURRENCY: String(CONCURRENCY), JOB_LEASE_MS: '60000', JOB_MAX_ATTEMPTS: '3' };
const BACKENDS = ['sqlite', 'postgres'];
const LABEL = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

// Reads 3 routes x 2 backends, writes 2 or 3 workloads, 3 rounds each, plus warm-ups; seeding; 3 task runs.
const plannedRuns = ROUNDS * (6 + 3) + 8;

await runBench(
  'bench/postgres',
  async () => {
    console.log(
      `plan: ${plannedRuns} autocannon runs of ${DURATION} s (~${round((plannedRuns * (DURATION + 0.5)) / 60, 1)} min), ${CONNECTIONS} connections; ` +
        `${ROUNDS} A/B rounds per route; then 3 runs of ${TASKS} tasks (each bounded by ${TASK_WAIT_MS / 1000} s)`,
    );
    const skipped = {};
    /** Runs one part; on failure prints "skipped: <why>" and goes on. */
    const part = async (name, fn) => {
      try {
        return await fn();
      } catch (error) {
        const why = error?.message?.split('\n')[0] ?? String(error);
        skipped[name] = why;
        console.log(`\nskipped: ${name}: ${why}`);
        if (process.env.BENCH_DEBUG) console.error(error);
        return null;
      }
    };

    // --- PostgreSQL ---------------------------------------------------------------------------
    let t0 = performance.now();
    const server = await benchPostgres();
    console.log(`${server.describe}, ready in ${round((performance.now() - t0) / 1000, 1)} s`);
    const httpUrl = await server.createDatabase('bench_http');

    // --- Seeding: SQLite with raw SQL, then copied into PostgreSQL by the service's migration ---
    const liteDir = tempDir('blog-bench-sqlite-');
    const pgDir = tempDir('blog-bench-pg-a-');
    const pgDir2 = tempDir('blog-bench-pg-b-');
    const apiKey = makeApiKey();
    t0 = performance.now();
    const data = await initDataDir(liteDir, apiKey);
    const siteId = data.siteId;
    const postIds = seedPosts(data.sqlite, siteId, POSTS, { contentChars: CONTENT_CHARS, exactChars: true });
    const seeded = seedKnowledge(data.sqlite, siteId, { chunks: CHUNKS });
    const avgChars = data.sqlite.prepare('select round(avg(length(content))) from posts').pluck().get();
    await data.close();
    const seedMs = performance.now() - t0;
    console.log(`seeded SQLite: ${POSTS} posts (${avgChars} characters on average), ${seeded.chunks} chunks (${seeded.avgChunkChars} characters) in ${round(seedMs / 1000, 1)} s`);
    t0 = performance.now();
    const { loadConfig } = await dist('src/config.js');
    const { migrateToPostgres } = await dist('src/admin/migrate.js');
    const migration = await migrateToPostgres(loadConfig({ DATA_DIR: liteDir, LOG_LEVEL: 'silent' }), { to: httpUrl });
    const migrateMs = performance.now() - t0;
    const copied = Object.fromEntries(migration.tables.filter((x) => x.postgres).map((x) => [x.table, x.postgres]));
    console.log(`copied into PostgreSQL in ${round(migrateMs / 1000, 1)} s: ${Object.entries(copied).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    // Freshly copied tables have no statistics, and the chunks' GIN index holds them all in its
    // pending list, until autovacuum gets to them (a minute or more): until then a list page sorts
    // the site's every post on disk instead of walking the list index, and a search reads every
    // chunk instead of the index. Measured here is the steady state autovacuum leads to.
    t0 = performance.now();
    await query(httpUrl, 'VACUUM ANALYZE');
    console.log(`VACUUM ANALYZE in ${round(performance.now() - t0, 0)} ms`);

    // The bench's own connection to the PostgreSQL database (job rows, settings), closed before the cluster stops.
    const pool = new pg.Pool({ connectionString: httpUrl, max: 2 });
    onCleanup(() => pool.end());

    // --- Servers ------------------------------------------------------------------------------
    t0 = performance.now();
    const [lite, pgA] = await Promise.all([
      startServer({ dataDir: liteDir, apiKey, env: JOB_ENV }),
      startServer({ dataDir: pgDir, apiKey, env: { ...JOB_ENV, DATABASE_URL: httpUrl } }),
    ]);
    const servers = { sqlite: lite, postgres: pgA };
    const api = { sqlite: apiClient(lite, apiKey), postgres: apiClient(pgA, apiKey) };
    console.log(`SQLite server pid ${lite.pid}, PostgreSQL server pid ${pgA.pid}, ready in ${round(performance.now() - t0, 0)} ms (RSS ${rssMb(lite.pid)} / ${rssMb(pgA.pid)} MB)`);

    // --- Sanity checks: both servers answer the same data ------------------------------------
    const check = (what, ok, response) => {
      if (!ok) throw new Error(`${what}: ${response.status} ${response.text.slice(0, 400)}`);
    };
    for (const db of BACKENDS) {
      const one = await api[db].get(`/api/v1/posts/${postIds[0]}`);
      check(`${LABEL[db]}: GET one post`, one.status === 200 && one.json().data.post.id === postIds[0], one);
      const list = await api[db].get('/api/v1/posts?page=3&limit=20');
      check(`${LABEL[db]}: a list page of ${POSTS}`, list.status === 200 && list.json().data.posts.length === 20 && list.json().data.pagination.total === POSTS, list);
    }

    // --- Workloads ----------------------------------------------------------------------------
    const queries = makeQueries(seeded.gen, 300);
    const gen = textGenerator(99, 3000);
    const bodies = Array.from({ length: 64 }, () => ({ words: `${gen.content()} ${gen.content()}`, content: `## ${gen.titleCase(gen.content())}\n\n${gen.textOf(CONTENT_CHARS - 40)}` }));
    // Each workload walks its own copy of the same sequence, so both databases see the same requests.
    const sequence = (items) => {
      let i = 0;
      return () => items[i++ % items.length];
    };
    const idRotation = Array.from({ length: 500 }, (_, i) => postIds[(i * 7919) % postIds.length]);
    const pageRotation = Array.from({ length: LIST_PAGES }, (_, i) => 1 + ((i * 37) % LIST_PAGES));
    const searchRotation = queries.map(({ q }) => `/api/v1/knowledge/search?q=${encodeURIComponent(q)}&limit=${SEARCH_LIMIT}`);
    const get = (pathOf) => [{ method: 'GET', setupRequest: (req) => ({ ...req, path: pathOf() }) }];
    let posted = 0;
    const post = () => [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        setupRequest: (req) => {
          const n = posted++;
          const b = bodies[n % bodies.length];
          return { ...req, path: '/api/v1/posts', body: JSON.stringify({ title: `${b.words} bench ${n}`, content: b.content, tags: ['bench', `t${n % 10}`] }) };
        },
      },
    ];
    const routes = {
      get: { route: 'GET one post', requests: () => { const next = sequence(idRotation); return get(() => `/api/v1/posts/${next()}`); } },
      list: { route: `GET a list page (20 of ${POSTS.toLocaleString('en-US')})`, requests: () => { const next = sequence(pageRotation); return get(() => `/api/v1/posts?page=${next()}&limit=20`); } },
      search: { route: `knowledge search (${CHUNKS.toLocaleString('en-US')} chunks, limit ${SEARCH_LIMIT})`, requests: () => get(sequence(searchRotation)) },
      post: { route: 'POST a post (distinct titles)', requests: post },
    };
    const W = {};
    for (const [key, r] of Object.entries(routes)) {
      for (const db of BACKENDS) W[`${key}:${db}`] = { route: r.route, routeKey: key, db, server: servers[db], key: apiKey, requests: r.requests() };
    }
    // POST on PostgreSQL with synchronous_commit=off: only where this process owns the server's settings.
    const setCommit = async (mode) => {
      await query(server.admin, `ALTER SYSTEM SET synchronous_commit = '${mode}'`);
      await query(server.admin, 'SELECT pg_reload_conf()');
      await sleep(200); // backends take the new value at their next command after the reload signal
    };
    if (server.managed) {
      W['post:postgres'].before = () => setCommit('on');
      W['post:postgres-async'] = {
        route: routes.post.route, routeKey: 'post', db: 'postgres-async', label: 'PostgreSQL, synchronous_commit=off', server: pgA, key: apiKey,
        requests: post(), before: () => setCommit('off'),
      };
    }
    const runs = Object.fromEntries(Object.keys(W).map((k) => [k, []]));
    const labelOf = (w) => w.label ?? LABEL[w.db];

    const run = async (name, { duration = DURATION, connections = CONNECTIONS, quiet = false } = {}) => {
      const w = W[name];
      await w.before?.();
      await sleep(300); // the previous run's last answers (and a WAL checkpoint) drain
      const dbCpuBefore = w.db === 'sqlite' ? null : server.cpuSeconds();
      const result = await measure(w, { title: `${w.route} [${labelOf(w)}]`, connections, duration });
      const dbCpuAfter = dbCpuBefore === null ? null : server.cpuSeconds();
      // PostgreSQL's own CPU time per request (its processes; the service's is serverCpuUsPerReq).
      result.dbCpuUsPerReq = dbCpuAfter === null || !result.requests ? null : round(((dbCpuAfter - dbCpuBefore) * 1e6) / result.requests, 0);
      if (quiet) return result;
      runs[name].push(result);
      console.log(
        `  ${`${w.route} [${labelOf(w)}]`.padEnd(70)} ${String(result.rps).padStart(6)} req/s  p99 ${String(result.p99Ms).padStart(4)} ms  ` +
          `CPU us/req: service ${result.serverCpuUsPerReq}${result.dbCpuUsPerReq === null ? '' : `, PostgreSQL ${result.dbCpuUsPerReq}`}  ` +
          `non2xx ${result.non2xx}  errors ${result.errors + result.timeouts}`,
      );
      if (result.non2xx && result.non2xx === result.requests) throw new Error(`${w.route} [${labelOf(w)}]: every answer was an error (${JSON.stringify(result.statusCodes)})`);
      return result;
    };

    // --- (1) HTTP --------------------------------------------------------------------------------
    const readNames = ['get', 'list', 'search'].flatMap((k) => BACKENDS.map((db) => `${k}:${db}`));
    // Search first checked on its own: a build without search on PostgreSQL skips that route only.
    const searchCheck = await part('knowledge search', async () => {
      const counts = {};
      for (const db of BACKENDS) {
        counts[db] = 0;
        for (const path of searchRotation.slice(0, 30)) {
          const res = await api[db].get(path);
          check(`${LABEL[db]}: knowledge search`, res.status === 200, res);
          counts[db] += res.json().data.results.length;
        }
      }
      if (!counts.postgres) throw new Error(`PostgreSQL's search found nothing for 30 queries (SQLite: ${counts.sqlite} results)`);
      return { resultsPerQuery: Object.fromEntries(BACKENDS.map((db) => [db, round(counts[db] / 30, 1)])) };
    });
    if (searchCheck) console.log(`search check, 30 queries, results per query: SQLite ${searchCheck.resultsPerQuery.sqlite}, PostgreSQL ${searchCheck.resultsPerQuery.postgres}`);
    const reads = searchCheck ? readNames : readNames.filter((n) => !n.startsWith('search:'));
    // Search latency by kind of query, one request at a time, after a warm-up pass.
    const searchByKind = !searchCheck
      ? null
      : await part('search latency by kind of query', async () => {
          const sample = ['keywords', 'natural', 'rare'].flatMap((kind) => queries.filter((x) => x.kind === kind).slice(0, 20));
          const byKind = {};
          for (const db of BACKENDS) {
            const get1 = (q) => api[db].get(`/api/v1/knowledge/search?q=${encodeURIComponent(q)}&limit=${SEARCH_LIMIT}`);
            for (const { q } of sample) await get1(q);
            byKind[db] = {};
            for (const kind of ['keywords', 'natural', 'rare']) {
              const times = [];
              for (const { q } of sample.filter((x) => x.kind === kind)) times.push((await get1(q)).ms);
              byKind[db][kind] = summarize(times, 2);
            }
          }
          console.log(
            `search latency, one request at a time, 20 queries of each kind (p50 / p95 ms): ` +
              BACKENDS.map((db) => `${LABEL[db]} ${Object.entries(byKind[db]).map(([kind, st]) => `${kind} ${st.p50} / ${st.p95}`).join(', ')}`).join('; '),
          );
          return byKind;
        });

    await part('HTTP reads', async () => {
      // Warm-up (JIT, page caches, connection pools), not reported.
      for (const name of reads) await run(name, { duration: 1, quiet: true });
      console.log(`\nReads, ${ROUNDS} rounds`);
      for (const name of alternated(reads, ROUNDS)) await run(name);
    });
    // A list page's latency by depth, one request at a time: offset pagination skips `offset` posts.
    const listDepth = await part('list page latency by depth', async () => {
      const depth = {};
      for (const db of BACKENDS) {
        depth[db] = {};
        for (const page of [1, 250, 500]) {
          const times = [];
          for (let i = 0; i < 20; i++) times.push((await api[db].get(`/api/v1/posts?page=${page}&limit=20`)).ms);
          depth[db][page] = round(median(times), 2);
        }
      }
      console.log(
        `\nlist page latency by depth, one request at a time (median of 20, ms): ` +
          BACKENDS.map((db) => `${LABEL[db]} ${Object.entries(depth[db]).map(([page, ms]) => `page ${page} ${ms}`).join(', ')}`).join('; '),
      );
      return depth;
    });
    const writeNames = Object.keys(W).filter((n) => n.startsWith('post:'));
    await part('HTTP writes', async () => {
      for (const name of writeNames) await run(name, { duration: 1, quiet: true });
      console.log(`\nWrites, ${ROUNDS} rounds`);
      for (const name of alternated(writeNames, ROUNDS)) await run(name);
    });
    if (server.managed) await setCommit('on');

    // --- How soon a write on one instance shows on another ("at once") ---------------------------
    // Instances answer kept posts and pages under the content version the database notifies
    // (LISTEN/NOTIFY, PostgreSQL migration 0014): (a) when the notification of a committed
    // version change arrives at a listening connection, against when the writer heard its
    // COMMIT answered (negative: before); (b) a PATCH on one instance then at once a GET of the
    // same post on the other, both ways: how many answers were stale.
    const propagation = await part('propagation of a write to another instance', async () => {
      const listener = new pg.Client({ connectionString: httpUrl });
      const writer = new pg.Client({ connectionString: httpUrl });
      await Promise.all([listener.connect(), writer.connect()]);
      const arrived = new Map();
      listener.on('notification', (m) => arrived.set(m.payload, performance.now()));
      await listener.query('LISTEN blog_content_version');
      const deltas = [];
      for (let i = 0; i < 200; i++) {
        const { rows } = await writer.query('update sites set content_version = content_version + 1 where id = $1 returning content_version', [siteId]);
        const ackAt = performance.now();
        const payload = `${siteId} ${rows[0].content_version}`;
        for (let w = 0; w < 1000 && !arrived.has(payload); w++) await sleep(1);
        if (arrived.has(payload)) deltas.push(arrived.get(payload) - ackAt);
      }
      await Promise.all([listener.end(), writer.end()]);
      const notify = summarize(deltas, 3);
      const pgB = await startServer({ dataDir: pgDir2, apiKey, env: { ...JOB_ENV, DATABASE_URL: httpUrl } });
      let stale = 0;
      let tries = 0;
      try {
        const [a, b] = [pgA, pgB].map((srv) => ({ ...apiClient(srv, apiKey), patch: (urlPath, body) => request(srv.baseUrl, 'PATCH', urlPath, { body, headers: { authorization: `Bearer ${apiKey}` } }) }));
        const id = postIds[1];
        for (let i = 0; i < 100; i++) {
          const [writeOn, readOn] = i % 2 ? [a, b] : [b, a];
          // The reader keeps the post first, so a stale version would answer the kept, older title.
          await readOn.get(`/api/v1/posts/${id}`);
          const title = `Propagation check ${i}`;
          const patched = await writeOn.patch(`/api/v1/posts/${id}`, { title });
          if (patched.status !== 200) throw new Error(`PATCH: ${patched.status} ${patched.text.slice(0, 200)}`);
          const read = await readOn.get(`/api/v1/posts/${id}`);
          tries++;
          if (read.json().data.post.title !== title) stale++;
        }
      } finally {
        await pgB.stop();
      }
      console.log(
        `\nwrite -> other instance: notification after the writer's COMMIT answer p50 ${notify.p50} / p99 ${notify.p99} / max ${notify.max} ms (${deltas.length} of 200 arrived); ` +
          `PATCH on one instance then GET on the other: ${stale} stale of ${tries}`,
      );
      return { notifyAfterCommitMs: notify, arrived: deltas.length, patchThenGet: { tries, stale } };
    });

    // --- (2) Claim lag ---------------------------------------------------------------------------
    const topics = makeTopics(seeded.gen, TASKS);
    const liteReader = new Database(path.join(liteDir, 'blog.db'), { readonly: true, fileMustExist: true });
    onCleanup(() => liteReader.close());
    const JOB_COLUMNS = {
      sqlite: 'status, attempts, scheduled_for as "scheduledFor", started_at as "startedAt", finished_at as "finishedAt"',
      postgres: ['scheduled_for', 'started_at', 'finished_at']
        .map((c) => `(extract(epoch from ${c}) * 1000)::float8 as "${c.replace(/_(\w)/g, (_, x) => x.toUpperCase())}"`)
        .concat(['status', 'attempts'])
        .join(', '),
    };
    const jobRows = async (db, batchIds) => {
      if (db === 'sqlite') {
        const marks = batchIds.map(() => '?').join(', ');
        const rows = liteReader.prepare(`select id, ${JOB_COLUMNS.sqlite} from jobs where kind = 'generate-post' and group_id in (${marks})`).all(...batchIds);
        const posts = liteReader.prepare(`select count(*) as n from posts where source_task_id in (select id from jobs where group_id in (${marks}))`).get(...batchIds).n;
        return { rows, posts };
      }
      const rows = (await pool.query(`select id, ${JOB_COLUMNS.postgres} from jobs where kind = 'generate-post' and group_id = any($1)`, [batchIds])).rows;
      const posts = Number((await pool.query('select count(*) as n from posts where source_task_id in (select id from jobs where group_id = any($1))', [batchIds])).rows[0].n);
      return { rows, posts };
    };

    const lagRuns = [];
    const claimLag = async (label, db, instances) => {
      const apis = instances.map((s) => apiClient(s, apiKey));
      const cpuBefore = instances.map((s) => cpuSeconds(s.pid));
      const dbCpuBefore = db === 'sqlite' ? null : server.cpuSeconds();
      const startedAt = Date.now();
      const since = performance.now();
      const { batchIds, taskIds, submitMs } = await submitBatches(apis, topics, { perBatch: PER_BATCH });
      console.log(`\n${label}: submitted ${taskIds.length} tasks in ${round(submitMs, 0)} ms through ${apis.length} instance(s)`);
      const { finished, remaining } = await waitForTasks(apis[0], { since, limitMs: TASK_WAIT_MS });
      const cpu = instances.map((s, i) => round(cpuSeconds(s.pid) - cpuBefore[i], 1));
      const dbCpu = dbCpuBefore === null ? null : round(server.cpuSeconds() - dbCpuBefore, 1);
      const { rows, posts } = await jobRows(db, batchIds);
      const timing = taskTimings(rows);
      const lag = summarize(timing.lags, 0);
      const attempts = rows.reduce((sum, r) => sum + Number(r.attempts), 0);
      const result = {
        label,
        db,
        instances: instances.length,
        tasks: rows.length,
        byStatus: timing.byStatus,
        finished,
        remaining,
        lagMs: lag,
        runMs: summarize(timing.runMs, 1),
        claimToFinishSec: round(timing.wallSec, 1),
        submitToFinishSec: timing.lastFinish === null ? null : round((timing.lastFinish - startedAt) / 1000, 1),
        tasksPerSec: round(timing.tasksPerSec, 2),
        attempts,
        posts,
        exactlyOnce: (timing.byStatus.succeeded ?? 0) === TASKS && attempts === TASKS && posts === TASKS,
        serverCpuSec: cpu,
        dbCpuSec: dbCpu,
      };
      lagRuns.push(result);
      console.log(
        `${label}: ${JSON.stringify(timing.byStatus)}, lag p50 ${lag.p50} / p95 ${lag.p95} ms, first claim -> last finish ${result.claimToFinishSec} s ` +
          `(${result.tasksPerSec} tasks/s), attempts ${attempts}, posts ${posts}; CPU: service ${cpu.join(' + ')} s${dbCpu === null ? '' : `, PostgreSQL ${dbCpu} s`}`,
      );
      return result;
    };
    await part('claim lag on SQLite', () => claimLag('SQLite, one instance', 'sqlite', [lite]));
    await part('claim lag on PostgreSQL, one instance', () => claimLag('PostgreSQL, one instance', 'postgres', [pgA]));
    await part('claim lag on PostgreSQL, two instances', async () => {
      const pgB = await startServer({ dataDir: pgDir2, apiKey, env: { ...JOB_ENV, DATABASE_URL: httpUrl } });
      console.log(`second PostgreSQL instance pid ${pgB.pid} on ${pgB.baseUrl}`);
      try {
        return await claimLag('PostgreSQL, two instances', 'postgres', [pgA, pgB]);
      } finally {
        await pgB.stop();
      }
    });

    const warnings = Object.fromEntries(BACKENDS.map((db) => [db, servers[db].warnings()]));
    const rss = Object.fromEntries(BACKENDS.map((db) => [db, rssMb(servers[db].pid)]));
    const stopped = await Promise.all([lite.stop(), pgA.stop()]);

    // --- Report -----------------------------------------------------------------------------------
    const med = (name, field) => median(runs[name]?.map((r) => r[field]) ?? []);
    const httpRows = [];
    for (const key of Object.keys(routes)) {
      const lk = `${key}:sqlite`;
      const variants = Object.keys(W).filter((n) => W[n].routeKey === key && W[n].db !== 'sqlite');
      for (const pk of variants) {
        if (!runs[pk].length && !runs[lk].length) continue;
        httpRows.push({
          route: W[pk].label ? `${routes[key].route}, synchronous_commit=off` : routes[key].route,
          'SQLite req/s': round(med(lk, 'rps'), 0),
          'PG req/s': round(med(pk, 'rps'), 0),
          'PG/SQLite': ratio(med(pk, 'rps'), med(lk, 'rps'), 2),
          'SQLite p99': med(lk, 'p99Ms'),
          'PG p99': med(pk, 'p99Ms'),
          'p99 PG/SQLite': ratio(med(pk, 'p99Ms'), med(lk, 'p99Ms'), 2),
          'SQLite CPU us/req': med(lk, 'serverCpuUsPerReq'),
          'PG CPU us/req svc+db': `${med(pk, 'serverCpuUsPerReq')}${med(pk, 'dbCpuUsPerReq') === null ? '' : `+${med(pk, 'dbCpuUsPerReq')}`}`,
          'PG req/s per round': runs[pk].map((r) => r.rps).join(' '),
          'non2xx+err': [...runs[lk], ...runs[pk]].reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0),
        });
      }
    }
    if (httpRows.length) {
      printTable(`HTTP, PostgreSQL beside SQLite: ${CONNECTIONS} connections, ${DURATION} s per run, medians of ${ROUNDS} A/B rounds (p99 in ms, loopback)`, httpRows);
    }
    const liteLag = lagRuns.find((r) => r.db === 'sqlite');
    if (lagRuns.length) {
      printTable(
        `Claim lag, ${TASKS} generate-post tasks due at once, builtin generator, JOB_POLL_MS=${POLL_MS}, JOB_CONCURRENCY=${CONCURRENCY} per instance`,
        lagRuns.map((r) => ({
          setup: r.label,
          'done/failed/left': `${r.byStatus.succeeded ?? 0}/${r.byStatus.failed ?? 0}/${(r.byStatus.pending ?? 0) + (r.byStatus.running ?? 0)}`,
          'lag p50 ms': r.lagMs.p50,
          'lag p95 ms': r.lagMs.p95,
          'p95 x SQLite': liteLag ? ratio(r.lagMs.p95, liteLag.lagMs.p95, 2) : null,
          'claim->finish s': r.claimToFinishSec,
          'submit->finish s': r.submitToFinishSec,
          'tasks/s': r.tasksPerSec,
          'x SQLite': liteLag ? ratio(r.tasksPerSec, liteLag.tasksPerSec, 2) : null,
          'run p50 ms': r.runMs.p50,
          'once each': r.exactlyOnce ? `yes (${r.posts} posts)` : `NO (${r.attempts} attempts, ${r.posts} posts)`,
          'CPU s svc (+db)': `${r.serverCpuSec.join(' + ')}${r.dbCpuSec === null ? '' : ` (+${r.dbCpuSec})`}`,
        })),
      );
    }
    for (const [name, why] of Object.entries(skipped)) console.log(`skipped: ${name}: ${why}`);
    console.log(
      `\nPostgreSQL: ${server.describe}. Server RSS after the run: SQLite ${rss.sqlite} MB, PostgreSQL ${rss.postgres} MB (PostgreSQL's own processes not counted); ` +
        `warn/error log lines: SQLite ${warnings.sqlite.warn}/${warnings.sqlite.error}, PostgreSQL ${warnings.postgres.warn}/${warnings.postgres.error}; ` +
        `stop: ${stopped.map((s) => (s.graceful ? 'graceful' : 'SIGKILL')).join(', ')}`,
    );

    printResult('postgres', {
      postgres: server.describe,
      posts: POSTS,
      contentChars: avgChars,
      chunks: seeded.chunks,
      connections: CONNECTIONS,
      durationSec: DURATION,
      rounds: ROUNDS,
      seedSec: round(seedMs / 1000, 2),
      migrateSec: round(migrateMs / 1000, 2),
      search: searchCheck,
      http: Object.fromEntries(
        Object.keys(W).map((k) => [k, { rps: med(k, 'rps'), p99Ms: med(k, 'p99Ms'), serverCpuUsPerReq: med(k, 'serverCpuUsPerReq'), dbCpuUsPerReq: med(k, 'dbCpuUsPerReq'), runs: runs[k] }]),
      ),
      listLatencyByDepthMs: listDepth,
      searchLatencyByKindMs: searchByKind,
      propagation,
      claimLag: lagRuns,
      skipped,
      serverLog: warnings,
      rssMb: rss,
    });
  },
  { timeLimitMs: (240 + plannedRuns * (DURATION + 1) + 3 * (TASK_WAIT_MS / 1000 + 15)) * 1000 },
);
