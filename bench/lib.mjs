// Shared helpers of the benchmark scripts (bench/*.mjs).
//
// The server under test always runs as a separate process (the built dist/src/server.js) on a
// fresh temporary DATA_DIR bound to 127.0.0.1; the bench process seeds the data folder with the
// compiled core modules before the server starts, drives it over loopback, and tears everything
// down (server killed, folder removed) on success, on error, on Ctrl-C and on its own time limit.

import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const PROJECT_DIR = path.resolve(BENCH_DIR, '..');
export const FIXTURES_DIR = path.resolve(BENCH_DIR, '../test/fixtures');
export const DIST_DIR = path.join(PROJECT_DIR, 'dist');
const SERVER_ENTRY = path.join(DIST_DIR, 'src', 'server.js');

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const round = (value, digits = 1) => (Number.isFinite(value) ? Math.round(value * 10 ** digits) / 10 ** digits : null);
export const ratio = (a, b, digits = 3) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? round(a / b, digits) : null);
export const mib = (bytes) => bytes / (1024 * 1024);

/** Imports a compiled module of the service, e.g. dist('src/db/sqlite.js'). */
export async function dist(relativePath) {
  const file = path.join(DIST_DIR, relativePath);
  if (!fs.existsSync(file)) throw new Error(`${path.relative(PROJECT_DIR, file)} is missing: run "npm run build" first`);
  return import(pathToFileURL(file).href);
}

// ---------------------------------------------------------------------------------------------
// Process lifetime: cleanups, time limit, signals
// ---------------------------------------------------------------------------------------------

const cleanups = [];
let loadAtStart = null;
/** Every server started, so a failure can show how each one ended and its last log lines. */
const servers = [];
let cleaningUp = null;

/** Registers an (async, idempotent) cleanup; they run in reverse order at the end, whatever happens. */
export function onCleanup(fn) {
  cleanups.push(fn);
}

async function runCleanups() {
  cleaningUp ??= (async () => {
    while (cleanups.length) {
      const fn = cleanups.pop();
      try {
        await fn();
      } catch (error) {
        console.error('cleanup failed:', error?.message ?? error);
      }
    }
  })();
  return cleaningUp;
}

/**
 * Runs a benchmark's main function with a hard time limit, cleaning up on every exit path and
 * exiting explicitly (keep-alive sockets and autocannon timers must not keep the process up).
 */
export async function runBench(name, main, { timeLimitMs = 175_000 } = {}) {
  const started = performance.now();
  loadAtStart = os.loadavg().map((l) => round(l, 2));
  console.log(`${name}: ${os.cpus().length} CPUs, load average ${loadAtStart.join(' ')} at start (other work on this machine skews absolute figures; compare ratios)`);
  const abort = (why, code) => {
    console.error(`\n${name}: ${why}; stopping the server and cleaning up`);
    runCleanups().finally(() => process.exit(code));
  };
  const watchdog = setTimeout(() => abort(`time limit of ${timeLimitMs / 1000} s exceeded`, 2), timeLimitMs);
  process.once('SIGINT', () => abort('interrupted', 130));
  process.once('SIGTERM', () => abort('terminated', 143));
  let code = 0;
  try {
    await main();
    console.log(`\n${name}: done in ${round((performance.now() - started) / 1000, 1)} s`);
  } catch (error) {
    console.error(`\n${name} failed:`, error?.stack ?? error);
    for (const server of servers) {
      const ended = server.running ? 'still running' : `exited (${JSON.stringify(await server.exited)})`;
      console.error(`\nserver pid ${server.pid}: ${ended}; last output:\n${server.logTail().slice(-4000) || '(none)'}`);
    }
    code = 1;
  } finally {
    clearTimeout(watchdog);
    await runCleanups();
  }
  process.exit(code);
}

/** A bounded poll: calls `check` until it returns a truthy value, at most `timeoutMs` and `maxTries`. */
export async function pollUntil(check, { intervalMs = 50, timeoutMs = 30_000, maxTries = 100_000, what = 'condition' } = {}) {
  const end = performance.now() + timeoutMs;
  for (let i = 0; i < maxTries; i++) {
    const value = await check();
    if (value) return value;
    if (performance.now() >= end) break;
    await sleep(intervalMs);
  }
  throw new Error(`timed out waiting for ${what}`);
}

// ---------------------------------------------------------------------------------------------
// Temporary data folder, API key, free port
// ---------------------------------------------------------------------------------------------

/** A fresh temporary folder, removed at the end. */
export function tempDir(prefix = 'blog-bench-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  onCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A BOOTSTRAP_API_KEY-compatible key: 38 characters of [A-Za-z0-9_-]. */
export const makeApiKey = () => `bench_${randomBytes(24).toString('base64url')}`;

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The server under test
// ---------------------------------------------------------------------------------------------

// Settings the service reads: never inherited from the caller's shell, only what the bench sets.
const SERVICE_VARIABLES = [
  'PORT', 'HOST', 'DATA_DIR', 'LOG_LEVEL', 'SITE_NAME', 'BOOTSTRAP_API_KEY', 'GENERATOR', 'OLLAMA_HOST', 'OLLAMA_MODEL',
  'GENERATION_TIMEOUT_MS', 'JOB_POLL_MS', 'JOB_CONCURRENCY', 'JOB_LEASE_MS', 'JOB_MAX_ATTEMPTS', 'SHUTDOWN_TIMEOUT_MS',
  'PUBLIC_BASE_URL', 'MAX_EXTRACTED_TEXT_MB', 'SITE_STORAGE_QUOTA_MB', 'REQUEST_TIMEOUT_MS', 'WEBHOOK_ALLOW_PRIVATE', 'WEBHOOK_TIMEOUT_MS',
  'WEBHOOK_CONCURRENCY', 'WEBHOOK_RETRY_BASE_MS', 'RATE_LIMIT_WINDOW_MS', 'RATE_LIMIT_MAX', 'RATE_LIMIT_GENERATE_MAX', 'RATE_LIMIT_PUBLIC_MAX',
  'BUILTIN_WORKERS', 'DATABASE_URL', 'DATABASE_POOL_MAX', 'STORAGE_URL',
];

/**
 * Spawns `node dist/src/server.js` (or another `entry` script, such as bench/baseline.mjs) on a
 * free loopback port and waits for GET /health.
 * Returns { pid, port, baseUrl, stop(), logTail(), warnings(), exited }.
 */
export async function startServer({ dataDir, apiKey, env = {}, readyTimeoutMs = 30_000, entry = SERVER_ENTRY }) {
  if (!fs.existsSync(entry)) {
    throw new Error(entry === SERVER_ENTRY ? 'dist/src/server.js is missing: run "npm run build" first' : `${path.relative(PROJECT_DIR, entry)} is missing`);
  }
  const port = await freePort();
  const childEnv = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete childEnv[name];
  Object.assign(childEnv, {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    BOOTSTRAP_API_KEY: apiKey,
    GENERATOR: 'builtin',
    SHUTDOWN_TIMEOUT_MS: '2000',
    ...env,
  });
  const child = spawn(process.execPath, [entry], { cwd: PROJECT_DIR, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });

  // Last 64 KB of output for error reports, and a count of warn+ log lines (pino level >= 40).
  let tail = '';
  const levelCounts = { warn: 0, error: 0, fatal: 0 };
  const messages = new Map();
  let partial = '';
  const capture = (data) => {
    const text = data.toString();
    tail = (tail + text).slice(-65_536);
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      try {
        const entry = JSON.parse(line);
        const level = entry.level >= 60 ? 'fatal' : entry.level >= 50 ? 'error' : entry.level >= 40 ? 'warn' : null;
        if (!level) continue;
        levelCounts[level]++;
        const key = `${level}: ${entry.msg}`;
        messages.set(key, (messages.get(key) ?? 0) + 1);
      } catch {
        // not a log line
      }
    }
  };
  child.stdout.on('data', capture);
  child.stderr.on('data', capture);

  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const server = {
    pid: child.pid,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    exited,
    get running() {
      return !hasExited;
    },
    logTail: () => tail,
    warnings: () => ({ ...levelCounts, messages: Object.fromEntries(messages) }),
    /** SIGTERM, then SIGKILL after `graceMs`; resolves with how it ended. */
    async stop(graceMs = 5000) {
      if (hasExited) return { ...(await exited), graceful: true };
      child.kill('SIGTERM');
      const timer = sleep(graceMs).then(() => null);
      const result = await Promise.race([exited, timer]);
      if (result) return { ...result, graceful: true };
      child.kill('SIGKILL');
      await Promise.race([exited, sleep(3000)]);
      return { code: null, signal: 'SIGKILL', graceful: false };
    },
  };
  onCleanup(() => server.stop());
  servers.push(server);

  try {
    await pollUntil(
      async () => {
        if (hasExited) throw new Error(`server exited during start-up:\n${tail}`);
        try {
          return (await request(server.baseUrl, 'GET', '/health', { timeoutMs: 2000 })).status === 200;
        } catch {
          return false;
        }
      },
      { intervalMs: 50, timeoutMs: readyTimeoutMs, what: 'GET /health' },
    );
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

/**
 * Starts bench/baseline.mjs, the bare "stack limit" server (Fastify + better-sqlite3 in WAL, a
 * SHA-256-hashed Bearer key looked up in SQLite per request, GET /posts/:id and POST /posts),
 * which seeds `posts` posts into `dbFile` itself at start. Same handle as startServer().
 */
export async function startBaseline({ dbFile, apiKey, posts = 10_000, contentChars = 800, readyTimeoutMs = 60_000 }) {
  return startServer({
    dataDir: path.dirname(dbFile),
    apiKey,
    entry: path.join(BENCH_DIR, 'baseline.mjs'),
    env: { BASELINE_DB: dbFile, BASELINE_API_KEY: apiKey, BASELINE_POSTS: String(posts), BASELINE_CONTENT_CHARS: String(contentChars) },
    readyTimeoutMs,
  });
}

/** Resident set size of a process in MB (VmRSS of /proc/<pid>/status), or null. */
export function rssMb(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? round(Number(match[1]) / 1024, 1) : null;
  } catch {
    return null;
  }
}

/**
 * CPU time (user + system, all threads) a process has used so far, in seconds, from
 * /proc/<pid>/stat (clock ticks of 1/100 s on Linux), or null.
 */
export function cpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** Peak resident set size (VmHWM) in MB, or null. */
export function peakRssMb(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
    return match ? round(Number(match[1]) / 1024, 1) : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP client (keep-alive, timed)
// ---------------------------------------------------------------------------------------------

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

/**
 * One HTTP request to the server over loopback. `body`: an object (sent as JSON), a Buffer or a
 * string. Resolves with { status, headers, text, json, ms } where ms covers request to last byte.
 */
export function request(baseUrl, method, urlPath, { headers = {}, body, timeoutMs = 30_000 } = {}) {
  const url = new URL(urlPath, baseUrl);
  if (url.hostname !== '127.0.0.1') throw new Error(`refusing non-loopback URL ${url}`);
  let payload = null;
  const allHeaders = { ...headers };
  if (body !== undefined) {
    if (Buffer.isBuffer(body) || typeof body === 'string') payload = body;
    else {
      payload = JSON.stringify(body);
      allHeaders['content-type'] ??= 'application/json';
    }
    allHeaders['content-length'] = Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(url, { method, headers: allHeaders, agent, timeout: timeoutMs }, (res) => {
      const parts = [];
      res.on('data', (part) => parts.push(part));
      res.on('error', reject);
      res.on('end', () => {
        const ms = performance.now() - started;
        const text = Buffer.concat(parts).toString('utf8');
        resolve({
          status: res.statusCode,
          headers: res.headers,
          text,
          ms,
          json() {
            return JSON.parse(text);
          },
        });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    if (payload !== null) req.write(payload);
    req.end();
  });
}

/** A client bound to a server and an API key: api.get('/api/v1/...'), api.post(path, body). */
export function apiClient(server, apiKey) {
  const auth = { authorization: `Bearer ${apiKey}` };
  const call = (method) => (urlPath, body, options = {}) =>
    request(server.baseUrl, method, urlPath, { ...options, body, headers: { ...auth, ...options.headers } });
  return { get: (urlPath, options) => call('GET')(urlPath, undefined, options), post: call('POST'), put: (urlPath, options) => call('PUT')(urlPath, undefined, options), auth };
}

/** Builds a multipart/form-data body with one file part named "file". */
export function multipartFile(fileName, bytes, contentType = 'application/octet-stream') {
  const boundary = `----bench${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: ${contentType}\r\n\r\n`,
  );
  const foot = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, bytes, foot]), contentType: `multipart/form-data; boundary=${boundary}` };
}

// ---------------------------------------------------------------------------------------------
// autocannon
// ---------------------------------------------------------------------------------------------

/**
 * Starts an autocannon run against the server; returns { instance, done } where `done`
 * resolves with a summary (instance.stop() ends the run early, with results).
 */
export function startCannon({ server, apiKey, title, path: urlPath = '/', method = 'GET', connections = 50, duration = 8, requests, body, headers = {} }) {
  const allHeaders = { ...headers };
  if (apiKey) allHeaders.authorization = `Bearer ${apiKey}`;
  let instance;
  const done = new Promise((resolve, reject) => {
    instance = autocannon(
      {
        url: `${server.baseUrl}${urlPath}`,
        method,
        connections,
        duration,
        headers: allHeaders,
        body,
        requests,
        timeout: 10,
        title,
      },
      (error, result) => (error ? reject(error) : resolve(summarizeCannon(title, result))),
    );
  });
  return { instance, done };
}

/** Runs autocannon to completion and returns its summary. */
export async function cannon(options) {
  return startCannon(options).done;
}

/** The order of A/B rounds: `rounds` passes over `names`, reversed every other pass (A B C, C B A, ...). */
export function alternated(names, rounds) {
  const order = [];
  for (let r = 0; r < rounds; r++) order.push(...(r % 2 ? [...names].reverse() : names));
  return order;
}

/**
 * One autocannon run of a workload ({ server, key, path, requests }) titled `title`, with the
 * server's CPU time per request (serverCpuUsPerReq, from /proc); throws when the server exited
 * during the run.
 */
export async function measure({ server, key, path: urlPath, requests }, { title, connections, duration }) {
  const cpuBefore = cpuSeconds(server.pid);
  const result = await cannon({ server, apiKey: key, title, path: urlPath, requests, connections, duration });
  if (!server.running) throw new Error(`the server (pid ${server.pid}) exited during "${title}": ${JSON.stringify(await server.exited)}`);
  const cpuAfter = cpuSeconds(server.pid);
  const cpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
  result.serverCpuUsPerReq = result.requests && cpu !== null ? round((cpu * 1e6) / result.requests, 0) : null;
  return result;
}

function summarizeCannon(title, r) {
  const seconds = (r.finish - r.start) / 1000 || r.duration || 1;
  const completed = r.latency.totalCount ?? r['2xx'] + r.non2xx;
  return {
    title,
    seconds: round(seconds, 1),
    requests: completed,
    // Completed requests over the run's wall time (autocannon's own average is per 1 s sample).
    rps: round(completed / seconds, 0),
    rpsAvg: round(r.requests.average, 0),
    latencyAvgMs: round(r.latency.average, 2),
    p50Ms: r.latency.p50,
    p90Ms: r.latency.p90,
    p99Ms: r.latency.p99,
    maxMs: r.latency.max,
    ok2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count])),
  };
}

// ---------------------------------------------------------------------------------------------
// Statistics and output
// ---------------------------------------------------------------------------------------------

/** The median of numbers (mean of the middle two for an even count), or null. */
export function median(values) {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (!finite.length) return null;
  const mid = finite.length >> 1;
  return finite.length % 2 ? finite[mid] : (finite[mid - 1] + finite[mid]) / 2;
}

/** Nearest-rank percentile of numbers (p in 0..100). */
export function percentile(values, p) {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export function summarize(values, digits = 2) {
  if (!values.length) return { n: 0, mean: null, p50: null, p95: null, p99: null, max: null, min: null };
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return {
    n: values.length,
    mean: round(mean, digits),
    min: round(Math.min(...values), digits),
    p50: round(percentile(values, 50), digits),
    p95: round(percentile(values, 95), digits),
    p99: round(percentile(values, 99), digits),
    max: round(Math.max(...values), digits),
  };
}

/** Prints rows (objects) as an aligned text table. */
export function printTable(title, rows, columns = Object.keys(rows[0] ?? {})) {
  const text = (v) => (v === null || v === undefined ? '-' : typeof v === 'boolean' ? (v ? 'yes' : 'NO') : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => text(r[c]).length)));
  const line = (cells) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  console.log(`\n${title}`);
  console.log(line(columns));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(columns.map((c) => text(row[c]))));
}

export function printResult(name, figures) {
  const loadAverage = { atStart: loadAtStart, atEnd: os.loadavg().map((l) => round(l, 2)) };
  console.log(`\nload average at start ${loadAverage.atStart?.join(' ')}, at end ${loadAverage.atEnd.join(' ')}`);
  console.log(`RESULT ${JSON.stringify({ bench: name, at: new Date().toISOString(), node: process.version, cpus: os.cpus().length, loadAverage, ...figures })}`);
}

/** "pass" / "MISS" against a target, for the tables. */
export const verdict = (ok) => (ok === null || ok === undefined ? '-' : ok ? 'pass' : 'MISS');

// ---------------------------------------------------------------------------------------------
// Deterministic text
// ---------------------------------------------------------------------------------------------

/** mulberry32: a small seeded PRNG so runs are comparable. */
export function rng(seed = 42) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const STOPWORDS = (
  'the of and to a in is that for it with as on be by this are or at from an was have not but can which ' +
  'their more when will one all there also has been they its your what how about into than so most these'
).split(' ');

const SYLLABLES = (
  'ka lo ven ti mar so ri na del po ber gan tu fi lum sen ra qua vel dor mi ne sta pli cor fen ' +
  'tra lis mon ga re ul bi zen har ro pe vo ste cra nis tel mu dra oli par sim ect'
).split(' ');

/** Content words: made-up but pronounceable, unique, so FTS sees a realistic vocabulary size. */
function contentWords(count, random) {
  const words = new Set();
  for (let guard = 0; words.size < count && guard < count * 50; guard++) {
    const n = 2 + Math.floor(random() * 3);
    let word = '';
    for (let i = 0; i < n; i++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    words.add(word);
  }
  return [...words];
}

/** Zipf sampler over `items` (rank 1 most frequent). */
function zipf(items, random, exponent = 1.0) {
  const cumulative = [];
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    total += 1 / (i + 1) ** exponent;
    cumulative.push(total);
  }
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return items[lo];
  };
}

/**
 * An English-like text generator: function words with their usual high frequency, a Zipf-
 * distributed content vocabulary (default 8,000 words), sentences of 6-22 words.
 */
export function textGenerator(seed = 7, vocabularySize = 8000) {
  const random = rng(seed);
  const vocabulary = contentWords(vocabularySize, random);
  const stop = zipf(STOPWORDS, random, 0.9);
  const content = zipf(vocabulary, random, 1.0);
  const word = () => (random() < 0.42 ? stop() : content());
  const sentence = () => {
    const n = 6 + Math.floor(random() * 17);
    const words = [];
    for (let i = 0; i < n; i++) words.push(word());
    if (random() < 0.15) words.push(String(Math.floor(random() * 2000)));
    const s = words.join(' ');
    return `${s[0].toUpperCase()}${s.slice(1)}${random() < 0.1 ? '?' : '.'}`;
  };
  const paragraph = (minChars = 300) => {
    let p = sentence();
    while (p.length < minChars) p += ` ${sentence()}`;
    return p;
  };
  /** Approximately `chars` characters of paragraphs separated by blank lines. */
  const text = (chars) => {
    const parts = [];
    let length = 0;
    while (length < chars) {
      const p = paragraph(250 + Math.floor(random() * 500));
      parts.push(p);
      length += p.length + 2;
    }
    return parts.join('\n\n');
  };
  /** A content word of the given frequency band (rank range within the vocabulary). */
  const wordOfRank = (from, to) => vocabulary[Math.min(vocabulary.length - 1, from + Math.floor(random() * (to - from)))];
  /** Paragraphs cut at a word boundary to about `chars` characters (within a few). */
  const textOf = (chars) => {
    const full = text(chars);
    if (full.length <= chars) return full;
    const cut = full.lastIndexOf(' ', chars - 1);
    return `${full.slice(0, cut > chars / 2 ? cut : chars - 1).replace(/[\s.,?]+$/, '')}.`;
  };
  const titleCase = (s) => s.replace(/\b\w/g, (c) => c.toUpperCase());
  return { random, vocabulary, word, sentence, paragraph, text, textOf, wordOfRank, titleCase, content };
}

// ---------------------------------------------------------------------------------------------
// Seeding (before the server starts, with the compiled core modules)
// ---------------------------------------------------------------------------------------------

/**
 * The service's app, built in this process the way the server builds it (Fastify with
 * serverOptions(), the app plugin registered on it) on `dataDir`, without listening and with
 * the job loop not started. `env` holds the service's settings (DATA_DIR, GENERATOR, ...) as
 * the server would read them; `options` are further app options (generator, jobs, chunkSource).
 * Closed at the end if the caller has not closed it; close() is idempotent.
 */
export async function buildApp(dataDir, { env = {}, ...options } = {}) {
  const { default: Fastify } = await import('fastify');
  const { default: blogApp, serverOptions } = await dist('src/app.js');
  const { loadConfig } = await dist('src/config.js');
  const config = loadConfig({ LOG_LEVEL: 'silent', GENERATOR: 'builtin', ...env, DATA_DIR: dataDir });
  const app = Fastify(serverOptions(config, false));
  let closing = null;
  const close = () => (closing ??= app.close());
  onCleanup(close);
  await app.register(blogApp, { config, bootstrap: { onKey() {} }, ...options, jobs: { autoStart: false, ...options.jobs } });
  await app.ready();
  return { app, close };
}

/**
 * Creates DATA_DIR/blog.db with its migrations, the site and the given API key: the app is
 * built in this process with BOOTSTRAP_API_KEY set, so it takes the path the server's first
 * start takes. Returns { app, sqlite, siteId, close() }: `app` for in-process calls to the
 * services (app.database.db is the drizzle database), `sqlite` a second, raw better-sqlite3
 * connection on the same file for bulk seeding; await close() before starting the server.
 */
export async function initDataDir(dataDir, apiKey, siteName = 'Bench Site') {
  const { app, close: closeApp } = await buildApp(dataDir, { env: { BOOTSTRAP_API_KEY: apiKey, SITE_NAME: siteName } });
  const site = app.sites.authenticate(apiKey)?.site;
  if (!site) throw new Error('the bench API key does not authenticate: the site was not bootstrapped with it');
  const sqlite = new Database(path.join(dataDir, 'blog.db'));
  sqlite.pragma('busy_timeout = 5000');
  const close = async () => {
    if (sqlite.open) sqlite.close();
    await closeApp();
  };
  onCleanup(close);
  return { app, sqlite, siteId: site.id, close };
}

const CATEGORIES = ['Technology', 'Food & Drink', 'Travel', 'Business', 'Science', 'Education', 'Health & Fitness', 'Home & Garden'];

/**
 * Inserts `count` posts (markdown of ~`contentChars` characters, half of them published) with
 * raw statements in one transaction on `sqlite` (a better-sqlite3 connection, initDataDir's);
 * slugs are unique by construction. With `exactChars`, the content (heading included) is cut
 * to about `contentChars` characters; else it is at least that long. With `title`, every post
 * gets that one title and the slugs the service would give it in turn (`same-title`,
 * `same-title-2`, ...). Afterwards the service's per-site counts are recomputed
 * (recountPosts), since these inserts bypass the service. Returns their ids, oldest first.
 */
export function seedPosts(sqlite, siteId, count, { contentChars = 2500, exactChars = false, seed = 11, title: repeatedTitle = null } = {}) {
  const gen = textGenerator(seed, 4000);
  const insert = sqlite.prepare(
    `insert into posts (id, site_id, slug, title, description, content, category, tags, author_id, is_draft, visibility,
       published_at, generator_provider, generator_model, source_task_id, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, null, ?, 'public', ?, null, null, null, ?, ?)`,
  );
  const slugOf = (text) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  const repeatedSlug = repeatedTitle === null ? null : slugOf(repeatedTitle);
  const ids = [];
  const base = Date.now() - count * 60_000;
  sqlite.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = randomUUID();
      const words = [gen.content(), gen.content(), gen.content()];
      const title = repeatedTitle ?? `${gen.titleCase(words.join(' '))} ${i + 1}`;
      const slug = repeatedSlug === null ? slugOf(title) : i === 0 ? repeatedSlug : `${repeatedSlug}-${i + 1}`;
      const heading = `# ${title}\n\n`;
      const body = exactChars ? gen.textOf(Math.max(100, contentChars - heading.length)) : gen.text(contentChars);
      const content = `${heading}${body.replace(/\n\n/, '\n\n## Overview\n\n')}`;
      const published = i % 2 === 0;
      const created = base + i * 60_000;
      insert.run(
        id, siteId, slug, title, gen.sentence(), content, CATEGORIES[i % CATEGORIES.length], JSON.stringify(words.slice(0, 3)),
        published ? 0 : 1, published ? created : null, created, created,
      );
      ids.push(id);
    }
  })();
  recountPosts(sqlite);
  return ids;
}

/**
 * Recomputes the service's per-site post counts (post_counts: drafts, public, unlisted, kept
 * by the service on every write) from the posts table, after seeding that bypassed the
 * service. A no-op on a schema without that table. Returns whether it ran.
 */
export function recountPosts(sqlite) {
  const table = sqlite.prepare("select 1 from sqlite_master where type = 'table' and name = 'post_counts'").get();
  if (!table) return false;
  sqlite
    .prepare(
      `insert or replace into post_counts (site_id, drafts, public, unlisted)
       select site_id, sum(is_draft), sum(is_draft = 0 and visibility = 'public'), sum(is_draft = 0 and visibility = 'unlisted')
         from posts group by site_id`,
    )
    .run();
  return true;
}

/**
 * Fills a site's knowledge base with `chunks` indexed chunks (~`chunkChars` characters each, led
 * by the `[fileName]` header the indexer writes), spread over `files` knowledge files, written to
 * knowledge_files and knowledge_chunks with raw statements on `sqlite` (initDataDir's
 * better-sqlite3 connection); the FTS5 index follows by the schema's triggers, as it does for
 * the indexer. Returns the text generator (for queries drawn from the same vocabulary) and the file ids.
 */
export function seedKnowledge(sqlite, siteId, { chunks = 10_000, files = 20, chunkChars = 900, seed = 7 } = {}) {
  const gen = textGenerator(seed);
  const insertFile = sqlite.prepare(
    `insert into knowledge_files (id, site_id, name, extension, media_type, size_bytes, status, error, chunk_count, storage_key, created_at, updated_at)
     values (?, ?, ?, 'md', 'text/markdown', ?, 'indexed', null, ?, ?, ?, ?)`,
  );
  const setSize = sqlite.prepare('update knowledge_files set size_bytes = ? where id = ?');
  const insertChunk = sqlite.prepare('insert into knowledge_chunks (file_id, site_id, ordinal, text) values (?, ?, ?, ?)');
  const perFile = Math.ceil(chunks / files);
  const fileIds = [];
  let written = 0;
  let totalChars = 0;
  const now = Date.now();
  for (let f = 0; f < files && written < chunks; f++) {
    const id = randomUUID();
    const name = `${gen.wordOfRank(100, 3000)}-notes-${String(f + 1).padStart(2, '0')}.md`;
    const n = Math.min(perFile, chunks - written);
    sqlite.transaction(() => {
      insertFile.run(id, siteId, name, 0, n, `${siteId}/knowledge/${id}.md`, now + f, now + f);
      let bytes = 0;
      for (let i = 0; i < n; i++) {
        let body = gen.paragraph(Math.floor(chunkChars * 0.6));
        while (body.length < chunkChars * 0.85) body += `\n\n${gen.paragraph(200)}`;
        const text = `[${name}]\n${body.slice(0, chunkChars + 200)}`;
        insertChunk.run(id, siteId, i, text);
        bytes += Buffer.byteLength(text);
        totalChars += text.length;
      }
      setSize.run(bytes, id);
    })();
    fileIds.push(id);
    written += n;
  }
  return { gen, fileIds, chunks: written, avgChunkChars: Math.round(totalChars / written) };
}

/**
 * Search queries of three kinds over the seeded vocabulary: content keywords (2-3 words of
 * middling frequency), a rare single word, and natural-language questions that carry common
 * function words ("how to ... for ..."), as people type them.
 */
export function makeQueries(gen, count) {
  const queries = [];
  for (let i = 0; i < count; i++) {
    const kind = i % 3 === 0 ? 'keywords' : i % 3 === 1 ? 'natural' : 'rare';
    let q;
    if (kind === 'keywords') q = [gen.wordOfRank(20, 2000), gen.wordOfRank(20, 2000), ...(i % 2 ? [gen.wordOfRank(200, 4000)] : [])].join(' ');
    else if (kind === 'rare') q = gen.wordOfRank(3000, 7900);
    else {
      const a = gen.wordOfRank(20, 1500);
      const b = gen.wordOfRank(50, 3000);
      const templates = [`how to ${a} ${b} for beginners`, `what is the best ${a} for ${b}`, `${a} and ${b}: an introduction`, `why ${a} matters in ${b}`];
      q = templates[i % templates.length];
    }
    queries.push({ kind, q });
  }
  return queries;
}

/** Blog-post topics in the seeded vocabulary (for generation). */
export function makeTopics(gen, count) {
  const templates = [
    (a, b) => `${a} ${b}`,
    (a, b) => `A beginner's guide to ${a} ${b}`,
    (a, b) => `How ${a} changes ${b}`,
    (a, b) => `${gen.titleCase(a)} best practices for ${b}`,
  ];
  const topics = [];
  for (let i = 0; i < count; i++) topics.push(templates[i % templates.length](gen.wordOfRank(10, 1500), gen.wordOfRank(30, 3000)));
  return topics;
}

// ---------------------------------------------------------------------------------------------
// Batch tasks (the job loop)
// ---------------------------------------------------------------------------------------------

/**
 * Submits `topics` as batches of `perBatch` (POST /api/v1/posts/batch, no dates: all due now,
 * as drafts), the i-th batch through apis[i % apis.length]. Returns { batchIds, taskIds, submitMs }.
 */
export async function submitBatches(apis, topics, { perBatch = 100 } = {}) {
  const started = performance.now();
  const batchIds = [];
  const taskIds = [];
  for (let b = 0; b * perBatch < topics.length; b++) {
    const posts = topics.slice(b * perBatch, (b + 1) * perBatch).map((topic) => ({ topic }));
    const res = await apis[b % apis.length].post('/api/v1/posts/batch', { posts, defaults: { status: 'DRAFT' } });
    if (res.status !== 202) throw new Error(`batch ${b}: ${res.status} ${res.text.slice(0, 300)}`);
    const data = res.json().data;
    if (data.taskIds.length !== posts.length) throw new Error(`batch ${b}: ${data.taskIds.length} task ids for ${posts.length} topics`);
    batchIds.push(data.batchId);
    taskIds.push(...data.taskIds);
  }
  return { batchIds, taskIds, submitMs: performance.now() - started };
}

/**
 * Waits (bounded by `limitMs` from `since`, a performance.now() instant) until the site has no
 * task pending or running, with a progress line every 10 s. Returns { finished, remaining }.
 */
export async function waitForTasks(api, { since = performance.now(), limitMs = 140_000 } = {}) {
  const count = async (status) => (await api.get(`/api/v1/tasks?status=${status}&limit=1`)).json().data.pagination.total;
  let remaining = Infinity;
  let lastReport = performance.now();
  for (let i = 0; i < 2000 && performance.now() - since < limitMs; i++) {
    remaining = (await count('pending')) + (await count('running'));
    if (remaining === 0) break;
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      console.log(`  ${round((performance.now() - since) / 1000, 0)} s: ${remaining} tasks pending or running`);
    }
    await sleep(500);
  }
  if (remaining !== 0) console.log(`stopped waiting after ${round((performance.now() - since) / 1000, 0)} s with ${remaining} tasks left`);
  return { finished: remaining === 0, remaining };
}

/**
 * Timings of batch tasks from their job rows ({ status, startedAt, finishedAt, scheduledFor } in
 * epoch ms): counts by status, the lag from due to claim (startedAt - scheduledFor), each task's
 * run time (claim -> finish), and the span from the first claim to the last finish.
 */
export function taskTimings(rows) {
  const byStatus = rows.reduce((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
  const done = rows.filter((r) => r.status === 'succeeded');
  const claimed = rows.filter((r) => r.startedAt !== null);
  const firstClaim = claimed.length ? Math.min(...claimed.map((r) => r.startedAt)) : null;
  const lastFinish = done.length ? Math.max(...done.map((r) => r.finishedAt)) : null;
  const wallSec = firstClaim !== null && lastFinish !== null ? (lastFinish - firstClaim) / 1000 : null;
  const lags = claimed.map((r) => r.startedAt - r.scheduledFor);
  const runMs = done.map((r) => r.finishedAt - r.startedAt);
  return { byStatus, done, claimed, firstClaim, lastFinish, wallSec, tasksPerSec: wallSec ? done.length / wallSec : null, lags, runMs };
}

// ---------------------------------------------------------------------------------------------
// Generated files
// ---------------------------------------------------------------------------------------------

const escapePdfString = (text) => text.replace(/[\\()]/g, (c) => `\\${c}`);

/**
 * A minimal, valid PDF 1.4 of uncompressed text pages (Helvetica, WinAnsi), as large as fits
 * in `maxBytes`: catalog, page tree, one font, then per page a content stream of ~70 lines
 * drawn with the ' operator, and a correct xref table. pdf.js extracts its text as written.
 * Returns { bytes, pages, textChars }.
 */
export function buildTextPdf(maxBytes, gen, { linesPerPage = 70, lineChars = 100 } = {}) {
  const chunks = [];
  const offsets = []; // offsets[objectNumber]
  let size = 0;
  const write = (text) => {
    const buffer = Buffer.from(text, 'latin1');
    chunks.push(buffer);
    size += buffer.length;
  };
  const object = (number, body) => {
    offsets[number] = size;
    write(`${number} 0 obj\n${body}\nendobj\n`);
  };
  write('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n');
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');

  const kids = [];
  let textChars = 0;
  let next = 4;
  // Room kept for the page tree (~11 bytes a kid), the xref (20 bytes an object) and trailer.
  const reserve = (pages) => 400 + pages * 11 + (pages * 2 + 4) * 20;
  for (;;) {
    const lines = [];
    let words = '';
    while (lines.length < linesPerPage) {
      words += (words ? ' ' : '') + gen.sentence();
      while (words.length >= lineChars) {
        const cut = words.lastIndexOf(' ', lineChars);
        const at = cut > 0 ? cut : lineChars;
        lines.push(words.slice(0, at));
        words = words.slice(at + 1);
        if (lines.length === linesPerPage) break;
      }
    }
    // A blank line between paragraphs now and then, as extracted PDFs have.
    const content = `BT\n/F1 8 Tf\n11 TL\n40 810 Td\n${lines.map((l, i) => `(${escapePdfString(l)}) '${i % 12 === 11 ? '\nT*' : ''}`).join('\n')}\nET`;
    const pageObjects =
      `${next} 0 obj\n<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream\nendobj\n` +
      `${next + 1} 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${next} 0 R >>\nendobj\n`;
    if (size + Buffer.byteLength(pageObjects, 'latin1') + reserve(kids.length + 1) > maxBytes) break;
    offsets[next] = size;
    write(`${next} 0 obj\n<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream\nendobj\n`);
    object(next + 1, `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${next} 0 R >>`);
    kids.push(next + 1);
    textChars += lines.reduce((sum, l) => sum + l.length + 1, 0);
    next += 2;
  }
  object(2, `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`);
  const xrefAt = size;
  let xref = `xref\n0 ${next}\n0000000000 65535 f \n`;
  for (let n = 1; n < next; n++) xref += `${String(offsets[n]).padStart(10, '0')} 00000 n \n`;
  write(`${xref}trailer\n<< /Size ${next} /Root 1 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`);
  const bytes = Buffer.concat(chunks);
  if (bytes.length > maxBytes) throw new Error(`generated PDF is ${bytes.length} bytes, over ${maxBytes}`);
  return { bytes, pages: kids.length, textChars };
}

/** A UTF-8 text file of about `bytes` bytes of paragraphs. */
export function buildTextFile(bytes, gen) {
  return Buffer.from(gen.text(bytes).slice(0, bytes), 'utf8');
}
