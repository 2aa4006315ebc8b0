// npm run bench:jobs: the batch job loop with 1,000 tasks due at once (builtin generator).
//
// Seeds 10,000 knowledge chunks and 1,000 posts, starts the server with JOB_POLL_MS=250 and
// JOB_CONCURRENCY=2 (override with BENCH_JOB_POLL_MS / BENCH_JOB_CONCURRENCY), measures
// GET one post with nothing running (autocannon, 10 connections, 6 s), then submits 10
// POST /api/v1/posts/batch of 100 topics each (no dates: all due now), measures GET one post
// again while the loop runs (8 s), waits for the tasks (bounded), measures idle once more as a
// cross-check of the baseline, and reads the jobs table (batch tasks are jobs of kind
// 'generate-post') read-only at the end for: tasks/s from first claim to last finish, the lag from scheduledFor
// to claim (startedAt - scheduledFor) p50/p95 (target p95 < JOB_POLL_MS + 1 s), and how the
// claims are spread in time. Target for GET p99 while the loop runs: <= 2x idle.

import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import {
  apiClient, cannon, initDataDir, makeApiKey, makeTopics, percentile, printResult, printTable, ratio, round, rssMb, runBench,
  seedKnowledge, seedPosts, startCannon, startServer, submitBatches, summarize, taskTimings, tempDir, verdict, waitForTasks,
} from './lib.mjs';

const POLL_MS = Number(process.env.BENCH_JOB_POLL_MS) || 250;
const CONCURRENCY = Number(process.env.BENCH_JOB_CONCURRENCY) || 2;
const BATCHES = 10;
const PER_BATCH = 100;
const CHUNKS = 10_000;
const WAIT_LIMIT_MS = 140_000; // bound on waiting for the tasks after submitting them
const GET_CONNECTIONS = 10;

await runBench(
  'bench/jobs',
  async () => {
    const dataDir = tempDir();
    const apiKey = makeApiKey();

    let t0 = performance.now();
    const data = await initDataDir(dataDir, apiKey);
    const { siteId } = data;
    const postIds = seedPosts(data.sqlite, siteId, 1000);
    const seeded = seedKnowledge(data.sqlite, siteId, { chunks: CHUNKS });
    await data.close();
    console.log(`seeded ${postIds.length} posts and ${seeded.chunks} chunks in ${round((performance.now() - t0) / 1000, 1)} s`);
    const topics = makeTopics(seeded.gen, BATCHES * PER_BATCH);

    const env = { GENERATOR: 'builtin', JOB_POLL_MS: String(POLL_MS), JOB_CONCURRENCY: String(CONCURRENCY), JOB_LEASE_MS: '60000', JOB_MAX_ATTEMPTS: '3' };
    const server = await startServer({ dataDir, apiKey, env });
    const api = apiClient(server, apiKey);
    console.log(`server pid ${server.pid} ready; JOB_POLL_MS=${POLL_MS} JOB_CONCURRENCY=${CONCURRENCY} GENERATOR=builtin`);

    // ---- idle GET one post --------------------------------------------------------------------
    let k = 0;
    const rotation = Array.from({ length: 200 }, (_, i) => postIds[(i * 37) % postIds.length]);
    const getRequests = [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/posts/${rotation[k++ % rotation.length]}` }) }];
    await cannon({ server, apiKey, title: 'warm-up', requests: getRequests, connections: GET_CONNECTIONS, duration: 2 });
    const idle = await cannon({ server, apiKey, title: 'GET one post, idle', requests: getRequests, connections: GET_CONNECTIONS, duration: 6 });
    console.log(`idle: ${idle.rps} req/s, p99 ${idle.p99Ms} ms, max ${idle.maxMs} ms`);

    // ---- 10 batches of 100, all due now --------------------------------------------------------
    const submitStart = performance.now();
    const { batchIds, submitMs } = await submitBatches([api], topics, { perBatch: PER_BATCH });
    console.log(`submitted ${BATCHES} x ${PER_BATCH} tasks in ${round(submitMs, 0)} ms`);

    // ---- GET one post while the loop runs ------------------------------------------------------
    const during = await startCannon({ server, apiKey, title: 'GET one post, job loop running', requests: getRequests, connections: GET_CONNECTIONS, duration: 8 }).done;
    console.log(`during: ${during.rps} req/s, p99 ${during.p99Ms} ms, max ${during.maxMs} ms`);

    // ---- wait for the tasks (bounded) --------------------------------------------------------
    const { finished: finishedInTime, remaining } = await waitForTasks(api, { since: submitStart, limitMs: WAIT_LIMIT_MS });
    // Idle again once the loop is quiet: a cross-check of the baseline on this noisy machine.
    const idleAfter = finishedInTime ? await cannon({ server, apiKey, title: 'GET one post, idle (after)', requests: getRequests, connections: GET_CONNECTIONS, duration: 6 }) : null;
    const rssAfter = rssMb(server.pid);
    const taskListCheck = (await api.get(`/api/v1/tasks?batchId=${batchIds[0]}&limit=100&page=1`)).json().data;
    const warnings = server.warnings();
    const stopped = await server.stop();

    // ---- read the jobs table (batch tasks: kind 'generate-post') read-only --------------------
    const db = new Database(path.join(dataDir, 'blog.db'), { readonly: true, fileMustExist: true });
    const rows = db
      .prepare(
        `select status, attempts, scheduled_for as scheduledFor, started_at as startedAt, finished_at as finishedAt, created_at as createdAt
           from jobs where site_id = ? and kind = 'generate-post'`,
      )
      .all(siteId);
    const generatedPosts = db.prepare(`select count(*) as n from posts where source_task_id is not null`).get().n;
    db.close();
    const { byStatus, claimed, firstClaim, lastFinish, wallSec, tasksPerSec, lags, runMs } = taskTimings(rows);
    const lagStats = summarize(lags, 0);
    const runStats = summarize(runMs, 1);
    // Claims happen in groups: the distinct claim instants and the gaps between them.
    const claimTimes = [...new Set(claimed.map((r) => r.startedAt))].sort((a, b) => a - b);
    const gaps = claimTimes.slice(1).map((t, i) => t - claimTimes[i]);
    const perClaim = claimed.length / claimTimes.length;
    const utilization = runMs.reduce((a, b) => a + b, 0) / (CONCURRENCY * (lastFinish - firstClaim));
    const ceiling = (CONCURRENCY * 1000) / POLL_MS;
    const lagTarget = POLL_MS + 1000;
    const p99Ratio = ratio(during.p99Ms, idle.p99Ms, 2);

    printTable(`Job loop, ${BATCHES * PER_BATCH} tasks due at once, GENERATOR=builtin, JOB_POLL_MS=${POLL_MS}, JOB_CONCURRENCY=${CONCURRENCY}, ${seeded.chunks} chunks`, [
      { measure: 'tasks succeeded / failed / left', value: `${byStatus.succeeded ?? 0} / ${byStatus.failed ?? 0} / ${(byStatus.pending ?? 0) + (byStatus.running ?? 0)}` },
      { measure: 'first claim -> last finish (s)', value: round(wallSec, 1) },
      { measure: 'tasks per second', value: round(tasksPerSec, 2) },
      { measure: 'if claiming only once per poll: concurrency x 1000 / poll (tasks/s)', value: round(ceiling, 1) },
      { measure: 'lag scheduledFor -> claim p50 (ms)', value: lagStats.p50 },
      { measure: 'lag scheduledFor -> claim p95 (ms)', value: lagStats.p95 },
      { measure: `lag p95 target (< poll + 1 s = ${lagTarget} ms)`, value: verdict(lagStats.p95 < lagTarget) },
      { measure: 'task run time p50 / p95 (ms, claim -> finish)', value: `${runStats.p50} / ${runStats.p95}` },
      { measure: 'worker utilisation (sum run / (concurrency x wall))', value: `${round(utilization * 100, 1)}%` },
      { measure: 'distinct claim instants / tasks per claim', value: `${claimTimes.length} / ${round(perClaim, 2)}` },
      { measure: 'gap between claims p50 / p95 (ms)', value: `${percentile(gaps, 50)} / ${percentile(gaps, 95)}` },
    ]);
    printTable('GET one post (autocannon, 10 connections)', [
      { run: 'idle, before the batches', seconds: idle.seconds, 'req/s': idle.rps, 'p50 ms': idle.p50Ms, 'p99 ms': idle.p99Ms, 'max ms': idle.maxMs, non2xx: idle.non2xx, errors: idle.errors + idle.timeouts },
      ...(idleAfter ? [{ run: 'idle, after the loop (cross-check)', seconds: idleAfter.seconds, 'req/s': idleAfter.rps, 'p50 ms': idleAfter.p50Ms, 'p99 ms': idleAfter.p99Ms, 'max ms': idleAfter.maxMs, non2xx: idleAfter.non2xx, errors: idleAfter.errors + idleAfter.timeouts }] : []),
      { run: 'job loop running', seconds: during.seconds, 'req/s': during.rps, 'p50 ms': during.p50Ms, 'p99 ms': during.p99Ms, 'max ms': during.maxMs, non2xx: during.non2xx, errors: during.errors + during.timeouts },
    ]);
    printTable('Targets', [
      { check: 'claim lag p95', target: `< ${lagTarget} ms`, measured: lagStats.p95, 'x target': ratio(lagStats.p95, lagTarget, 1), verdict: verdict(lagStats.p95 < lagTarget) },
      { check: 'GET p99 loop/idle', target: '<= 2x', measured: p99Ratio, 'x target': ratio(p99Ratio, 2, 2), verdict: verdict(p99Ratio !== null && p99Ratio <= 2) },
      { check: 'all tasks done in time', target: `< ${WAIT_LIMIT_MS / 1000} s`, measured: finishedInTime ? 'yes' : `${remaining} left`, 'x target': null, verdict: verdict(finishedInTime) },
    ]);
    console.log(`\nposts written by tasks: ${generatedPosts}; task list check (batch 1 page 1): ${taskListCheck.tasks.length} tasks, total ${taskListCheck.pagination.total}`);
    console.log(`server RSS after ${rssAfter} MB; warn/error log lines ${warnings.warn}/${warnings.error}; stop: ${stopped.graceful ? 'graceful' : 'SIGKILL'}`);

    printResult('jobs', {
      pollMs: POLL_MS,
      concurrency: CONCURRENCY,
      tasks: rows.length,
      chunks: seeded.chunks,
      submitMs: round(submitMs, 1),
      byStatus,
      finishedInTime,
      generatedPosts,
      wallSec: round(wallSec, 2),
      tasksPerSec: round(tasksPerSec, 2),
      ceilingTasksPerSec: round(ceiling, 2),
      lagMs: lagStats,
      runMs: runStats,
      utilization: round(utilization, 3),
      claimInstants: claimTimes.length,
      tasksPerClaim: round(perClaim, 2),
      claimGapMs: { p50: percentile(gaps, 50), p95: percentile(gaps, 95) },
      get: { idle, idleAfter, during, p99Ratio, p99RatioVsIdleAfter: idleAfter ? ratio(during.p99Ms, idleAfter.p99Ms, 2) : null },
      rssAfterMb: rssAfter,
      serverLog: warnings,
      targets: {
        lagP95: { target: `< ${lagTarget} ms`, value: lagStats.p95, ok: lagStats.p95 < lagTarget },
        getP99Ratio: { target: '<= 2', value: p99Ratio, ok: p99Ratio !== null && p99Ratio <= 2 },
      },
    });
  },
  { timeLimitMs: 178_000 },
);
