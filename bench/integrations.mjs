// node bench/integrations.mjs (after npm run build): webhooks and idempotency keys.
//
// Starts the built server (dist/src/server.js) on a fresh temporary DATA_DIR with
// WEBHOOK_ALLOW_PRIVATE=true (the receiver is in this process, on 127.0.0.1) and default
// settings otherwise, among them the rate limits (RATE_LIMIT_MAX 600,000 a minute per key):
// the bench never meets them, and prints the headers' limit to show it.
//
// 1. Delivery latency, publish to receipt: POST /api/v1/posts with isDraft false, timed from
//    the request's start to the arrival of its `post.published` delivery at the receiver:
//    (a) idle: 200 publishes one after another;
//    (b) with 1,000 deliveries queued ahead: each round queues 1,000 deliveries (raw inserts
//        into the outbox tables, as 1,000 events would, due 1.5 s later) for a second endpoint
//        on the same receiver, then publishes as they fall due and times it (15 rounds);
//    (c) with 1,000 generation tasks queued (10 batches of 100, builtin generator): 60
//        publishes, 100 ms apart, while the generation loop works through them (deliveries run
//        in their own loop, so they never wait behind a task; they share the CPU).
// 2. Idempotency overhead on POST /api/v1/posts: autocannon, 10 connections, A/B pairs of 4 s
//    alternated 3 times (order swapped every other round), with a fresh Idempotency-Key per
//    request and without (a fresh header of another name instead, so the client's work is the
//    same); then replays (one key, every answer replayed), for scale.
// Other work on this machine skews absolute figures: compare ratios.

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { makeApiKey, printResult, printTable, ratio, request, round, runBench, sleep, startCannon, startServer, summarize, tempDir } from './lib.mjs';

const IDLE_SAMPLES = 200;
const BACKLOG = 1000;
const BACKLOG_ROUNDS = 15;
const TASKS = 1000;
const TASK_SAMPLES = 60;
const AB_ROUNDS = 3;
const AB_SECONDS = 4;
const CONNECTIONS = 10;

/** A receiver on 127.0.0.1 that answers 200 at once and tells who waits for which post. */
async function startReceiver() {
  const waiting = new Map();
  const early = new Map();
  let backlogReceived = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(200).end('ok');
      if (req.url === '/backlog') return void backlogReceived++;
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (event.type !== 'post.published') return;
      const waiter = waiting.get(event.data.post.id);
      if (waiter) waiter(at);
      else early.set(event.data.post.id, at);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    /** Resolves with the arrival time of the post's delivery. */
    arrival(postId) {
      if (early.has(postId)) return Promise.resolve(early.get(postId));
      return new Promise((resolve) => waiting.set(postId, resolve));
    },
    get backlogReceived() {
      return backlogReceived;
    },
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

async function main() {
  const dataDir = tempDir();
  const apiKey = makeApiKey();
  const server = await startServer({ dataDir, apiKey, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const receiver = await startReceiver();
  const auth = { authorization: `Bearer ${apiKey}` };
  const post = (urlPath, body, headers = {}) => request(server.baseUrl, 'POST', urlPath, { body, headers: { ...auth, ...headers } });

  const created = await post('/api/v1/webhooks', { url: `${receiver.url}/published`, events: ['post.published'] });
  if (created.status !== 201) throw new Error(`webhook not created: ${created.status} ${created.text}`);
  const backlogHook = (await post('/api/v1/webhooks', { url: `${receiver.url}/backlog`, events: ['post.updated'] })).json().data.webhook;
  const limits = (await request(server.baseUrl, 'GET', '/api/v1/posts?limit=1', { headers: auth })).headers;
  console.log(`rate limit in force: ${limits['ratelimit-limit']} requests per window per key (defaults; never met here)`);

  /** One publish, timed from the request's start to its delivery's arrival. */
  const publish = async (title) => {
    const started = performance.now();
    const res = await post('/api/v1/posts', { title, content: '# Hello\n\nA post.', isDraft: false });
    const answered = performance.now();
    if (res.status !== 201) throw new Error(`publish failed: ${res.status} ${res.text}`);
    // The delivery may arrive before the answer: arrival() knows either way.
    const arrived = receiver.arrival(res.json().data.post.id);
    const at = await Promise.race([arrived, sleep(30_000).then(() => null)]);
    if (at === null) throw new Error('a delivery never arrived');
    return { latency: at - started, afterAnswer: at - answered };
  };

  // ---- (a) idle -------------------------------------------------------------------------------
  for (let i = 0; i < 10; i++) await publish(`warm-up ${i}`);
  const idle = [];
  for (let i = 0; i < IDLE_SAMPLES; i++) idle.push(await publish(`idle ${i}`));

  // ---- (b) 1,000 deliveries queued ahead --------------------------------------------------------
  const sqlite = new Database(path.join(dataDir, 'blog.db'));
  sqlite.pragma('busy_timeout = 5000');
  const siteId = sqlite.prepare('select site_id as siteId from webhooks where id = ?').get(backlogHook.id).siteId;
  const insertJob = sqlite.prepare(
    `insert into jobs (id, kind, site_id, group_id, position, payload, status, scheduled_for, run_after, attempts, max_attempts, waits, created_at, updated_at)
     values (?, 'webhook-delivery', ?, ?, ?, ?, 'pending', ?, ?, 0, 5, 0, ?, ?)`,
  );
  const insertDelivery = sqlite.prepare(
    `insert into webhook_deliveries (id, site_id, webhook_id, event, payload, status, attempts, job_id, retry_until, next_attempt_at, created_at, updated_at)
     values (?, ?, ?, 'post.updated', ?, 'pending', 0, ?, ?, ?, ?, ?)`,
  );
  const body = JSON.stringify({ type: 'post.updated', timestamp: new Date().toISOString(), data: { post: { id: 'backlog', content: 'x'.repeat(800) }, site: { id: siteId } } });
  // Written in one short transaction while the server is idle (every earlier delivery recorded)
  // and due a moment later: the server waits at most 250 ms for a lock another connection
  // holds (then its loops back off for seconds), so outside writes must not meet its own.
  const pendingDeliveries = sqlite.prepare("select count(*) as n from webhook_deliveries where status = 'pending'").pluck();
  const insertAll = sqlite.transaction((count, now, dueAt) => {
    for (let i = 0; i < count; i++) {
      const deliveryId = randomUUID();
      const jobId = randomUUID();
      insertJob.run(jobId, siteId, backlogHook.id, i, JSON.stringify({ deliveryId }), dueAt, dueAt, now, now);
      insertDelivery.run(deliveryId, siteId, backlogHook.id, body, jobId, now + 86_400_000, dueAt, now, now);
    }
  });
  const queueBacklog = async (count) => {
    while (pendingDeliveries.get() > 0) await sleep(10);
    await sleep(50);
    const now = Date.now();
    const dueAt = now + 1000;
    insertAll(count, now, dueAt);
    await sleep(dueAt + 20 - Date.now());
  };
  const backlog = [];
  const drainMs = [];
  for (let round = 0; round < BACKLOG_ROUNDS; round++) {
    const before = receiver.backlogReceived;
    await queueBacklog(BACKLOG);
    const queuedAt = performance.now();
    backlog.push(await publish(`behind a backlog ${round}`));
    while (receiver.backlogReceived - before < BACKLOG) await sleep(5);
    drainMs.push(performance.now() - queuedAt);
  }
  sqlite.close();
  const deliveriesPerSecond = round((BACKLOG + 1) / (summarize(drainMs).p50 / 1000), 0);

  // ---- (c) 1,000 generation tasks queued ----------------------------------------------------------
  for (let b = 0; b < TASKS / 100; b++) {
    const res = await post('/api/v1/posts/batch', { posts: Array.from({ length: 100 }, (_, i) => ({ topic: `Queued topic ${b}-${i}` })), defaults: { length: 'short' } });
    if (res.status !== 202) throw new Error(`batch refused: ${res.status} ${res.text}`);
  }
  const tasksDone = async () => (await request(server.baseUrl, 'GET', '/api/v1/tasks?status=succeeded&limit=1', { headers: auth })).json().data.pagination.total;
  // Sampled while the generation loop is busy with them (it polls every JOB_POLL_MS).
  while ((await tasksDone()) < 5) await sleep(50);
  const doneBefore = await tasksDone();
  const tasksBusy = [];
  for (let i = 0; i < TASK_SAMPLES; i++) {
    tasksBusy.push(await publish(`beside generation ${i}`));
    await sleep(100);
  }
  const doneDuring = (await tasksDone()) - doneBefore;

  // ---- 2. idempotency overhead ----------------------------------------------------------------------
  const createBody = JSON.stringify({ title: 'Idempotent bench post', content: '# Body\n\nSome text.', tags: ['bench'] });
  const run = (label, withKey, fixedKey = null) =>
    startCannon({
      server,
      apiKey,
      title: label,
      path: '/api/v1/posts',
      method: 'POST',
      connections: CONNECTIONS,
      duration: AB_SECONDS,
      headers: { 'content-type': 'application/json' },
      body: createBody,
      requests: [
        {
          method: 'POST',
          path: '/api/v1/posts',
          body: createBody,
          // Both runs build each request the same way (autocannon shares the CPUs with the
          // server): a fresh UUID header, named Idempotency-Key or not.
          setupRequest: (req) => ({ ...req, headers: { ...req.headers, [withKey ? 'idempotency-key' : 'x-bench-nonce']: fixedKey ?? randomUUID() } }),
        },
      ],
    }).done;
  await run('warm-up, no key', false);
  await run('warm-up, key', true);
  const pairs = [];
  for (let r = 0; r < AB_ROUNDS; r++) {
    const order = r % 2 === 0 ? ['plain', 'keyed'] : ['keyed', 'plain'];
    const result = {};
    for (const which of order) result[which] = await run(which === 'plain' ? 'POST /posts, no key' : 'POST /posts, fresh Idempotency-Key', which === 'keyed');
    pairs.push(result);
  }
  const replays = await run('POST /posts, one key (replays)', true, 'the-same-key');
  await receiver.close();

  // ---- report ------------------------------------------------------------------------------------
  const ms = (values) => summarize(values, 1);
  const latencyRows = [
    { scenario: 'idle', ...pick(ms(idle.map((s) => s.latency))), 'after answer p50': round(summarize(idle.map((s) => s.afterAnswer), 1).p50, 1) },
    { scenario: `${BACKLOG.toLocaleString('en-US')} deliveries queued ahead`, ...pick(ms(backlog.map((s) => s.latency))), 'after answer p50': round(summarize(backlog.map((s) => s.afterAnswer), 1).p50, 1) },
    { scenario: `${TASKS.toLocaleString('en-US')} generation tasks queued`, ...pick(ms(tasksBusy.map((s) => s.latency))), 'after answer p50': round(summarize(tasksBusy.map((s) => s.afterAnswer), 1).p50, 1) },
  ];
  printTable('Delivery latency, publish request start -> receipt at the receiver (ms; default WEBHOOK_CONCURRENCY 16, JOB_CONCURRENCY 2)', latencyRows);
  console.log(`backlog of ${BACKLOG} drained at ~${deliveriesPerSecond} deliveries/s (median round, from queueing to the last receipt); ${doneDuring} tasks generated while (c) was sampled`);

  const abRows = pairs.flatMap((p, i) => [
    { round: i + 1, run: 'no key', rps: p.plain.rps, p50: p.plain.p50Ms, p99: p.plain.p99Ms, non2xx: p.plain.non2xx },
    { round: i + 1, run: 'fresh key', rps: p.keyed.rps, p50: p.keyed.p50Ms, p99: p.keyed.p99Ms, non2xx: p.keyed.non2xx },
  ]);
  abRows.push({ round: '-', run: 'replays', rps: replays.rps, p50: replays.p50Ms, p99: replays.p99Ms, non2xx: replays.non2xx });
  printTable(`POST /api/v1/posts, ${CONNECTIONS} connections, ${AB_SECONDS} s runs`, abRows);
  const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];
  const rpsRatio = median(pairs.map((p) => ratio(p.keyed.rps, p.plain.rps)));
  const p50Ratio = median(pairs.map((p) => ratio(p.keyed.p50Ms, p.plain.p50Ms)));
  // The server is saturated in these runs: 1/throughput is its time per request.
  const usPerRequest = median(pairs.map((p) => round(1e6 / p.keyed.rps - 1e6 / p.plain.rps, 0)));
  console.log(`idempotency check: throughput ${rpsRatio}x of no key (median of ${AB_ROUNDS} pairs), p50 latency ${p50Ratio}x; +${usPerRequest} us of server time per request (1/throughput)`);

  printResult('integrations', {
    latencyMs: Object.fromEntries(latencyRows.map((row) => [row.scenario, { p50: row.p50, p95: row.p95, n: row.n }])),
    backlogDeliveriesPerSecond: deliveriesPerSecond,
    idempotency: { rpsRatio, p50Ratio, usPerRequest, plainRps: pairs.map((p) => p.plain.rps), keyedRps: pairs.map((p) => p.keyed.rps), replayRps: replays.rps },
  });
  await server.stop();
}

const pick = ({ n, p50, p95, max }) => ({ n, p50, p95, max });

await runBench('integrations', main, { timeLimitMs: 300_000 });
