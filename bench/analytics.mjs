// npm run bench:analytics: what counting views costs the public post page. Two servers from the
// same build, each on a data folder of its own with the same 200 published posts: one counts
// views (the default), the other runs with ANALYTICS=off. autocannon (50 connections,
// BENCH_DURATION s a run, default 3) asks each for the same post page in A/B pairs, alternated
// 5 times (order swapped every other round, so drift hits both sides), as browsers would:
// a browser's user agent that changes from request to request (2,000 distinct readers) and a
// referrer, so the counter hashes and writes real visitors every second.
// Targets (from the issue): counting >= 0.9x the req/s of not counting, p99 <= 1.2x.
// Afterwards the counting server's stats must hold its views (none lost, bots aside: none here).

import {
  buildApp, cannon, cpuSeconds, makeApiKey, median, pollUntil, printResult, printTable, request, round, runBench, startServer, tempDir, verdict,
} from './lib.mjs';

const POSTS = 200;
const CONNECTIONS = 50;
const ROUNDS = 5;
const READERS = 2000;
const DURATION = Math.min(Math.max(Number(process.env.BENCH_DURATION) || 3, 1), 10);
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

/** A data folder with its site and POSTS published posts (made through the API, in this process). */
async function initSite(dataDir, apiKey) {
  const { app, close } = await buildApp(dataDir, { env: { BOOTSTRAP_API_KEY: apiKey, SITE_NAME: 'Bench Site' } });
  try {
    const headers = { authorization: `Bearer ${apiKey}` };
    const slugs = [];
    for (let i = 0; i < POSTS; i++) {
      const content = `## Part ${i}\n\n${'A paragraph of the bench post, with **some** emphasis and a [link](https://example.com). '.repeat(10)}`;
      const res = await app.inject({ method: 'POST', url: '/api/v1/posts', headers, payload: { title: `Bench post ${i}`, content, isDraft: false, tags: ['Bench'] } });
      if (res.statusCode !== 201) throw new Error(`POST /api/v1/posts: ${res.statusCode} ${res.body.slice(0, 300)}`);
      slugs.push(res.json().data.post.slug);
    }
    const site = (await app.inject({ method: 'GET', url: '/api/v1/site', headers })).json().data.site;
    return { handle: site.handle, slug: slugs[POSTS >> 1] };
  } finally {
    await close();
  }
}

/** Requests from READERS different browsers, each with a referrer. */
function readers() {
  let n = 0;
  return [
    {
      setupRequest: (req) => ({
        ...req,
        headers: { ...req.headers, 'user-agent': `${BROWSER} r${n++ % READERS}`, referer: `https://news.example.org/item?id=${n % 50}` },
      }),
    },
  ];
}

await runBench('bench/analytics', async () => {
  const apiKey = makeApiKey();
  const sides = {};
  for (const [key, env] of [
    ['on', {}],
    ['off', { ANALYTICS: 'off' }],
  ]) {
    const dataDir = tempDir();
    const { handle, slug } = await initSite(dataDir, apiKey);
    const server = await startServer({ dataDir, apiKey, env });
    sides[key] = { server, path: `/sites/${handle}/${slug}/`, runs: [] };
  }
  console.log(`two servers, ${POSTS} posts each; post page ${sides.on.path}`);

  for (const side of Object.values(sides)) {
    const res = await request(side.server.baseUrl, 'GET', side.path, { headers: { 'user-agent': BROWSER } });
    if (res.status !== 200) throw new Error(`${side.path}: ${res.status}`);
    await cannon({ server: side.server, title: 'warm-up', path: side.path, connections: CONNECTIONS, duration: 1, requests: readers() });
  }
  // What the warm-up counted, once written.
  const statsOf = async () => (await request(sides.on.server.baseUrl, 'GET', '/api/v1/stats', { headers: { authorization: `Bearer ${apiKey}` } })).json().data.totals;
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const before = await statsOf();

  let servedOn = 0;
  for (let roundNo = 0; roundNo < ROUNDS; roundNo++) {
    for (const key of roundNo % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
      const side = sides[key];
      const cpuBefore = cpuSeconds(side.server.pid);
      const r = await cannon({ server: side.server, title: `counting ${key}`, path: side.path, connections: CONNECTIONS, duration: DURATION, requests: readers() });
      const cpu = cpuSeconds(side.server.pid) - cpuBefore;
      r.srvUsPerReq = r.requests ? round((cpu * 1e6) / r.requests, 0) : null;
      if (key === 'on') servedOn += r.statusCodes[200] ?? 0;
      side.runs.push(r);
      console.log(`round ${roundNo + 1}  counting ${key.padEnd(3)} ${String(r.rps).padStart(6)} req/s  p50 ${r.p50Ms} ms  p99 ${r.p99Ms} ms  srv ${r.srvUsPerReq} us/req  non-2xx ${r.non2xx} errors ${r.errors}`);
    }
  }

  // Every view served while counting reaches the database within a second or two.
  const after = await pollUntil(async () => {
    const totals = await statsOf();
    return totals.views - before.views >= servedOn ? totals : null;
  }, { intervalMs: 250, timeoutMs: 10_000, what: 'the counted views to be written' }).catch(() => null);
  const counted = after ? after.views - before.views : (await statsOf()).views - before.views;

  const summary = (runs) => ({
    rps: round(median(runs.map((r) => r.rps)), 0),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    srvUsPerReq: median(runs.map((r) => r.srvUsPerReq)),
    bad: runs.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0),
  });
  const on = summary(sides.on.runs);
  const off = summary(sides.off.runs);
  const rpsRatio = round(median(sides.on.runs.map((r, i) => r.rps / sides.off.runs[i].rps)), 3);
  const p99Ratio = round(on.p99Ms / off.p99Ms, 2);
  const warnings = sides.on.server.warnings();
  for (const side of Object.values(sides)) await side.server.stop();

  printTable(`Post page, counting on vs off, ${CONNECTIONS} connections, ${DURATION} s a run, median of ${ROUNDS} A/B pairs`, [
    { side: 'counting on', ...on },
    { side: 'counting off (ANALYTICS=off)', ...off },
  ]);
  const checks = [
    { check: 'req/s with counting >= 0.9x without', measured: rpsRatio, ok: rpsRatio >= 0.9 },
    { check: 'p99 with counting <= 1.2x without', measured: `${on.p99Ms} vs ${off.p99Ms} ms (${p99Ratio}x)`, ok: on.p99Ms <= 1.2 * off.p99Ms },
    { check: 'every view served while counting is counted (in-flight ones at the end of a run too)', measured: `${counted} of ${servedOn}`, ok: counted >= servedOn },
    { check: 'no bad status or errors', measured: on.bad + off.bad, ok: on.bad + off.bad === 0 },
  ];
  printTable('Targets', checks.map((c) => ({ ...c, verdict: verdict(c.ok) })), ['check', 'measured', 'verdict']);
  console.log(`counting server warn/error log lines: ${warnings.warn}/${warnings.error}`);
  printResult('analytics', { posts: POSTS, readers: READERS, connections: CONNECTIONS, durationSec: DURATION, rounds: ROUNDS, on, off, rpsRatio, p99Ratio, servedOn, counted });
});
