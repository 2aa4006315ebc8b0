// npm run bench:ab -- --before <dir> [--after <dir>]: an A/B of the SQLite path between two builds
// of the service, e.g. the commit before a change and the one after it.
//
//   node bench/ab.mjs --before ../blog-before            (after: this checkout)
//   node bench/ab.mjs --before ../old --after ../new
//
// Each directory is a checkout of the service with its dist/ built (npm run build there); the
// server started for it is <dir>/dist/src/server.js, the way `npm start` would start it there.
//
// One data folder is seeded: the BEFORE build starts once on an empty DATA_DIR (its migrations,
// its first site and the bench API key, as a first start does), stops, and 10,000 posts of about
// 800 characters (half published) go in with raw SQL (lib.mjs seedPosts, the per-site counts
// recomputed). A server locks its DATA_DIR, so the seeded folder is then copied twice, byte for
// byte, and each build runs on its own copy: both servers are up for the whole run, each idle
// while the other is measured. The after build migrates its copy at start if it has migrations
// the before build has not, as an upgrade in place would.
//
// Routes (autocannon, 50 connections, BENCH_DURATION s per run, default 5):
//   GET one post   500 posts spread over the 10,000, in turn;
//   a list page    20 of 10,000, pages 1-500 rotating;
//   POST a post    distinct titles, ~800 characters of markdown.
// Every route is warmed on both builds first (not reported). Rounds are alternated, the order
// reversed every other round (before, after, after, before, ...), BENCH_ROUNDS rounds (default
// 6; even, so that each build runs first as often as second); reads first, so the lists are of
// exactly 10,000 posts, and POST last. Reported: median req/s and median server CPU time per
// request (user + system of the server process, from /proc, over the run's requests) per build
// and route, and after / before. The issue's target: CPU per request after within 5 % of
// before (ratio <= 1.05) for GET one post, POST and a list page.
//
// CPU per request is the figure to judge by: req/s follows whatever else the machine is doing,
// CPU per request much less. Both builds answer from their own per-content-version caches where
// they have them (src/posts/json-cache.ts), just as they would in use.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import {
  PROJECT_DIR, alternated, apiClient, makeApiKey, measure, median, printResult, printTable, ratio, round, rssMb, runBench,
  seedPosts, sleep, startServer, tempDir, textGenerator, verdict,
} from './lib.mjs';

const POSTS = 10_000;
const CONTENT_CHARS = 800;
const CONNECTIONS = 50;
const LIST_PAGES = 500;
const DURATION = Math.min(Math.max(Number(process.env.BENCH_DURATION) || 5, 1), 30);
const ROUNDS = Math.min(Math.max(Math.round(Number(process.env.BENCH_ROUNDS) || 6), 1), 20);
const TARGET = 1.05;

function usage(message) {
  console.error(`${message}\nusage: node bench/ab.mjs --before <dir with dist/ built> [--after <dir>, default ${PROJECT_DIR}]`);
  process.exit(64);
}

function parseArgs(argv) {
  const args = { after: PROJECT_DIR };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    if (flag !== '--before' && flag !== '--after') usage(`unknown argument ${argv[i]}`);
    const value = inline ?? argv[++i];
    if (!value) usage(`${flag} needs a directory`);
    args[flag.slice(2)] = path.resolve(value);
  }
  if (!args.before) usage('--before is required');
  return args;
}

/** A build: its directory, server entry and, when it is a git checkout, its commit. */
function build(label, dir) {
  const entry = path.join(dir, 'dist', 'src', 'server.js');
  if (!fs.existsSync(entry)) usage(`${label}: ${entry} is missing (run "npm run build" in ${dir})`);
  let commit = null;
  try {
    commit = execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h %s'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().slice(0, 90);
  } catch {
    // not a git checkout
  }
  return { label, dir, entry, commit };
}

const args = parseArgs(process.argv.slice(2));
const builds = { before: build('before', args.before), after: build('after', args.after) };
if (builds.before.entry === builds.after.entry) console.warn('note: --before and --after are the same build (an A/A run: the ratios show the noise)');

// Reads: 2 routes x 2 builds x ROUNDS; writes: 2 x ROUNDS; warm-ups: 6 short runs.
const plannedRuns = 6 * ROUNDS;

await runBench(
  'bench/ab',
  async () => {
    for (const b of Object.values(builds)) console.log(`${b.label.padEnd(6)} ${b.dir}${b.commit ? ` (${b.commit})` : ''}`);
    console.log(
      `plan: ${plannedRuns} runs of ${DURATION} s (~${round((plannedRuns * (DURATION + 0.5)) / 60, 1)} min of load) + warm-ups and seeding; ` +
        `${ROUNDS} alternated rounds per route, ${CONNECTIONS} connections`,
    );
    const apiKey = makeApiKey();

    // --- One seeded data folder ---------------------------------------------------------------
    let t0 = performance.now();
    const seedDir = tempDir('blog-bench-ab-seed-');
    const first = await startServer({ dataDir: seedDir, apiKey, entry: builds.before.entry, readyTimeoutMs: 60_000 });
    const firstStop = await first.stop();
    if (!firstStop.graceful) throw new Error('the before build did not stop gracefully after creating the data folder');
    const dbFile = path.join(seedDir, 'blog.db');
    const sqlite = new Database(dbFile);
    let ids;
    let avgChars;
    try {
      sqlite.pragma('busy_timeout = 5000');
      const sites = sqlite.prepare('select id from sites').pluck().all();
      if (sites.length !== 1) throw new Error(`expected the one bootstrapped site in ${dbFile}, found ${sites.length}`);
      ids = seedPosts(sqlite, sites[0], POSTS, { contentChars: CONTENT_CHARS, exactChars: true });
      avgChars = sqlite.prepare('select round(avg(length(content))) from posts').pluck().get();
      sqlite.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      sqlite.close();
    }
    const dataDirs = {};
    for (const label of Object.keys(builds)) {
      dataDirs[label] = tempDir(`blog-bench-ab-${label}-`);
      fs.cpSync(seedDir, dataDirs[label], { recursive: true });
    }
    console.log(
      `seeded ${POSTS.toLocaleString('en-US')} posts (content ${avgChars} characters on average) with the before build's schema in ` +
        `${round((performance.now() - t0) / 1000, 1)} s; copied to one data folder per build`,
    );

    // --- Servers: both up, each on its copy ---------------------------------------------------
    t0 = performance.now();
    const servers = {};
    for (const [label, b] of Object.entries(builds)) {
      servers[label] = await startServer({ dataDir: dataDirs[label], apiKey, entry: b.entry, readyTimeoutMs: 60_000 });
    }
    const migrations = Object.fromEntries(
      Object.keys(builds).map((label) => {
        const db = new Database(path.join(dataDirs[label], 'blog.db'), { readonly: true, fileMustExist: true });
        try {
          return [label, db.prepare('select count(*) from __drizzle_migrations').pluck().get()];
        } catch {
          return [label, null];
        } finally {
          db.close();
        }
      }),
    );
    console.log(
      `servers ready in ${round(performance.now() - t0, 0)} ms: ${Object.entries(servers)
        .map(([label, s]) => `${label} pid ${s.pid} (RSS ${rssMb(s.pid)} MB, ${migrations[label] ?? '?'} migrations applied)`)
        .join(', ')}`,
    );
    const apis = Object.fromEntries(Object.entries(servers).map(([label, s]) => [label, apiClient(s, apiKey)]));

    // --- Sanity checks: the same answers from both builds ------------------------------------
    const check = (what, ok, response) => {
      if (!ok) throw new Error(`${what}: ${response.status} ${response.text.slice(0, 400)}`);
    };
    const sizes = {};
    for (const [label, api] of Object.entries(apis)) {
      const one = await api.get(`/api/v1/posts/${ids[0]}`);
      check(`${label}: GET one post`, one.status === 200 && one.json().data.post.id === ids[0], one);
      const list = await api.get('/api/v1/posts?page=3&limit=20');
      const listed = list.status === 200 ? list.json().data : null;
      check(`${label}: list page (expected 20 posts of ${POSTS})`, listed?.posts.length === 20 && listed.pagination.total === POSTS, list);
      sizes[label] = `GET one post ${one.text.length} bytes, list page ${list.text.length} bytes`;
    }
    console.log(Object.entries(sizes).map(([label, text]) => `${label}: ${text}`).join('; '));

    // --- Workloads ----------------------------------------------------------------------------
    const gen = textGenerator(99, 3000);
    const bodies = Array.from({ length: 64 }, () => ({ words: `${gen.content()} ${gen.content()}`, content: `## ${gen.titleCase(gen.content())}\n\n${gen.textOf(CONTENT_CHARS - 40)}` }));
    let counter = 0;
    const postBody = () => {
      const n = counter++;
      const b = bodies[n % bodies.length];
      return JSON.stringify({ title: `${b.words} bench ${n}`, content: b.content, tags: ['bench', `t${n % 10}`] });
    };
    // The same rotations for both builds: each workload keeps its own position.
    const rotation = Array.from({ length: 500 }, (_, i) => ids[(i * 7919) % ids.length]);
    const nextId = () => {
      let i = 0;
      return () => rotation[i++ % rotation.length];
    };
    const nextPage = () => {
      let i = 0;
      return () => 1 + ((i++ * 37) % LIST_PAGES);
    };
    const get = (pathOf) => [{ method: 'GET', setupRequest: (req) => ({ ...req, path: pathOf() }) }];
    const post = () => [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        setupRequest: (req) => ({ ...req, path: '/api/v1/posts', body: postBody() }),
      },
    ];
    const ROUTES = {
      get: 'GET one post',
      list: `GET a list page (20 of ${POSTS.toLocaleString('en-US')})`,
      post: 'POST a post, distinct titles',
    };
    const W = {};
    for (const label of Object.keys(builds)) {
      const server = servers[label];
      const ofId = nextId();
      const ofPage = nextPage();
      W[`get:${label}`] = { route: 'get', who: label, server, key: apiKey, requests: get(() => `/api/v1/posts/${ofId()}`) };
      W[`list:${label}`] = { route: 'list', who: label, server, key: apiKey, requests: get(() => `/api/v1/posts?page=${ofPage()}&limit=20`) };
      W[`post:${label}`] = { route: 'post', who: label, server, requests: post() };
    }
    const runs = Object.fromEntries(Object.keys(W).map((k) => [k, []]));

    const run = async (name, { duration = DURATION, quiet = false } = {}) => {
      const w = W[name];
      // A moment for the previous run's last answers (and a WAL checkpoint) to drain.
      await sleep(300);
      const result = await measure(w, { title: `${ROUTES[w.route]} [${w.who}]`, connections: CONNECTIONS, duration });
      if (quiet) return result;
      runs[name].push(result);
      console.log(
        `  ${`${ROUTES[w.route]} [${w.who}]`.padEnd(42)} ${String(result.rps).padStart(7)} req/s  p99 ${String(result.p99Ms).padStart(4)} ms  ` +
          `srv ${String(result.serverCpuUsPerReq).padStart(5)} us/req  non2xx ${result.non2xx}  errors ${result.errors + result.timeouts}`,
      );
      return result;
    };
    const alternate = async (title, names) => {
      console.log(`\n${title}`);
      for (const name of alternated(names, ROUNDS)) await run(name);
    };

    // Warm-up (JIT, SQLite page cache, each build's own caches), not reported.
    for (const name of ['get:before', 'get:after', 'list:before', 'list:after']) await run(name, { duration: 2, quiet: true });
    await alternate(`GET one post and a list page, ${ROUNDS} alternated rounds`, ['get:before', 'get:after', 'list:before', 'list:after']);

    for (const [label, api] of Object.entries(apis)) {
      const created = await api.post('/api/v1/posts', { title: `Sanity check post ${label}`, content: '# Hello', tags: ['bench'] });
      check(`${label}: POST`, created.status === 201, created);
    }
    for (const name of ['post:before', 'post:after']) await run(name, { duration: 1, quiet: true });
    await alternate(`POST a post, ${ROUNDS} alternated rounds`, ['post:before', 'post:after']);

    const rss = Object.fromEntries(Object.entries(servers).map(([label, s]) => [label, rssMb(s.pid)]));
    const warnings = Object.fromEntries(Object.entries(servers).map(([label, s]) => [label, s.warnings()]));
    const stopped = Object.fromEntries(await Promise.all(Object.entries(servers).map(async ([label, s]) => [label, await s.stop()])));

    // --- Report -------------------------------------------------------------------------------
    const med = (name, field) => median(runs[name].map((r) => r[field]));
    const m = Object.fromEntries(Object.keys(W).map((k) => [k, { rps: med(k, 'rps'), p99: med(k, 'p99Ms'), cpu: med(k, 'serverCpuUsPerReq') }]));
    const failures = Object.values(runs).flat().reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0);
    const rows = Object.keys(ROUTES).map((route) => {
      const b = m[`${route}:before`];
      const a = m[`${route}:after`];
      const cpuRatio = ratio(a.cpu, b.cpu);
      return {
        route: ROUTES[route],
        'req/s before': round(b.rps, 0),
        'req/s after': round(a.rps, 0),
        'req/s a/b': ratio(a.rps, b.rps),
        'us/req before': b.cpu,
        'us/req after': a.cpu,
        'CPU/req a/b': cpuRatio,
        [`<= ${TARGET}`]: verdict(cpuRatio === null ? null : cpuRatio <= TARGET),
        'p99 ms b/a': `${b.p99}/${a.p99}`,
        'us/req per round, before | after': `${runs[`${route}:before`].map((r) => r.serverCpuUsPerReq).join(' ')} | ${runs[`${route}:after`].map((r) => r.serverCpuUsPerReq).join(' ')}`,
        'non2xx+err': [...runs[`${route}:before`], ...runs[`${route}:after`]].reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0),
      };
    });
    printTable(
      `A/B, before vs after: ${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} alternated rounds, medians (loopback; server CPU user+system per request)`,
      rows,
    );
    console.log(`\nbefore: ${builds.before.dir}${builds.before.commit ? ` (${builds.before.commit})` : ''}`);
    console.log(`after:  ${builds.after.dir}${builds.after.commit ? ` (${builds.after.commit})` : ''}`);
    console.log(
      `RSS after the run: before ${rss.before} MB, after ${rss.after} MB; warn/error log lines: before ${warnings.before.warn}/${warnings.before.error}, ` +
        `after ${warnings.after.warn}/${warnings.after.error}; stop: ${Object.entries(stopped).map(([label, s]) => `${label} ${s.graceful ? 'graceful' : 'SIGKILL'}`).join(', ')}`,
    );
    printResult('ab', {
      builds,
      posts: POSTS,
      contentChars: avgChars,
      connections: CONNECTIONS,
      durationSec: DURATION,
      rounds: ROUNDS,
      migrations,
      medians: m,
      table: rows,
      target: `server CPU per request after / before <= ${TARGET}`,
      failures,
      runs,
      rssMb: rss,
      serverLog: warnings,
    });
    if (failures) throw new Error(`${failures} error responses or failed requests`);
  },
  { timeLimitMs: (180 + (plannedRuns + 6) * (DURATION + 1)) * 1000 },
);
