// npm run bench:jobs: the batch job loop, measured at the rate it can keep, on SQLite and on PostgreSQL.
//
// Data: one SQLite data folder seeded with 1,000 posts and 10,000 knowledge chunks, copied into a
// throwaway PostgreSQL (bench/postgres-cluster.mjs, or BENCH_DATABASE_URL) by the service's own
// migration, so both databases hold the same site. Servers run with the job loop's DEFAULT
// settings (JOB_POLL_MS, JOB_CONCURRENCY, BUILTIN_WORKERS as config.ts picks them for this
// machine) unless BENCH_JOB_POLL_MS / BENCH_JOB_CONCURRENCY / BENCH_BUILTIN_WORKERS say otherwise;
// GENERATOR=builtin.
//
// (1) Steady rate: tasks falling due at 60 per second for 20 seconds (1,200 tasks: 12 batches
//     of 100, each spread by startDate/endDate over 100/60 s, back to back, all submitted a few
//     seconds ahead). Claim lag = startedAt - scheduledFor, p50/p95/max; target p95 < JOB_POLL_MS + 1 s.
//     On SQLite and on PostgreSQL with one instance.
// (2) 1,000 tasks due at once (10 batches of 100, no dates): tasks per second from first claim to
//     last finish (targets: SQLite >= 80, PostgreSQL >= 60, two PostgreSQL instances on this
//     machine at least as fast as one), and GET one post (autocannon, 10 connections) p99 while
//     the batch runs against its idle p99 just before (target <= 3x). On SQLite, PostgreSQL with
//     one instance, PostgreSQL with two (batches submitted through both, GET measured on the first).
// Every task must run once: one attempt, one post each.
//
// About 5 minutes on 2 busy cores (PostgreSQL's part is skipped, saying why, when no PostgreSQL
// can be had). Run after `npm run build` (npm run bench:jobs does).

import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import pg from 'pg';
import { benchPostgres, query } from './postgres-cluster.mjs';
import {
  apiClient, cannon, dist, initDataDir, makeApiKey, makeTopics, onCleanup, printResult, printTable, ratio, round, runBench,
  seedKnowledge, seedPosts, sleep, startCannon, startServer, summarize, taskTimings, tempDir, verdict, waitForTasks,
} from './lib.mjs';

const RATE = 60; // tasks falling due per second
const STEADY_SEC = 20;
const PER_BATCH = 100;
const AT_ONCE = 1000;
const CHUNKS = 10_000;
const WAIT_LIMIT_MS = 150_000; // bound on waiting for one run of tasks
const GET_CONNECTIONS = 10;
const LEAD_MS = 10_000; // the steady run's first task falls due this long after its submission starts (12 batches take seconds on a busy machine)

// The job loop's defaults, as config.ts derives them for this machine (the server reads the same).
const defaults = (await dist('src/config.js')).loadConfig({});
const DEFAULTS = { JOB_POLL_MS: defaults.jobPollMs, JOB_CONCURRENCY: defaults.jobConcurrency, BUILTIN_WORKERS: defaults.builtinWorkers };
const overrides = Object.fromEntries(
  [['JOB_POLL_MS', 'BENCH_JOB_POLL_MS'], ['JOB_CONCURRENCY', 'BENCH_JOB_CONCURRENCY'], ['BUILTIN_WORKERS', 'BENCH_BUILTIN_WORKERS']]
    .filter(([, bench]) => process.env[bench] !== undefined)
    .map(([name, bench]) => [name, String(Number(process.env[bench]))]),
);
const SETTINGS = { ...DEFAULTS, ...Object.fromEntries(Object.entries(overrides).map(([k, v]) => [k, Number(v)])) };
const POLL_MS = SETTINGS.JOB_POLL_MS;
const JOB_ENV = { GENERATOR: 'builtin', JOB_LEASE_MS: '60000', JOB_MAX_ATTEMPTS: '3', ...overrides };
const TARGET = { lagP95Ms: POLL_MS + 1000, sqliteTasksPerSec: 80, postgresTasksPerSec: 60, getP99Ratio: 3 };

await runBench(
  'bench/jobs',
  async () => {
    console.log(`job loop settings: ${Object.entries(SETTINGS).map(([k, v]) => `${k}=${v}${overrides[k] ? '' : ' (default)'}`).join(', ')}; ${os.availableParallelism()} CPUs`);
    const skipped = {};
    const part = async (name, fn) => {
      try {
        return await fn();
      } catch (error) {
        skipped[name] = error?.message?.split('\n')[0] ?? String(error);
        console.log(`\nskipped: ${name}: ${skipped[name]}`);
        if (process.env.BENCH_DEBUG) console.error(error);
        return null;
      }
    };

    // --- Data: SQLite seeded, then copied into PostgreSQL ------------------------------------
    const liteDir = tempDir('blog-bench-jobs-sqlite-');
    const apiKey = makeApiKey();
    let t0 = performance.now();
    const data = await initDataDir(liteDir, apiKey);
    const { siteId } = data;
    const postIds = seedPosts(data.sqlite, siteId, 1000);
    const seeded = seedKnowledge(data.sqlite, siteId, { chunks: CHUNKS });
    await data.close();
    console.log(`seeded ${postIds.length} posts and ${seeded.chunks} chunks in ${round((performance.now() - t0) / 1000, 1)} s`);
    const pgSetup = await part('PostgreSQL', async () => {
      const server = await benchPostgres();
      const url = await server.createDatabase('bench_jobs');
      const { loadConfig } = await dist('src/config.js');
      const { migrateToPostgres } = await dist('src/admin/migrate.js');
      await migrateToPostgres(loadConfig({ DATA_DIR: liteDir, LOG_LEVEL: 'silent' }), { to: url });
      await query(url, 'VACUUM ANALYZE');
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      onCleanup(() => pool.end());
      console.log(`${server.describe}; data copied`);
      return { server, url, pool };
    });

    // --- Servers ---------------------------------------------------------------------------------
    const lite = await startServer({ dataDir: liteDir, apiKey, env: JOB_ENV });
    const pgA = pgSetup ? await startServer({ dataDir: tempDir('blog-bench-jobs-pg-a-'), apiKey, env: { ...JOB_ENV, DATABASE_URL: pgSetup.url } }) : null;
    const liteReader = new Database(path.join(liteDir, 'blog.db'), { readonly: true, fileMustExist: true });
    onCleanup(() => liteReader.close());

    const PG_COLUMNS = ['scheduled_for', 'started_at', 'finished_at']
      .map((c) => `(extract(epoch from ${c}) * 1000)::float8 as "${c.replace(/_(\w)/g, (_, x) => x.toUpperCase())}"`)
      .concat(['status', 'attempts'])
      .join(', ');
    const jobRows = async (db, batchIds) => {
      if (db === 'sqlite') {
        const marks = batchIds.map(() => '?').join(', ');
        const rows = liteReader
          .prepare(`select status, attempts, scheduled_for as scheduledFor, started_at as startedAt, finished_at as finishedAt from jobs where kind = 'generate-post' and group_id in (${marks})`)
          .all(...batchIds);
        const posts = liteReader.prepare(`select count(*) as n from posts where source_task_id in (select id from jobs where group_id in (${marks}))`).get(...batchIds).n;
        return { rows, posts };
      }
      const { pool } = pgSetup;
      const rows = (await pool.query(`select ${PG_COLUMNS} from jobs where kind = 'generate-post' and group_id = any($1)`, [batchIds])).rows;
      const posts = Number((await pool.query('select count(*) as n from posts where source_task_id in (select id from jobs where group_id = any($1))', [batchIds])).rows[0].n);
      return { rows, posts };
    };
    /** Why tasks failed, if any did: the distinct last errors with their counts. */
    const failures = async (db, batchIds) => {
      if (db === 'sqlite') {
        const marks = batchIds.map(() => '?').join(', ');
        return liteReader.prepare(`select last_error as error, count(*) as n from jobs where status = 'failed' and group_id in (${marks}) group by last_error limit 3`).all(...batchIds);
      }
      return (await pgSetup.pool.query(`select last_error as error, count(*)::int as n from jobs where status = 'failed' and group_id = any($1) group by last_error limit 3`, [batchIds])).rows;
    };
    const sayFailures = async (label, db, batchIds) => {
      for (const { error, n } of await failures(db, batchIds)) console.log(`  ${label}: ${n} failed: ${String(error).slice(0, 300)}`);
    };
    const onceEach = (rows, posts, n) => rows.length === n && rows.every((r) => r.status === 'succeeded' && Number(r.attempts) === 1) && posts === n;

    const submit = async (apis, topicsOf, datesOf) => {
      const batchIds = [];
      for (let b = 0; b < topicsOf.length; b++) {
        const body = { posts: topicsOf[b].map((topic) => ({ topic })), defaults: { status: 'DRAFT' }, ...(datesOf ? datesOf(b) : {}) };
        const res = await apis[b % apis.length].post('/api/v1/posts/batch', body);
        if (res.status !== 202) throw new Error(`batch ${b}: ${res.status} ${res.text.slice(0, 300)}`);
        batchIds.push(res.json().data.batchId);
      }
      return batchIds;
    };
    const topicBatches = (n) => {
      const topics = makeTopics(seeded.gen, n);
      return Array.from({ length: Math.ceil(n / PER_BATCH) }, (_, b) => topics.slice(b * PER_BATCH, (b + 1) * PER_BATCH));
    };

    // --- (1) Steady rate ---------------------------------------------------------------------------
    const steadyRuns = [];
    const steady = async (label, db, server) => {
      const api = apiClient(server, apiKey);
      const n = RATE * STEADY_SEC;
      const firstDue = Date.now() + LEAD_MS;
      const spanMs = ((PER_BATCH - 1) * 1000) / RATE;
      const batchIds = await submit([api], topicBatches(n), (b) => {
        const start = firstDue + (b * PER_BATCH * 1000) / RATE;
        return { startDate: new Date(start).toISOString(), endDate: new Date(start + spanMs).toISOString() };
      });
      const submittedLate = Date.now() > firstDue;
      const since = performance.now();
      await sleep(Math.max(0, firstDue - Date.now()));
      const { finished } = await waitForTasks(api, { since, limitMs: WAIT_LIMIT_MS + STEADY_SEC * 1000 });
      const { rows, posts } = await jobRows(db, batchIds);
      const timing = taskTimings(rows);
      await sayFailures(label, db, batchIds);
      const lag = summarize(timing.lags, 0);
      const result = { label, db, tasks: rows.length, finished, submittedLate, lagMs: lag, runMs: summarize(timing.runMs, 1), once: onceEach(rows, posts, n) };
      steadyRuns.push(result);
      console.log(`${label}: steady ${RATE}/s for ${STEADY_SEC} s: ${JSON.stringify(timing.byStatus)}, claim lag p50 ${lag.p50} / p95 ${lag.p95} / max ${lag.max} ms, run p50 ${result.runMs.p50} ms`);
      return result;
    };

    // --- (2) 1,000 due at once, GET one post meanwhile --------------------------------------------
    const atOnceRuns = [];
    const rotation = Array.from({ length: 200 }, (_, i) => postIds[(i * 37) % postIds.length]);
    const getRequests = () => {
      let k = 0;
      return [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/posts/${rotation[k++ % rotation.length]}` }) }];
    };
    const atOnce = async (label, db, servers) => {
      const apis = servers.map((s) => apiClient(s, apiKey));
      await cannon({ server: servers[0], apiKey, title: 'warm-up', requests: getRequests(), connections: GET_CONNECTIONS, duration: 2 });
      const idle = await cannon({ server: servers[0], apiKey, title: 'GET one post, idle', requests: getRequests(), connections: GET_CONNECTIONS, duration: 5 });
      const since = performance.now();
      const batchIds = await submit(apis, topicBatches(AT_ONCE));
      const during = await startCannon({ server: servers[0], apiKey, title: 'GET one post, batch running', requests: getRequests(), connections: GET_CONNECTIONS, duration: 5 }).done;
      const { finished } = await waitForTasks(apis[0], { since, limitMs: WAIT_LIMIT_MS });
      const { rows, posts } = await jobRows(db, batchIds);
      const timing = taskTimings(rows);
      await sayFailures(label, db, batchIds);
      const result = {
        label,
        db,
        instances: servers.length,
        finished,
        tasksPerSec: round(timing.tasksPerSec, 1),
        claimToFinishSec: round(timing.wallSec, 1),
        lagMs: summarize(timing.lags, 0),
        runMs: summarize(timing.runMs, 1),
        once: onceEach(rows, posts, AT_ONCE),
        get: { idleP99Ms: idle.p99Ms, duringP99Ms: during.p99Ms, idleRps: idle.rps, duringRps: during.rps, ratio: ratio(during.p99Ms, idle.p99Ms, 2), non2xx: idle.non2xx + during.non2xx },
      };
      atOnceRuns.push(result);
      console.log(
        `${label}: ${AT_ONCE} at once: ${JSON.stringify(timing.byStatus)}, ${result.tasksPerSec} tasks/s (${result.claimToFinishSec} s), ` +
          `GET p99 idle ${idle.p99Ms} ms -> ${during.p99Ms} ms during (${result.get.ratio}x), ${idle.rps} -> ${during.rps} req/s`,
      );
      return result;
    };

    await part('steady rate on SQLite', () => steady('SQLite', 'sqlite', lite));
    if (pgA) await part('steady rate on PostgreSQL', () => steady('PostgreSQL, one instance', 'postgres', pgA));
    await part('at once on SQLite', () => atOnce('SQLite', 'sqlite', [lite]));
    await lite.stop();
    if (pgA) {
      await part('at once on PostgreSQL, one instance', () => atOnce('PostgreSQL, one instance', 'postgres', [pgA]));
      await part('at once on PostgreSQL, two instances', async () => {
        const pgB = await startServer({ dataDir: tempDir('blog-bench-jobs-pg-b-'), apiKey, env: { ...JOB_ENV, DATABASE_URL: pgSetup.url } });
        try {
          return await atOnce('PostgreSQL, two instances', 'postgres', [pgA, pgB]);
        } finally {
          await pgB.stop();
        }
      });
      await pgA.stop();
    }

    // --- Report ------------------------------------------------------------------------------------
    const settingsText = Object.entries(SETTINGS).map(([k, v]) => `${k}=${v}`).join(', ');
    if (steadyRuns.length) {
      printTable(
        `Steady rate: ${RATE} tasks/s falling due for ${STEADY_SEC} s (${RATE * STEADY_SEC} tasks), builtin generator, ${settingsText}`,
        steadyRuns.map((r) => ({
          setup: r.label,
          'lag p50 ms': r.lagMs.p50,
          'lag p95 ms': r.lagMs.p95,
          'lag max ms': r.lagMs.max,
          target: `< ${TARGET.lagP95Ms}`,
          verdict: verdict(r.finished && r.lagMs.p95 < TARGET.lagP95Ms),
          'run p50 ms': r.runMs.p50,
          'once each': r.once ? 'yes' : 'NO',
          note: r.submittedLate ? 'submission ran past the first due time' : '',
        })),
      );
    }
    if (atOnceRuns.length) {
      const one = atOnceRuns.find((r) => r.db === 'postgres' && r.instances === 1);
      printTable(
        `${AT_ONCE} tasks due at once, builtin generator, ${settingsText}; GET one post (${GET_CONNECTIONS} connections) idle and while the batch runs`,
        atOnceRuns.map((r) => {
          const target = r.db === 'sqlite' ? TARGET.sqliteTasksPerSec : r.instances === 1 ? TARGET.postgresTasksPerSec : one?.tasksPerSec;
          return {
            setup: r.label,
            'tasks/s': r.tasksPerSec,
            'tasks/s target': r.instances > 1 ? `>= one instance (${target ?? '?'})` : `>= ${target}`,
            verdict: verdict(r.finished && target != null && r.tasksPerSec >= target),
            'lag p95 ms': r.lagMs.p95,
            'run p50 ms': r.runMs.p50,
            'GET p99 idle ms': r.get.idleP99Ms,
            'GET p99 during ms': r.get.duringP99Ms,
            'p99 x idle': r.get.ratio,
            'p99 target': `<= ${TARGET.getP99Ratio}x`,
            'p99 verdict': verdict(r.get.ratio !== null && r.get.ratio <= TARGET.getP99Ratio),
            'once each': r.once ? 'yes' : 'NO',
          };
        }),
      );
    }
    for (const [name, why] of Object.entries(skipped)) console.log(`skipped: ${name}: ${why}`);
    printResult('jobs', { settings: SETTINGS, overrides, targets: TARGET, steady: steadyRuns, atOnce: atOnceRuns, skipped, postgres: pgSetup?.server.describe ?? null });
  },
  { timeLimitMs: 900_000 },
);
