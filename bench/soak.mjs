// npm run soak: mixed load for a long time, with kills and outages, then checks that nothing was
// lost or doubled, no child outlived its server, and memory, file descriptors and the WAL stayed flat.
//
// Setups (SOAK_SETUP=sqlite|postgres|both, default both; each runs for the whole configured time):
//   sqlite   one instance on SQLite, its DATA_DIR on a small tmpfs mounted here (as root) so the
//            disk can really be filled; without the mount the full-disk fault is skipped, saying why.
//   postgres two instances on one throwaway PostgreSQL cluster (bench/postgres-cluster.mjs) and one
//            s3rver bucket on loopback, each instance with its own DATA_DIR.
// Time: SOAK_MINUTES (default 60) or --quick (10) per setup; --minutes=N too.
//
// Load: SOAK_USERS (default 4) async users, each one request every 300-700 ms (about 400 a minute
// in all, far under RATE_LIMIT_MAX=6000 and RATE_LIMIT_GENERATE_MAX=60, the README's "shared
// installation" limits, which the soak sets so that staying within them is checked: a 429 is a
// MISS): post creates (some scheduled with publishAt), edits, toggles and deletes, public pages
// and feeds, knowledge uploads of every accepted type (and hostile ones: text named .pdf, an
// empty file, an encrypted and a broken PDF), knowledge searches, generate calls, media uploads
// (every image fixture: a pixel bomb, a truncated JPEG and an SVG among them), batches whose
// posts' scheduledFor are spread over the run (each post tagged with its own tag), and a webhook
// endpoint on a local receiver that answers 500 to ~10 % and never answers ~3 % of attempts;
// staff (an editor and an owner invited with the key, signed in through their setup links) using
// their blog_session cookie alone on any instance: session, post lists, creates and edits (with
// the service's Origin), previews, /admin/, stats, and ~1 in 20 a sign-out and sign-in again;
// stats read with the key; public pages read as Chrome (80 %) or Googlebot (20 %), whose 200s of
// index and post pages are held against the run's counted views at the end; readers' comments on
// three posts of their own, without a proof of work (so held), by the content API (201) and the
// page's form (303), each carrying a marker, moderated (approved, spam, back to pending, deleted)
// by a staff cookie or the key, and the approved ones read back; newsletters on, SOAK_SUBSCRIBERS
// (default 300) readers imported by CSV (active) and up to 30 public sign-ups confirmed through
// the link mailed to them; three newsletter posts (10 s before the first SIGKILL; one with the
// SMTP server stopped for a minute once a third of its mails are in; one late), and every
// published batch post sends its own. Mail goes to an SMTP server in this process (smtp-server,
// mailparser): staff invitations (their links come by mail), confirmations, comment notices and
// newsletters. The load's own creates opt out of the newsletter (sendNewsletter: false).
//
// Faults, at fractions of the run: SIGKILL of a server (restarted on the same data) at 1/6, 0.28
// (runs of 30 min or more) and 2/6; on PostgreSQL the first instance at 1/6 and 0.28, the second
// at 2/6, 4/6, 5/6 and once during the database outage, so that its restart waits for the
// database. The first instance is not killed after 2/6, so it is the witness for memory and fds in
// the last half (median of the 4th quarter's samples vs the 3rd's, its last process only, with its
// memory by part from bench/memory-probe.mjs, preloaded into every server); on PostgreSQL a
// database outage (pg_ctl stop -m fast, start) at 0.55 and a storage outage (s3rver closed) at
// 0.35; on SQLite a full disk (a ballast file fills the tmpfs) at 0.6; a CPU burner (one busy
// child per core, os.availableParallelism()) from 1/3 to 2/3. Outages last 25 s (15 s under 10 min).
//
// Checks (after a drain of up to 150 s): no 5xx but 503/507 in outages, no 429, tasks, webhook
// events (comment and newsletter events among them), views, uploads, images, staff sessions; every
// comment answered 201/303 exists exactly once and none refused exists, moderation states as set;
// every newsletter (GET /api/v1/posts/:id/newsletter) ends `sent`, each imported reader and each
// sign-up confirmed before it was made receives it, nobody else does, with at most one duplicate
// per SIGKILL or SMTP stop during its send; every sign-up answered 202 confirmed; children,
// memory and fds, WAL. Printed per minute: p50/p99 of reads and the first instance's RSS and fds.
//
// Sampling every 5 s: each server's RSS and open fds, the SQLite WAL's size, and every extractor
// process of this checkout (with its parent server from EXTRACTOR_PARENT_PID).
//
// Settings the soak gives the service: GENERATOR=builtin, JOB_POLL_MS=500, BUILTIN_WORKERS=1,
// WEBHOOK_ALLOW_PRIVATE=true (the receiver is on loopback), WEBHOOK_TIMEOUT_MS=3000,
// WEBHOOK_RETRY_BASE_MS=1000 (so retries finish within the drain), the rate limits above,
// SMTP_URL (the server here), MAIL_FROM, MAIL_RATE_PER_MINUTE=1200, SPAM_GUARD_RATE_MAX=1000000
// (every reader of the soak is 127.0.0.1).

import { fork, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  BENCH_DIR, DIST_DIR, FIXTURES_DIR, makeApiKey, median, multipartFile, onCleanup, percentile, request, round, rssMb, runBench, sleep, startServer, tempDir,
} from './lib.mjs';

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

const argv = process.argv.slice(2);
if (argv.includes('--burn-child')) {
  // A CPU burner: a busy loop until killed.
  for (;;) Math.sqrt(Math.random());
}
const flag = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const QUICK = argv.includes('--quick');
const MINUTES = Number(flag('minutes') ?? process.env.SOAK_MINUTES ?? (QUICK ? 10 : 60));
if (!(MINUTES > 0)) throw new Error('SOAK_MINUTES must be a positive number');
const SETUP = flag('setup') ?? process.env.SOAK_SETUP ?? 'both';
if (!['sqlite', 'postgres', 'both'].includes(SETUP)) throw new Error('SOAK_SETUP must be sqlite, postgres or both');
const SETUPS = SETUP === 'both' ? ['sqlite', 'postgres'] : [SETUP];
const USERS = Math.max(1, Number(process.env.SOAK_USERS) || 4);
const RUN_MS = MINUTES * 60_000;
const OUTAGE_MS = MINUTES < 10 ? 15_000 : 25_000;
// SQLite's DATA_DIR holds an hour's uploads, images and posts (~160 MB in 58 min filled 192 MB): room scales with the run.
const TMPFS_MB = Math.max(192, MINUTES * 12);
const SAMPLE_MS = 5000;
/** The witness's memory parts (bench/memory-probe.mjs) are written this often; its live heap after a forced full collection every SOAK_GC_MINUTES (default 10: a collection changes what RSS does, so rarely). */
const PROBE_MS = 60_000;
const GC_EVERY_MS = Math.max(1, Number(process.env.SOAK_GC_MINUTES) || 10) * 60_000;
const MEMORY_WINDOW_MS = 5 * 60_000;
const MEMORY_PARTS = ['rss', 'heapTotal', 'young', 'heapUsed', 'external', 'arrayBuffers', 'workers', 'other'];
const WINDOW_MS = 60_000;
// Newsletter readers imported at the start (consented, active); SOAK_SUBSCRIBERS changes it.
const SUBSCRIBERS = Math.max(10, Number(process.env.SOAK_SUBSCRIBERS) || 300);
/** The SMTP server is away this long in the middle of a send. */
const MAIL_OUTAGE_MS = 60_000;
/** Public sign-ups confirmed through their mailed link, at most. */
const MAX_SIGNUPS = 30;
const DRAIN_MS = 150_000;
const ORPHAN_GRACE_MS = 5000;
const EXTRACTOR_MARK = path.join(DIST_DIR, 'src', 'knowledge', 'extract-worker.js');

const SERVICE_ENV = {
  GENERATOR: 'builtin',
  JOB_POLL_MS: '500',
  BUILTIN_WORKERS: '1',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_TIMEOUT_MS: '3000',
  WEBHOOK_RETRY_BASE_MS: '1000',
  RATE_LIMIT_MAX: '6000',
  RATE_LIMIT_GENERATE_MAX: '60',
  SHUTDOWN_TIMEOUT_MS: '2000',
  MAIL_FROM: 'Soak <news@example.com>',
  MAIL_RATE_PER_MINUTE: '1200',
  // Every reader of the soak comes from 127.0.0.1: the spam guard's window per address would refuse them.
  SPAM_GUARD_RATE_MAX: '1000000',
  // As the Dockerfile sets them (see there): glibc's malloc keeps two arenas instead of one per
  // thread, and gives large blocks back to the system when they are freed.
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
};

const pick = (list) => list[Math.floor(Math.random() * list.length)];
const fixture = (...parts) => fs.readFileSync(path.join(FIXTURES_DIR, ...parts));

const KNOWLEDGE_FILES = [
  ...['fd_ins_8859.pdf', 'i216_nuclear.pdf', 'i242_testingWithTable.pdf', 'i255_emojis.pdf', 'i373_err_broken.pdf', 'i43_err_encrypted.pdf'].map((n) => ['pdf', n]),
  ...['bad-xml.docx', 'badfile-01-bad-header.doc', 'test01.doc', 'test01.docx', 'test03.docx', 'test05.doc'].map((n) => ['word', n]),
  ...['coffee-brewing-guide.md', 'product-catalog.csv', 'release-notes-2026.txt'].map((n) => ['text', n]),
].map(([dir, name]) => ({ name, bytes: fixture(dir, name) }));
KNOWLEDGE_FILES.push({ name: 'not-really.pdf', bytes: Buffer.from('just text pretending to be a PDF\n'), hostile: true });
KNOWLEDGE_FILES.push({ name: 'empty.txt', bytes: Buffer.alloc(0), hostile: true });
const BIG_PDF = KNOWLEDGE_FILES.reduce((a, b) => (b.name.endsWith('.pdf') && b.bytes.length > a.bytes.length ? b : a), KNOWLEDGE_FILES[0]);
const IMAGE_FILES = fs.readdirSync(path.join(FIXTURES_DIR, 'images')).filter((n) => !n.endsWith('.md')).map((name) => ({ name, bytes: fixture('images', name) }));
const SEARCHES = ['coffee', 'brewing temperature', 'release notes', 'nuclear', 'table', 'product catalog', 'espresso grind', 'v2.3'];
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const BOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
/** Views reach the database this long after they were counted (FLUSH_INTERVAL_MS, plugins/analytics.ts). */
const ANALYTICS_FLUSH_MS = 1000;
const TOPICS = ['Espresso basics', 'Cold brew at home', 'Grinding beans', 'Milk foam', 'Water chemistry', 'Roasting levels', 'Pour-over', 'Decaf myths'];

// ---------------------------------------------------------------------------------------------
// Helpers: processes
// ---------------------------------------------------------------------------------------------

function procRead(pid, file) {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return null;
  }
}
function alive(pid) {
  const stat = procRead(pid, 'stat');
  if (!stat) return false;
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}
function fdCount(pid) {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}
/** Every live extractor process of this checkout: { pid, parent (EXTRACTOR_PARENT_PID), ppid }. */
function extractors() {
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = procRead(entry, 'cmdline');
    if (!cmdline || !cmdline.includes(EXTRACTOR_MARK) || !alive(entry)) continue;
    const env = procRead(entry, 'environ') ?? '';
    const parent = Number(/(?:^|\0)EXTRACTOR_PARENT_PID=(\d+)/.exec(env)?.[1]) || null;
    const stat = procRead(entry, 'stat') ?? '';
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    found.push({ pid: Number(entry), parent, ppid });
  }
  return found;
}
/** Direct children of a process (any program), as { pid, cmd }. */
function childrenOf(pid) {
  const out = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procRead(entry, 'stat');
    if (!stat) continue;
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push({ pid: Number(entry), cmd: (procRead(entry, 'cmdline') ?? '').replaceAll('\0', ' ').slice(0, 120) });
  }
  return out;
}

function startBurner() {
  const n = os.availableParallelism();
  const children = Array.from({ length: n }, () => fork(fileURLToPath(import.meta.url), ['--burn-child'], { stdio: 'ignore' }));
  const stop = () => children.forEach((c) => c.kill('SIGKILL'));
  onCleanup(stop);
  return { n, stop };
}

// ---------------------------------------------------------------------------------------------
// Webhook receiver: ~10 % 500, ~3 % never answered
// ---------------------------------------------------------------------------------------------

async function startReceiver() {
  const receipts = [];
  const hanging = new Set();
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on('data', (p) => parts.push(p));
    req.on('end', () => {
      const roll = Math.random();
      const outcome = roll < 0.03 ? 'hang' : roll < 0.13 ? 500 : 200;
      let body = null;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        // recorded as is
      }
      receipts.push({ id: req.headers['webhook-id'], body, outcome, at: Date.now() });
      if (outcome === 'hang') return void hanging.add(res);
      res.writeHead(outcome, { 'content-type': 'text/plain' }).end(outcome === 200 ? 'ok' : 'soak says no');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections?.();
      server.close(() => resolve());
    });
  onCleanup(close);
  return { url: `http://127.0.0.1:${server.address().port}/hook`, receipts, close };
}

// ---------------------------------------------------------------------------------------------
// SMTP server (smtp-server in this process): every message kept as { to, subject, text, links, t };
// stop() closes it (its connections told 421 after a second), start() listens again on the same port.
// ---------------------------------------------------------------------------------------------

async function startSmtp(clock) {
  const { SMTPServer } = await import('smtp-server');
  const { simpleParser } = await import('mailparser');
  const mails = [];
  const listeners = [];
  let server = null;
  let port = 0;
  const start = async () => {
    const next = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      authOptional: true,
      logger: false,
      closeTimeout: 1000,
      onData(stream, session, callback) {
        const chunks = [];
        stream.on('data', (chunk) => chunks.push(chunk));
        stream.on('end', () => {
          simpleParser(Buffer.concat(chunks)).then((parsed) => {
            const text = parsed.text ?? '';
            const mail = { to: session.envelope.rcptTo.map((a) => a.address.toLowerCase()), subject: parsed.subject ?? '', text, links: text.match(/https?:\/\/[^\s>)\]]+/g) ?? [], t: clock() };
            mails.push(mail);
            for (const listen of listeners) listen(mail);
            callback();
          }, (error) => callback(error));
        });
      },
    });
    // A SIGKILLed service resets its connection: nothing to report.
    next.on('error', () => {});
    for (let attempt = 0; ; attempt++) {
      try {
        await new Promise((resolve, reject) => {
          next.server.once('error', reject);
          next.listen(port, '127.0.0.1', () => {
            next.server.off('error', reject);
            resolve();
          });
        });
        break;
      } catch (error) {
        if (attempt >= 20) throw error;
        await sleep(500);
      }
    }
    port = next.server.address().port;
    server = next;
  };
  const stop = () =>
    new Promise((resolve) => {
      const closing = server;
      server = null;
      if (!closing) return resolve();
      closing.close(() => resolve());
    });
  await start();
  onCleanup(stop);
  return { url: `smtp://127.0.0.1:${port}`, mails, onMail: (fn) => listeners.push(fn), start, stop };
}

// ---------------------------------------------------------------------------------------------
// S3 (s3rver in this process: stop() closes its port, start() reopens it with the same objects)
// ---------------------------------------------------------------------------------------------

async function startS3() {
  const { default: S3rver } = await import('s3rver');
  const directory = tempDir('blog-soak-s3-');
  let port = 0;
  let server = null;
  const start = async () => {
    server = new S3rver({ port, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: 'blog', configs: [] }] });
    port = (await server.run()).port;
  };
  const stop = async () => {
    await server?.close();
    server = null;
  };
  await start();
  onCleanup(stop);
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    env: {
      STORAGE_URL: `s3://blog/soak?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&forcePathStyle=true`,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    start,
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// One setup
// ---------------------------------------------------------------------------------------------

async function runSetup(kind) {
  const label = kind === 'sqlite' ? 'SQLite, one instance' : 'PostgreSQL + S3, two instances';
  console.log(`\n=== ${label}: ${MINUTES} min of load ===`);
  const apiKey = makeApiKey();
  let t0 = performance.now(); // moved to the start of the load below: fault times count from there
  const at = () => performance.now() - t0;
  const events = []; // { t, what }
  const note = (what) => {
    events.push({ t: at(), what });
    console.log(`[${round(at() / 1000, 0)} s] ${what}`);
  };
  const outages = []; // { from, to, what }
  const killWindows = []; // { from, to }

  // --- data folders, database, store ---------------------------------------------------------
  const instances = [];
  let dbEnv = {};
  let pgCluster = null;
  let s3 = null;
  let fullDisk = null; // { dir } or { skipped }
  let walFile = null;
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-soak-sqlite-'));
    let mounted = false;
    try {
      await run('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MB}m`, 'tmpfs', dir]);
      mounted = true;
      fullDisk = { dir };
    } catch (error) {
      fullDisk = { skipped: `could not mount a tmpfs for DATA_DIR (${String(error.message).split('\n')[0]}); the machine's real disk is never filled` };
    }
    onCleanup(async () => {
      if (mounted) await run('umount', ['-l', dir]).catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    });
    instances.push({ name: 'sqlite', dataDir: dir });
    walFile = path.join(dir, 'blog.db-wal');
  } else {
    const { benchPostgres, postgresUnavailable } = await import('./postgres-cluster.mjs');
    const why = postgresUnavailable();
    if (why) return { label, skipped: why };
    pgCluster = await benchPostgres();
    s3 = await startS3();
    dbEnv = { DATABASE_URL: await pgCluster.createDatabase('soak'), ...s3.env };
    instances.push({ name: 'pg-a', dataDir: tempDir('blog-soak-a-') }, { name: 'pg-b', dataDir: tempDir('blog-soak-b-') });
  }

  const smtp = await startSmtp(() => at());
  dbEnv = { ...dbEnv, SMTP_URL: smtp.url };
  // Every server preloads the memory probe: its memory parts go to probeDir/<pid>.jsonl.
  const probeDir = tempDir('blog-soak-memory-');
  // The young generation capped as `npm start` and the Dockerfile run the service.
  const probeEnv = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-semi-space-size=16 --import=${path.join(BENCH_DIR, 'memory-probe.mjs')}`.trim(), MEMORY_PROBE_DIR: probeDir, MEMORY_PROBE_EVERY_MS: String(PROBE_MS) };
  const mailOutages = []; // { from, to }: kept apart from the outages that allow 503s

  const launch = async (inst) => {
    inst.server = await startServer({ dataDir: inst.dataDir, apiKey, env: { ...SERVICE_ENV, ...dbEnv, ...probeEnv }, readyTimeoutMs: 120_000 });
    inst.pids = [...(inst.pids ?? []), inst.server.pid];
    inst.servers = [...(inst.servers ?? []), inst.server];
    inst.up = true;
  };
  // Instances start one after the other (the first migrates).
  for (const inst of instances) await launch(inst);
  note(`started ${instances.map((i) => `${i.name} pid ${i.server.pid}`).join(', ')}`);

  // --- recording --------------------------------------------------------------------------------
  const records = []; // { t, route, status, ms, code }
  const liveInstances = () => instances.filter((i) => i.up);
  // bearer: false sends no Authorization (a staff cookie instead); origin: true sends the
  // addressed server's own origin (its base URL), as the admin UI's browser would.
  const call = async (method, route, urlPath, { body, headers = {}, timeoutMs = 30_000, inst, bearer = true, origin = false, extra } = {}) => {
    const target = inst ?? pick(liveInstances().length ? liveInstances() : instances);
    const start = at();
    try {
      const all = { ...(bearer ? { authorization: `Bearer ${apiKey}` } : {}), ...(origin ? { origin: target.server.baseUrl } : {}), ...headers };
      const res = await request(target.server.baseUrl, method, urlPath, { body, headers: all, timeoutMs });
      let code = null;
      if (res.status >= 400) {
        try {
          code = res.json().error?.code ?? null;
        } catch {
          code = null;
        }
      }
      records.push({ t: start, route, status: res.status, ms: res.ms, code, inst: target.name, path: res.status >= 500 ? `${method} ${urlPath.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, ':id')}` : undefined, ...extra });
      return res;
    } catch (error) {
      records.push({ t: start, route, status: 0, ms: at() - start, code: String(error.code ?? error.message).slice(0, 60), inst: target.name, ...extra });
      return null;
    }
  };
  const data = (res) => {
    try {
      return res.json().data;
    } catch {
      return null;
    }
  };

  // --- site, webhook -----------------------------------------------------------------------------
  const receiver = await startReceiver();
  const site = data(await call('GET', 'site', '/api/v1/site')).site;
  const handle = site.handle;
  const hookRes = await call('POST', 'webhooks', '/api/v1/webhooks', {
    body: {
      url: receiver.url,
      events: ['post.created', 'post.updated', 'post.published', 'post.unpublished', 'post.deleted', 'task.succeeded', 'task.failed', 'knowledge.indexed', 'knowledge.failed', 'comment.created', 'comment.approved', 'newsletter.sent'],
    },
  });
  const webhookId = data(hookRes)?.webhook?.id ?? data(hookRes)?.id;
  if (!webhookId) throw new Error(`webhook not created: ${hookRes?.status} ${hookRes?.text?.slice(0, 300)}`);

  // --- staff: an editor and an owner, invited with the key, joined through their invitation links ---
  const cookieOf = (res) => {
    for (const line of [res?.headers?.['set-cookie'] ?? []].flat()) {
      const m = /^blog_session=([^;]*)/.exec(line);
      if (m && m[1]) return m[1];
    }
    return null;
  };
  const staff = []; // { role, email, password, cookie, inFlight, cycling }
  for (const role of ['editor', 'owner']) {
    const email = `soak-${role}-${randomUUID().slice(0, 8)}@example.com`;
    const password = `soak password ${randomUUID()}`;
    const added = await call('POST', 'staff-invite', '/api/v1/users', { body: { email, role } });
    // With mail set up the invitation link comes by mail (a new email makes its account by accepting).
    let token = data(added)?.inviteUrl?.split('#token=')[1];
    for (let waited = 0; !token && added?.status < 300 && waited < 60_000; waited += 200) {
      const mail = smtp.mails.find((m) => m.to.includes(email.toLowerCase()) && m.text.includes('#token='));
      token = mail && decodeURIComponent(/#token=([^\s>)\]]+)/.exec(mail.text)[1]);
      if (!token) await sleep(200);
    }
    if (!token) throw new Error(`staff ${role} not invited: ${added?.status} ${added?.text?.slice(0, 300)}`);
    const setupRes = await call('POST', 'staff-setup', '/api/v1/auth/accept', { body: { token, password }, bearer: false, origin: true });
    const cookie = cookieOf(setupRes);
    if (setupRes?.status !== 200 || !cookie) throw new Error(`staff ${role} setup: ${setupRes?.status} ${setupRes?.text?.slice(0, 300)}`);
    staff.push({ role, email, password, cookie, inFlight: 0, cycling: false });
  }

  // --- newsletter: on, SUBSCRIBERS readers imported (consented, active) -------------------------
  const newsletterOn = await call('PATCH', 'setup', '/api/v1/site', { body: { newsletter: { enabled: true, senderName: 'Soak Notes' } } });
  if (newsletterOn?.status !== 200) throw new Error(`newsletter not turned on: ${newsletterOn?.status} ${newsletterOn?.text?.slice(0, 300)}`);
  const readers = Array.from({ length: SUBSCRIBERS }, (_, i) => `soak-reader-${i}@example.com`);
  const csv = multipartFile('readers.csv', Buffer.from(`email\n${readers.join('\n')}\n`), 'text/csv');
  const imported = await call('POST', 'setup', '/api/v1/subscribers/import', { body: csv.body, headers: { 'content-type': csv.contentType } });
  if (data(imported)?.imported !== SUBSCRIBERS) throw new Error(`subscribers not imported: ${imported?.status} ${imported?.text?.slice(0, 300)}`);

  // --- comments: posts of their own (the load deletes and unpublishes its posts, and their comments with them) ---
  const commentPosts = [];
  for (let i = 0; i < 3; i++) {
    const res = await call('POST', 'setup', '/api/v1/posts', { body: { title: `Soak comments ${i} ${randomUUID().slice(0, 8)}`, content: 'Readers answer here.', isDraft: false, sendNewsletter: false } });
    const post = res?.status === 201 ? data(res)?.post : null;
    if (!post) throw new Error(`comment post not created: ${res?.status} ${res?.text?.slice(0, 300)}`);
    commentPosts.push({ id: post.id, slug: post.slug });
  }

  // --- state of the load ----------------------------------------------------------------------
  const comments = []; // { marker, via, answer, id, state: pending|approved|spam|deleted|unknown, busy }
  const signups = []; // { email, answer, confirmed: t or null, confirmAnswer }
  const confirmations = [];
  const newsletterPosts = []; // { id, slug, title, what }
  // A sign-up's confirmation mail: its link's page is confirmed with a POST, as the reader's button does.
  smtp.onMail((mail) => {
    const s = signups.find((x) => mail.to.includes(x.email));
    const link = s && !s.confirmed && mail.links.find((l) => l.includes('/subscribe/confirm?token='));
    if (!link) return;
    const token = new URL(link).searchParams.get('token');
    confirmations.push(
      (async () => {
        for (let attempt = 0; attempt < 20; attempt++) {
          const res = await call('POST', 'subscribe-confirm', `/sites/${handle}/subscribe/confirm`, { body: `token=${encodeURIComponent(token)}`, bearer: false, headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': BROWSER_UA } });
          s.confirmAnswer = res?.status ?? 0;
          if (res?.status === 200) return void ((s.confirmed = at()), (s.confirmedWall = Date.now()));
          if (res && res.status < 500) return;
          await sleep(3000);
        }
      })(),
    );
  });
  const myPosts = new Map(); // id -> { slug, published }
  const uploads = []; // { id, name }
  const mediaAnswers = []; // { name, status, code }
  const submittedTasks = []; // { id, tag }
  let batchSeq = 0;
  let stopLoad = false;
  const staffPosts = [];
  let staffSignIns = 0;
  /** A request with a signed-in staff member's cookie and no key, to any live instance. */
  const staffCall = async (s, method, route, urlPath, options = {}) => {
    s.inFlight++;
    try {
      return await call(method, route, urlPath, { ...options, bearer: false, headers: { cookie: `blog_session=${s.cookie}`, ...options.headers }, extra: { staff: s.role, live: true } });
    } finally {
      s.inFlight--;
    }
  };

  const actions = {
    async read() {
      const published = [...myPosts.values()].filter((p) => p.published);
      const paths = [`/sites/${handle}/`, `/sites/${handle}/rss.xml`, `/sites/${handle}/atom.xml`, `/sites/${handle}/feed.json`, `/content/v1/sites/${handle}/posts`];
      if (published.length) paths.push(`/sites/${handle}/${pick(published).slug}/`);
      const commented = pick(commentPosts);
      paths.push(`/sites/${handle}/${commented.slug}/`, `/content/v1/sites/${handle}/posts/${commented.slug}/comments`);
      const p = pick(paths);
      // Most reads as a browser, some as a crawler: analytics counts the browser's 200s of
      // index and post pages (not feeds nor the content API).
      const ua = Math.random() < 0.8 ? 'human' : 'bot';
      const counted = p.startsWith('/sites/') && p.endsWith('/'); // the index and post pages
      await call('GET', 'read', p, { bearer: false, headers: { 'user-agent': ua === 'human' ? BROWSER_UA : BOT_UA }, extra: { ua, counted } });
    },
    async stats() {
      const s = Math.random() < 0.3 ? pick(staff.filter((x) => x.cookie && !x.cycling)) : null;
      if (s) await staffCall(s, 'GET', 'staff-stats', '/api/v1/stats');
      else await call('GET', 'stats', '/api/v1/stats');
    },
    async staff() {
      const s = pick(staff.filter((x) => !x.cycling));
      if (!s) return;
      if (!s.cookie || (Math.random() < 1 / 20 && s.inFlight === 0)) {
        // Sign out (unless already out) and in again: argon2, so rare. No other request of this
        // person is in flight meanwhile, so none of theirs can meet an ended session.
        s.cycling = true;
        try {
          if (s.cookie) {
            const res = await staffCall(s, 'POST', 'staff-sign-out', '/api/v1/auth/sign-out', { origin: true });
            if (res?.status === 200) s.cookie = null;
          }
          if (!s.cookie) {
            const res = await call('POST', 'staff-sign-in', '/api/v1/auth/sign-in', { body: { email: s.email, password: s.password }, bearer: false, origin: true, extra: { staff: s.role } });
            s.cookie = res?.status === 200 ? cookieOf(res) : null;
            if (res?.status === 200) staffSignIns++;
          }
        } finally {
          s.cycling = false;
        }
        return;
      }
      const roll = Math.random();
      if (roll < 0.2) await staffCall(s, 'GET', 'staff-session', '/api/v1/auth/session');
      else if (roll < 0.32) await staffCall(s, 'GET', 'staff-list', `/api/v1/posts?status=all&limit=20&page=${1 + Math.floor(Math.random() * 3)}`);
      else if (roll < 0.4) await staffCall(s, 'GET', 'staff-comments', `/api/v1/comments?status=${pick(['pending', 'approved', 'spam'])}&limit=20`);
      else if (roll < 0.55) {
        const res = await staffCall(s, 'POST', 'staff-create', '/api/v1/posts', {
          origin: true,
          body: { title: `Staff post ${randomUUID().slice(0, 8)}`, content: `By the ${s.role}. ${'lorem ipsum '.repeat(15)}`, tags: ['soak-staff'], sendNewsletter: false },
          headers: { 'idempotency-key': randomUUID() },
        });
        const post = res?.status === 201 ? data(res)?.post : null;
        if (post) staffPosts.push(post.id);
      } else if (roll < 0.7) {
        const id = pick(staffPosts);
        if (!id) return;
        const res = await staffCall(s, 'PATCH', 'staff-edit', `/api/v1/posts/${id}`, { origin: true, body: { content: `Edited by the ${s.role} ${new Date().toISOString()}` } });
        if (res?.status === 404) staffPosts.splice(staffPosts.indexOf(id), 1);
      } else if (roll < 0.85) {
        await staffCall(s, 'POST', 'staff-preview', '/api/v1/posts/preview', { origin: true, body: { content: `# Preview\n\nSome *markdown* [a link](https://example.com) ${randomUUID()}` } });
      } else await staffCall(s, 'GET', 'staff-admin', '/admin/');
    },
    async list() {
      await call('GET', 'read', `/api/v1/posts?status=all&limit=20&page=${1 + Math.floor(Math.random() * 3)}`);
    },
    async create() {
      const roll = Math.random();
      // Not mailed: the newsletters of the load are its own few posts and the batches' published posts.
      const body = { title: `Soak post ${randomUUID().slice(0, 8)}`, content: `Some text ${'lorem ipsum '.repeat(20)}`, tags: ['soak'], sendNewsletter: false };
      if (roll < 0.4) body.isDraft = false;
      else if (roll < 0.6) body.publishAt = new Date(Date.now() + 30_000 + Math.random() * 60_000).toISOString();
      const res = await call('POST', 'post-create', '/api/v1/posts', { body, headers: { 'idempotency-key': randomUUID() } });
      const post = res?.status === 201 ? data(res)?.post : null;
      if (post) myPosts.set(post.id, { slug: post.slug, published: !post.isDraft });
    },
    async edit() {
      const id = pick([...myPosts.keys()]);
      if (!id) return;
      const res = await call('PATCH', 'post-edit', `/api/v1/posts/${id}`, { body: { content: `Edited ${new Date().toISOString()} ${'dolor sit '.repeat(10)}` } });
      if (res?.status === 404) myPosts.delete(id);
    },
    async toggle() {
      const id = pick([...myPosts.keys()]);
      if (!id) return;
      const res = await call('PUT', 'post-toggle', `/api/v1/posts/${id}`);
      const post = res?.status === 200 ? data(res)?.post : null;
      if (post) myPosts.set(id, { slug: post.slug ?? myPosts.get(id)?.slug, published: !post.isDraft });
    },
    async remove() {
      if (myPosts.size < 10) return;
      const id = pick([...myPosts.keys()]);
      const res = await call('DELETE', 'post-delete', `/api/v1/posts/${id}`);
      if (res && (res.status === 200 || res.status === 404)) myPosts.delete(id);
    },
    async knowledge(file = pick(KNOWLEDGE_FILES)) {
      const { body, contentType } = multipartFile(file.name, file.bytes);
      const res = await call('POST', 'knowledge-upload', '/api/v1/knowledge', { body, headers: { 'content-type': contentType }, timeoutMs: 60_000 });
      const id = res?.status === 201 ? data(res)?.knowledge?.id : null;
      if (id) uploads.push({ id, name: file.name });
    },
    async search() {
      await call('GET', 'search', `/api/v1/knowledge/search?q=${encodeURIComponent(pick(SEARCHES))}&limit=5`);
    },
    async media() {
      const file = pick(IMAGE_FILES);
      const { body, contentType } = multipartFile(file.name, file.bytes);
      const res = await call('POST', 'media-upload', '/api/v1/media', { body, headers: { 'content-type': contentType }, timeoutMs: 60_000 });
      if (res) {
        let message;
        try {
          message = res.json().error?.message ?? null;
        } catch {
          message = null;
        }
        mediaAnswers.push({ name: file.name, status: res.status, message });
      }
    },
    async comment() {
      // A reader's comment without a proof of work: held for a moderator. 30 % by the page's form (303), the rest by the content API (201).
      const post = pick(commentPosts);
      const marker = `soak-c-${randomUUID()}`;
      const c = { marker, via: Math.random() < 0.3 ? 'form' : 'api', answer: null, id: null, state: 'pending', busy: false };
      comments.push(c);
      const fields = { name: 'Soak reader', email: `reader-${marker.slice(7, 13)}@example.com`, body: `A thought on this post (${marker}).` };
      const res =
        c.via === 'form'
          ? await call('POST', 'comment-form', `/sites/${handle}/${post.slug}/comments`, { body: new URLSearchParams(fields).toString(), bearer: false, headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': BROWSER_UA } })
          : await call('POST', 'comment-submit', `/content/v1/sites/${handle}/posts/${post.slug}/comments`, { body: fields, bearer: false, headers: { 'user-agent': BROWSER_UA } });
      c.answer = res?.status ?? 0;
      if (res?.status === 201) c.id = data(res)?.comment?.id ?? null;
    },
    async moderate() {
      // Approve, mark spam, back to pending or delete: by a staff member's cookie (60 %) or the key.
      const c = pick(comments.filter((x) => x.id && !x.busy && x.state !== 'deleted' && x.state !== 'unknown'));
      if (!c) return;
      const roll = Math.random();
      const target = roll < 0.55 ? 'approved' : roll < 0.7 ? 'spam' : roll < 0.8 ? 'pending' : 'deleted';
      const s = Math.random() < 0.6 ? pick(staff.filter((x) => x.cookie && !x.cycling)) : null;
      const method = target === 'deleted' ? 'DELETE' : 'PATCH';
      const options = target === 'deleted' ? {} : { body: { status: target } };
      c.busy = true;
      try {
        const res = s ? await staffCall(s, method, 'staff-moderate', `/api/v1/comments/${c.id}`, { origin: true, ...options }) : await call(method, 'moderate', `/api/v1/comments/${c.id}`, options);
        // Without an answer the outcome is unknown: the comment is then only held to existing at most once.
        c.state = res?.status === 200 ? target : 'unknown';
        if (res && res.status !== 200) c.refusal = `${res.status} ${res.text.slice(0, 120)}`;
      } finally {
        c.busy = false;
      }
    },
    async subscribe() {
      // A public sign-up (no proof of work: taken, confirmed by the mailed link, below).
      if (signups.length >= MAX_SIGNUPS) return;
      const email = `soak-signup-${randomUUID().slice(0, 8)}@example.com`;
      const s = { email, answer: null, confirmed: null, confirmAnswer: null };
      signups.push(s);
      const res = await call('POST', 'subscribe', `/content/v1/sites/${handle}/subscribers`, { body: { email }, bearer: false, headers: { 'user-agent': BROWSER_UA } });
      s.answer = res?.status ?? 0;
    },
    async generate() {
      await call('POST', 'generate', '/api/v1/posts/generate', { body: { topic: pick(TOPICS), length: 'short' }, timeoutMs: 120_000 });
    },
  };
  const weights = [
    ['read', 40], ['list', 8], ['create', 12], ['edit', 8], ['toggle', 4], ['remove', 3], ['knowledge', 4], ['search', 10], ['media', 3], ['generate', 1], ['staff', 12], ['stats', 2],
    ['comment', 6], ['moderate', 4], ['subscribe', 1],
  ];
  const totalWeight = weights.reduce((s, [, w]) => s + w, 0);
  const chooseAction = () => {
    let r = Math.random() * totalWeight;
    for (const [name, w] of weights) if ((r -= w) < 0) return name;
    return 'read';
  };
  const user = async () => {
    while (!stopLoad) {
      await sleep(300 + Math.random() * 400);
      if (stopLoad) break;
      await actions[chooseAction()]().catch((error) => note(`user error: ${error.message}`));
    }
  };

  /** A batch of 4 posts due over the rest of the run, retried with its Idempotency-Key until answered. */
  const batch = async () => {
    const key = randomUUID();
    const n = batchSeq++;
    const remaining = Math.max(5000, RUN_MS - at() - 10_000);
    const posts = Array.from({ length: 4 }, (_, i) => ({
      topic: `${pick(TOPICS)} ${n}-${i}`,
      tags: [`soak-task-${n}-${i}`],
      scheduledFor: new Date(Date.now() + Math.random() * remaining).toISOString(),
    }));
    const body = { defaults: { status: Math.random() < 0.5 ? 'PUBLISHED' : 'DRAFT', length: 'short' }, posts };
    for (let attempt = 0; attempt < 20; attempt++) {
      const res = await call('POST', 'batch', '/api/v1/posts/batch', { body, headers: { 'idempotency-key': key } });
      if (res?.status === 202) {
        data(res).taskIds.forEach((id, i) => submittedTasks.push({ id, tag: posts[i].tags[0] }));
        return;
      }
      if (res && res.status < 500 && res.status !== 409 && res.status !== 429) {
        note(`batch refused: ${res.status} ${res.text.slice(0, 200)}`);
        return;
      }
      await sleep(3000);
    }
    note('batch never answered after 20 tries');
  };

  // --- sampling -------------------------------------------------------------------------------
  const samples = []; // { t, inst, pid, rss, fds, wal }
  const extractorSeen = new Map(); // pid -> { parent, first, last }
  const killedAt = new Map(); // server pid -> t
  const outlived = []; // { pid, parent, afterMs }
  const childSnapshots = new Map(); // server pid -> children before kill
  const sampleProcesses = () => {
    const now = at();
    for (const x of extractors()) {
      const seen = extractorSeen.get(x.pid) ?? { parent: x.parent, first: now, last: now };
      seen.last = now;
      extractorSeen.set(x.pid, seen);
      const died = killedAt.get(x.parent);
      if (died !== undefined && now - died > ORPHAN_GRACE_MS && !outlived.some((o) => o.pid === x.pid)) outlived.push({ pid: x.pid, parent: x.parent, afterMs: Math.round(now - died) });
    }
  };
  const sampler = setInterval(() => {
    sampleProcesses();
    const now = at();
    for (const inst of instances) {
      if (!inst.up) continue;
      let wal = null;
      if (walFile) {
        try {
          wal = fs.statSync(walFile).size;
        } catch {
          wal = 0;
        }
      }
      samples.push({ t: now, inst: inst.name, pid: inst.server.pid, rss: rssMb(inst.server.pid), fds: fdCount(inst.server.pid), wal });
    }
  }, SAMPLE_MS);
  // The witness's live heap after a full collection (the probe, on SIGUSR2), now and then.
  const forcedGc = setInterval(() => instances[0].up && process.kill(instances[0].server.pid, 'SIGUSR2'), GC_EVERY_MS);
  // Orphan watch: every second, for extractors whose server was killed.
  const orphanWatch = setInterval(() => killedAt.size && sampleProcesses(), 1000);

  // --- faults ---------------------------------------------------------------------------------
  const killOne = (inst) => (inst.faulting = (inst.faulting ?? Promise.resolve()).then(() => killNow(inst)).catch((error) => note(`kill of ${inst.name} failed: ${error.message}`)));
  const killNow = async (inst) => {
    // Give it something to extract when it dies.
    const { body, contentType } = multipartFile(BIG_PDF.name, BIG_PDF.bytes);
    void call('POST', 'knowledge-upload', '/api/v1/knowledge', { body, headers: { 'content-type': contentType }, inst }).then((res) => {
      const id = res?.status === 201 ? data(res)?.knowledge?.id : null;
      if (id) uploads.push({ id, name: BIG_PDF.name });
    });
    await sleep(700);
    const pid = inst.server.pid;
    const kids = childrenOf(pid);
    childSnapshots.set(pid, kids);
    const from = at();
    inst.up = false;
    process.kill(pid, 'SIGKILL');
    killedAt.set(pid, at());
    await inst.server.exited;
    note(`SIGKILL ${inst.name} pid ${pid} (children then: ${kids.map((k) => `${k.pid} ${k.cmd.includes('extract-worker') ? 'extractor' : k.cmd.split(' ')[0]}`).join(', ') || 'none'})`);
    await sleep(1000);
    // As a supervisor would: start it again until it comes up (a start waits up to
    // STARTUP_WAIT_SECONDS for a database or store that cannot be reached, then exits).
    for (let attempt = 1; ; attempt++) {
      try {
        await launch(inst);
        break;
      } catch (error) {
        if (attempt >= 30) throw error;
        note(`restart ${attempt} of ${inst.name} failed: ${String(error.message).split('\n').slice(0, 2).join(' ').slice(0, 200)}; again in 5 s`);
        await sleep(5000);
      }
    }
    killWindows.push({ from, to: at() + 2000 });
    note(`restarted ${inst.name} as pid ${inst.server.pid} in ${round((at() - from) / 1000, 1)} s`);
    // Every child of the killed server must be gone within the grace period.
    setTimeout(() => {
      for (const k of kids) if (alive(k.pid) && (procRead(k.pid, 'cmdline') ?? '').replaceAll('\0', ' ').startsWith(k.cmd.slice(0, 40))) outlived.push({ pid: k.pid, parent: pid, afterMs: ORPHAN_GRACE_MS, cmd: k.cmd });
    }, Math.max(0, ORPHAN_GRACE_MS - (at() - killedAt.get(pid)) + 500));
  };

  const schedule = [];
  // The first instance's third kill: its restart (up to ~2 min on a loaded machine) must be over
  // well before the last half less the warm-up (0.5 - 1/12 of an hour), or its memory is not
  // judged; between the batch at 0.25 and the kill at 2/6 (on PostgreSQL of the other instance,
  // so that both are not down at once).
  const KILL_3 = 0.28;
  const plan = (fraction, what, fn) => schedule.push({ at: fraction * RUN_MS, what, fn });
  if (kind === 'sqlite') {
    for (const f of MINUTES >= 30 ? [1 / 6, KILL_3, 2 / 6] : [1 / 6, 2 / 6]) plan(f, 'kill', () => killOne(instances[0]));
  } else {
    plan(1 / 6, 'kill', () => killOne(instances[0]));
    plan(2 / 6, 'kill', () => killOne(instances[1]));
    if (MINUTES >= 30) plan(KILL_3, 'kill', () => killOne(instances[0]));
    plan(4 / 6, 'kill', () => killOne(instances[1]));
    plan(5 / 6, 'kill', () => killOne(instances[1]));
    // Killed during the database outage (0.55 + a few seconds): its restart waits for the database.
    plan(0.55 + Math.min(8_000, OUTAGE_MS / 3) / RUN_MS, 'kill', () => killOne(instances[1]));
  }
  let burner = null;
  plan(1 / 3, 'burner on', async () => {
    burner = startBurner();
    note(`CPU burner: ${burner.n} busy processes`);
  });
  plan(2 / 3, 'burner off', async () => {
    burner?.stop();
    note('CPU burner stopped');
  });
  if (kind === 'postgres') {
    plan(0.35, 'storage outage', async () => {
      const from = at();
      await s3.stop();
      note('storage outage: s3rver stopped');
      await sleep(OUTAGE_MS);
      await s3.start();
      outages.push({ from, to: at(), what: 'storage' });
      note('storage back');
    });
    plan(0.55, 'database outage', async () => {
      const from = at();
      await pgCluster.pause();
      note('database outage: pg_ctl stop -m fast');
      await sleep(OUTAGE_MS);
      await pgCluster.resume();
      outages.push({ from, to: at(), what: 'database' });
      note('database back');
    });
  }
  const fullDiskResult = { filled: false, why: fullDisk?.skipped ?? null, bytes: 0 };
  if (kind === 'sqlite' && fullDisk?.dir) {
    plan(0.6, 'full disk', async () => {
      const ballast = path.join(fullDisk.dir, 'ballast.bin');
      const from = at();
      const fd = fs.openSync(ballast, 'w');
      const chunk = Buffer.alloc(1 << 20, 1);
      try {
        for (;;) fullDiskResult.bytes += fs.writeSync(fd, chunk);
      } catch (error) {
        fullDiskResult.filled = error.code === 'ENOSPC';
      } finally {
        fs.closeSync(fd);
      }
      note(`full disk: ${round(fullDiskResult.bytes / 2 ** 20, 0)} MB of ballast, tmpfs full (${fullDiskResult.filled})`);
      await sleep(OUTAGE_MS);
      fs.rmSync(ballast, { force: true });
      outages.push({ from, to: at(), what: 'disk' });
      note('disk freed');
    });
  }
  if (kind === 'sqlite' && fullDisk?.skipped) note(`full disk skipped: ${fullDisk.skipped}`);
  for (let i = 1; i <= 5; i++) plan((i - 0.5) / 6, 'batch', batch);

  // Newsletters of posts of their own (the batches' published posts send theirs too): one 10 s
  // before the first SIGKILL (killed mid-send), one with the SMTP server stopped for a minute
  // once a third of its mails are in, one late and quiet.
  const publishNewsletter = async (what) => {
    const key = randomUUID();
    const title = `Soak newsletter ${what} ${key.slice(0, 8)}`;
    const content = Array.from({ length: 4 }, (_, i) => `Paragraph ${i + 1} of the soak's issue, with [a link](https://example.com/${i}).`).join('\n\n');
    for (let attempt = 0; attempt < 20; attempt++) {
      const res = await call('POST', 'newsletter-post', '/api/v1/posts', { body: { title, content, tags: ['soak-newsletter'], isDraft: false }, headers: { 'idempotency-key': key } });
      const post = res?.status === 201 ? data(res)?.post : null;
      if (post) {
        const entry = { id: post.id, slug: post.slug, title, what, at: at() };
        newsletterPosts.push(entry);
        note(`newsletter post published (${what})`);
        return entry;
      }
      if (res && res.status < 500 && res.status !== 409) throw new Error(`newsletter post refused: ${res.status} ${res.text.slice(0, 200)}`);
      await sleep(3000);
    }
    throw new Error('newsletter post never answered');
  };
  const mailsOf = (slug) => smtp.mails.filter((m) => m.links.some((l) => l.endsWith(`/${slug}/`)));
  plan(Math.max(0.02, 1 / 6 - 10_000 / RUN_MS), 'newsletter', () => publishNewsletter('before a kill'));
  plan(0.45, 'newsletter', async () => {
    const post = await publishNewsletter('SMTP stopped mid-send');
    for (let waited = 0; mailsOf(post.slug).length < SUBSCRIBERS / 3; waited += 250) {
      if (waited > 180_000) throw new Error('a third of the newsletter never arrived');
      await sleep(250);
    }
    const from = at();
    await smtp.stop();
    note(`mail outage: SMTP server stopped after ${mailsOf(post.slug).length} mails of the newsletter`);
    await sleep(MAIL_OUTAGE_MS);
    await smtp.start();
    mailOutages.push({ from, to: at() });
    note('mail server back');
  });
  plan(0.75, 'newsletter', () => publishNewsletter('late'));

  // --- run --------------------------------------------------------------------------------------
  t0 = performance.now();
  const faultRuns = [];
  const timers = schedule.map((s) => setTimeout(() => faultRuns.push(s.fn().catch((error) => note(`${s.what} failed: ${error.stack ?? error}`))), s.at));
  await batch();
  const users = Array.from({ length: USERS }, user);
  const progress = setInterval(() => console.log(`[${round(at() / 1000, 0)} s] ${records.length} requests, ${myPosts.size} posts of the load, ${uploads.length} uploads, ${submittedTasks.length} tasks`), 60_000);
  await sleep(RUN_MS);
  stopLoad = true;
  timers.forEach(clearTimeout);
  clearInterval(progress);
  await Promise.all(users);
  await Promise.all(faultRuns);
  burner?.stop();
  note('load stopped; draining tasks, indexing and deliveries');

  // --- drain ------------------------------------------------------------------------------------
  const drainEnd = at() + DRAIN_MS;
  const listAll = async (route, urlPath, key) => {
    const items = [];
    for (let page = 1; page < 1000; page++) {
      let res = null;
      // A refusal here is also a finding (its 5xx is counted above), but not a reason to lose the other checks.
      for (let attempt = 0; attempt < 5 && res?.status !== 200; attempt++) {
        if (attempt) await sleep(2000);
        res = await call('GET', 'check', `${urlPath}${urlPath.includes('?') ? '&' : '?'}limit=100&page=${page}`);
      }
      if (res?.status !== 200) throw new Error(`${route}: ${res?.status} ${res?.text?.slice(0, 200)}`);
      const d = data(res);
      items.push(...d[key]);
      if (page >= d.pagination.pages) break;
    }
    return items;
  };
  let tasks;
  let files;
  let deliveries;
  const newsletters = new Map(); // post id -> progress (newsletter posts and the batches' posts)
  const readNewsletter = async (id) => {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (attempt) await sleep(2000);
      const res = await call('GET', 'check', `/api/v1/posts/${id}/newsletter`);
      if (res?.status === 200) return data(res).newsletter;
      if (res?.status === 404) return null;
    }
    return { status: 'unreadable' };
  };
  for (;;) {
    tasks = await listAll('tasks', '/api/v1/tasks', 'tasks');
    files = await listAll('knowledge', '/api/v1/knowledge', 'items');
    deliveries = await listAll('deliveries', `/api/v1/webhooks/${webhookId}/deliveries`, 'deliveries');
    await Promise.all(confirmations);
    for (const id of [...newsletterPosts.map((p) => p.id), ...tasks.filter((x) => x.postId).map((x) => x.postId)]) {
      if (newsletters.get(id)?.status === 'sent') continue;
      const progress = await readNewsletter(id);
      if (progress) newsletters.set(id, progress);
    }
    const sending = [...newsletters.values()].filter((n) => n.status !== 'none' && n.status !== 'sent').length;
    const busy = tasks.filter((x) => x.status === 'pending' || x.status === 'running').length + files.filter((f) => f.status === 'uploaded').length + deliveries.filter((d) => d.status === 'pending').length + sending;
    if (!busy || at() > drainEnd) break;
    await sleep(3000);
  }
  note('drained');
  const posts = await listAll('posts', '/api/v1/posts?status=all', 'posts');
  const listedComments = [];
  for (const status of ['pending', 'approved', 'spam']) listedComments.push(...(await listAll('comments', `/api/v1/comments?status=${status}`, 'comments')).map((c) => ({ ...c, listedAs: status })));
  // Stats of the whole run (from the day before it began: the site's day may differ from UTC's),
  // read after a few flush intervals.
  await sleep(3 * ANALYTICS_FLUSH_MS);
  const statsFrom = new Date(Date.now() - at() - 86_400_000).toISOString().slice(0, 10);
  let statsRes = null;
  for (let attempt = 0; attempt < 5 && statsRes?.status !== 200; attempt++) {
    if (attempt) await sleep(2000);
    statsRes = await call('GET', 'check', `/api/v1/stats?from=${statsFrom}`);
  }
  const runStats = statsRes?.status === 200 ? data(statsRes) : null;
  clearInterval(sampler);
  clearInterval(forcedGc);
  clearInterval(orphanWatch);
  sampleProcesses();

  // --- checks -----------------------------------------------------------------------------------
  const checks = [];
  const check = (name, ok, detail) => checks.push({ name, ok, detail });
  const inWindow = (t, windows, slackMs) => windows.some((w) => t >= w.from - 1000 && t <= w.to + slackMs);

  // 5xx
  const fiveXx = records.filter((r) => r.status >= 500);
  // A request in flight when an outage begins (sent before it, answered in it) may meet it too.
  const allowed = fiveXx.filter((r) => (r.status === 503 || r.status === 507) && outages.some((w) => r.t + r.ms >= w.from - 1000 && r.t <= w.to + 15_000));
  const bad5xx = fiveXx.filter((r) => !allowed.includes(r));
  const group = (list) =>
    Object.entries(
      list.reduce((m, r) => {
        const k = `${r.status} ${r.code ?? ''} ${r.route === 'read' && r.path ? r.path : r.route}`;
        m[k] = (m[k] ?? 0) + 1;
        return m;
      }, {}),
    )
      .map(([k, v]) => `${k} x${v}`)
      .join('; ');
  check('no 5xx but 503/507 during outages', bad5xx.length === 0, `${records.length} requests; ${allowed.length} allowed 503/507${allowed.length ? ` (${group(allowed)})` : ''}${bad5xx.length ? `; NOT allowed: ${group(bad5xx)} at ${bad5xx.map((r) => `${round(r.t / 1000, 0)} s`).join(', ')}` : ''}`);
  const limited = records.filter((r) => r.status === 429);
  check('within the rate limits (no 429)', limited.length === 0, limited.length ? group(limited) : 'none');
  const refused = records.filter((r) => r.status === 0);
  const refusedOutside = refused.filter((r) => !inWindow(r.t + r.ms, killWindows, 0));
  check('no connection errors but while a server is down', refusedOutside.length === 0, `${refused.length} during kills${refusedOutside.length ? `; outside: ${group(refusedOutside)}` : ''}`);

  // staff sessions: a session signed in and not signed out is never refused (401/403), kills and outages or not
  const staffRecords = records.filter((r) => r.route.startsWith('staff-') && r.route !== 'staff-invite');
  const staffRefused = staffRecords.filter((r) => r.status === 401 || r.status === 403);
  const staffStatus = staffRecords.reduce((m, r) => ((m[r.status] = (m[r.status] ?? 0) + 1), m), {});
  const staffRoutes = staffRecords.reduce((m, r) => ((m[r.route.slice(6)] = (m[r.route.slice(6)] ?? 0) + 1), m), {});
  const staffInstances = staffRecords.reduce((m, r) => ((m[r.inst] = (m[r.inst] ?? 0) + 1), m), {});
  check(
    'staff sessions survive kills and outages (no 401/403 for a signed-in session)',
    staffRecords.length > 0 && staffRefused.length === 0,
    `${staffRecords.length} staff requests ${JSON.stringify(staffRoutes)}, answers ${JSON.stringify(staffStatus)}, by instance ${JSON.stringify(staffInstances)}, ${staffSignIns} sign-ins again${staffRefused.length ? `; REFUSED: ${group(staffRefused)} at ${staffRefused.slice(0, 8).map((r) => `${round(r.t / 1000, 0)} s on ${r.inst} (${r.staff})`).join(', ')}` : ''}`,
  );

  // analytics: views counted vs the browsers' 200 reads of counted pages
  const countedReads = records.filter((r) => r.route === 'read' && r.counted && r.status === 200);
  const human = countedReads.filter((r) => r.ua === 'human');
  const bots = countedReads.length - human.length;
  // The documented loss: views still in memory when a server is SIGKILLed (up to a flush
  // interval, 3 of them allowed under load), and flushes that fail while the database or disk is
  // out (their batch is lost), with slack after the outage.
  const lossWindows = [...killWindows.map((w) => ({ from: w.from - 3 * ANALYTICS_FLUSH_MS, to: w.from })), ...outages.filter((o) => o.what !== 'storage').map((o) => ({ from: o.from - 1000, to: o.to + 10_000 }))];
  const atRisk = human.filter((r) => lossWindows.some((w) => r.t >= w.from && r.t <= w.to)).length;
  const viewed = runStats?.totals?.views ?? null;
  const floor = human.length - atRisk - Math.max(5, Math.ceil(human.length * 0.02));
  const lostWarnings = instances.flatMap((i) => i.servers ?? []).reduce((n, srv) => n + (srv.warnings().messages['warn: analytics: could not write counted views'] ?? 0), 0);
  check(
    'analytics: views counted = browser reads, less the documented loss (kills, outages); bots not counted',
    viewed !== null && viewed <= human.length && viewed >= floor,
    viewed === null
      ? `stats not read: ${statsRes?.status} ${statsRes?.text?.slice(0, 200)}`
      : `${viewed} views counted of ${human.length} browser 200s (ratio ${round(viewed / Math.max(1, human.length), 3)}; ${human.length - viewed} missing, ${atRisk} read within a flush before a kill or in an outage; floor ${floor}), ${bots} bot 200s; ${runStats.totals.visitors} visitors; ${lostWarnings} failed-flush warnings in the logs; stats reads during the load ${group(records.filter((r) => r.route.endsWith('stats')))}`,
  );

  // tasks
  const byId = new Map(tasks.map((x) => [x.id, x]));
  const lost = submittedTasks.filter((s) => !byId.has(s.id));
  const counts = tasks.reduce((m, x) => ((m[x.status] = (m[x.status] ?? 0) + 1), m), {});
  const postsByTag = new Map();
  for (const p of posts) for (const tag of p.tags ?? []) if (tag.startsWith('soak-task-')) postsByTag.set(tag, [...(postsByTag.get(tag) ?? []), p.id]);
  const doubled = [];
  const unexplained = [];
  for (const s of submittedTasks) {
    const task = byId.get(s.id);
    if (!task) continue;
    const made = postsByTag.get(s.tag) ?? [];
    if (made.length > 1) doubled.push(`${s.tag}: ${made.length} posts`);
    if (task.status === 'succeeded' && (made.length !== 1 || made[0] !== task.postId)) unexplained.push(`${s.id} succeeded, posts ${made.length}, postId ${task.postId}`);
    else if (task.status === 'failed' && !task.lastError) unexplained.push(`${s.id} failed without a reason`);
    else if (task.status !== 'succeeded' && task.status !== 'failed') unexplained.push(`${s.id} ${task.status} after the drain`);
    else if (task.status === 'failed' && made.length) unexplained.push(`${s.id} failed but made a post`);
  }
  check('every task succeeded or failed for a stated reason', unexplained.length === 0, `${submittedTasks.length} tasks: ${JSON.stringify(counts)}${unexplained.length ? `; ${unexplained.slice(0, 5).join('; ')}` : ''}`);
  check('no task lost, none doubled (one post per task)', !lost.length && !doubled.length, `${lost.length} lost, ${doubled.length} doubled${doubled.length ? `: ${doubled.slice(0, 5).join('; ')}` : ''}`);
  const failedReasons = [...new Set(tasks.filter((x) => x.status === 'failed').map((x) => x.lastError))];
  if (failedReasons.length) console.log(`  failed tasks' reasons: ${failedReasons.join(' | ')}`);

  // webhooks
  const received = new Map(); // delivery id -> outcomes
  for (const r of receiver.receipts) received.set(r.id, [...(received.get(r.id) ?? []), r.outcome]);
  // outages and kills, for reading the rest
  console.log(`  outages: ${outages.map((o) => `${o.what} ${round(o.from / 1000, 0)}-${round(o.to / 1000, 0)} s`).join(', ') || 'none'}; servers down: ${killWindows.map((w) => `${round(w.from / 1000, 0)}-${round(w.to / 1000, 0)} s`).join(', ')}`);
  const notDelivered = deliveries.filter((d) => !(received.get(d.id) ?? []).includes(200));
  const eventIds = new Map();
  for (const r of receiver.receipts) {
    const resource = r.body?.data?.comment ?? r.body?.data?.post ?? r.body?.data?.task ?? r.body?.data?.knowledge ?? r.body?.data?.newsletter;
    const key = `${r.body?.type} ${resource?.id ?? resource?.postId} ${r.body?.timestamp}`;
    eventIds.set(key, new Set([...(eventIds.get(key) ?? []), r.id]));
  }
  const multi = [...eventIds.entries()].filter(([, ids]) => ids.size > 1);
  const dStatus = deliveries.reduce((m, d) => ((m[d.status] = (m[d.status] ?? 0) + 1), m), {});
  check('every webhook event delivered at least once', notDelivered.length === 0, `${deliveries.length} deliveries ${JSON.stringify(dStatus)}, ${receiver.receipts.length} attempts received (${receiver.receipts.filter((r) => r.outcome !== 200).length} refused or left hanging)${notDelivered.length ? `; not delivered: ${notDelivered.slice(0, 5).map((d) => `${d.event} ${d.status} ${d.lastError ?? ''}`).join('; ')}` : ''}`);
  check('no event under two webhook-ids', multi.length === 0, multi.length ? multi.slice(0, 3).map(([k, ids]) => `${k}: ${[...ids].join(', ')}`).join('; ') : `${eventIds.size} distinct events`);

  // uploads
  const fileById = new Map(files.map((f) => [f.id, f]));
  const badUploads = uploads.filter((u) => {
    const f = fileById.get(u.id);
    return !f || !(f.status === 'indexed' || (f.status === 'failed' && f.error));
  });
  const fStatus = files.reduce((m, f) => ((m[f.status] = (m[f.status] ?? 0) + 1), m), {});
  const uploadRefusals = records.filter((r) => r.route === 'knowledge-upload' && r.status >= 400 && r.status < 500);
  check('every upload indexed or failed with a readable error', badUploads.length === 0, `${uploads.length} accepted ${JSON.stringify(fStatus)}; refused at once: ${group(uploadRefusals) || 'none'}${badUploads.length ? `; NOT: ${badUploads.slice(0, 5).map((u) => `${u.name} ${fileById.get(u.id)?.status ?? 'missing'}`).join('; ')}` : ''}`);
  const failedReasonsFiles = [...new Set(files.filter((f) => f.status === 'failed').map((f) => f.error))];
  if (failedReasonsFiles.length) console.log(`  knowledge files' failure reasons: ${failedReasonsFiles.join(' | ')}`);
  const badMedia = mediaAnswers.filter((m) => m.status >= 400 && m.status < 500 && !m.message);
  const mStatus = mediaAnswers.reduce((m, a) => ((m[`${a.name} ${a.status}`] = (m[`${a.name} ${a.status}`] ?? 0) + 1), m), {});
  check('every image upload stored or refused with a readable error', badMedia.length === 0, JSON.stringify(mStatus));

  // comments: every one answered 201/303 exists once, none answered otherwise exists, the rest at most once; moderation as set
  const commentsByMarker = new Map();
  for (const c of listedComments) {
    const marker = /soak-c-[0-9a-f-]{36}/.exec(c.body ?? '')?.[0];
    if (marker) commentsByMarker.set(marker, [...(commentsByMarker.get(marker) ?? []), c]);
  }
  const accepted = comments.filter((c) => c.answer === 201 || c.answer === 303);
  const commentLost = accepted.filter((c) => c.state !== 'deleted' && c.state !== 'unknown' && !(commentsByMarker.get(c.marker) ?? []).length);
  const commentDoubled = comments.filter((c) => (commentsByMarker.get(c.marker) ?? []).length > 1);
  const refusedButThere = comments.filter((c) => c.answer !== 201 && c.answer !== 303 && c.answer !== 0 && c.answer < 500 && (commentsByMarker.get(c.marker) ?? []).length);
  const unanswered = comments.filter((c) => c.answer === 0 || c.answer >= 500);
  const commentAnswers = comments.reduce((m, c) => ((m[`${c.via} ${c.answer}`] = (m[`${c.via} ${c.answer}`] ?? 0) + 1), m), {});
  check(
    'comments: every one answered 201/303 exists exactly once (none lost, none doubled); none refused exists',
    accepted.length > 0 && !commentLost.length && !commentDoubled.length && !refusedButThere.length,
    `${comments.length} submitted ${JSON.stringify(commentAnswers)}; ${listedComments.length} listed; ${unanswered.length} unanswered (${unanswered.filter((c) => commentsByMarker.has(c.marker)).length} of them exist)${commentLost.length ? `; LOST ${commentLost.length}: ${commentLost.slice(0, 3).map((c) => c.marker).join(', ')}` : ''}${commentDoubled.length ? `; DOUBLED ${commentDoubled.length}` : ''}${refusedButThere.length ? `; refused but there: ${refusedButThere.length}` : ''}`,
  );
  const moderated = comments.filter((c) => c.id && (c.answer === 201) && c.state !== 'unknown');
  const wrongState = moderated.filter((c) => {
    const found = commentsByMarker.get(c.marker) ?? [];
    return c.state === 'deleted' ? found.length !== 0 : found.length !== 1 || found[0].listedAs !== c.state || found[0].id !== c.id;
  });
  const states = moderated.reduce((m, c) => ((m[c.state] = (m[c.state] ?? 0) + 1), m), {});
  const moderation = records.filter((r) => r.route === 'moderate' || r.route === 'staff-moderate');
  const unknownState = comments.filter((c) => c.state === 'unknown');
  check(
    'comments: moderation states as set (approved, spam, pending; deleted ones gone)',
    moderation.length > 0 && wrongState.length === 0,
    `${moderation.length} moderations (${moderation.filter((r) => r.staff).length} by staff cookie) ${group(moderation) || ''}; final states ${JSON.stringify(states)}; ${unknownState.length} left unknown (no answer${unknownState.some((c) => c.refusal) ? `, or ${[...new Set(unknownState.map((c) => c.refusal).filter(Boolean))].slice(0, 3).join(' | ')}` : ''})${wrongState.length ? `; WRONG: ${wrongState.slice(0, 5).map((c) => `${c.id} set ${c.state}, found ${(commentsByMarker.get(c.marker) ?? []).map((x) => x.listedAs).join('+') || 'none'}`).join('; ')}` : ''}`,
  );

  // newsletters: each subscriber gets each newsletter once (a duplicate allowed per SIGKILL and per SMTP stop during that send); each send ends `sent`
  const subscriberSet = new Set([...readers, ...signups.map((x) => x.email)]);
  const postById = new Map(posts.map((p) => [p.id, p]));
  const newsletterProblems = [];
  const sends = [...newsletters.entries()].filter(([, n]) => n.status !== 'none');
  const batchPublished = tasks.filter((x) => x.postId && postById.get(x.postId) && !postById.get(x.postId).isDraft);
  const batchUnsent = batchPublished.filter((x) => postById.get(x.postId).visibility !== 'unlisted' && newsletters.get(x.postId)?.status === 'none');
  if (batchUnsent.length) newsletterProblems.push(`${batchUnsent.length} published batch posts without a newsletter`);
  const newsletterLines = [];
  let mailsCounted = 0;
  let duplicates = 0;
  for (const [id, n] of sends) {
    const slug = postById.get(id)?.slug ?? newsletterPosts.find((p) => p.id === id)?.slug;
    const mine = mailsOf(slug);
    mailsCounted += mine.length;
    const perAddress = new Map();
    for (const m of mine) for (const to of m.to) perAddress.set(to, (perAddress.get(to) ?? 0) + 1);
    const first = Math.min(...mine.map((m) => m.t));
    const last = Math.max(...mine.map((m) => m.t));
    const killsDuring = killWindows.filter((w) => w.from >= first - 2000 && w.from <= last).length;
    const stopsDuring = mailOutages.filter((o) => o.from >= first && o.from <= last).length;
    const extra = [...perAddress.values()].reduce((sum, k) => sum + k - 1, 0);
    duplicates += extra;
    const missing = readers.filter((r) => !perAddress.has(r));
    const created = n.createdAt ? Date.parse(n.createdAt) : null;
    const signupsDue = signups.filter((x) => x.confirmedWall && created && x.confirmedWall < created - 2000);
    const signupsMissing = signupsDue.filter((x) => !perAddress.has(x.email));
    const strangers = [...perAddress.keys()].filter((a) => !subscriberSet.has(a));
    const label = newsletterPosts.find((p) => p.id === id)?.what ?? 'batch post';
    newsletterLines.push(`${label}: ${perAddress.size} addresses, ${mine.length} mails, ${extra} duplicates (${killsDuring} kills, ${stopsDuring} SMTP stops during it), ${n.status} ${n.sent}/${n.recipients} failed ${n.failed} bounced ${n.bounced}`);
    if (n.status !== 'sent') newsletterProblems.push(`${label} ${id} ended ${n.status}`);
    if (missing.length) newsletterProblems.push(`${label}: ${missing.length} imported readers got nothing (${missing.slice(0, 3).join(', ')})`);
    if (signupsMissing.length) newsletterProblems.push(`${label}: ${signupsMissing.length} confirmed sign-ups got nothing`);
    if (strangers.length) newsletterProblems.push(`${label}: mailed to non-subscribers ${strangers.slice(0, 3).join(', ')}`);
    if (extra > killsDuring + stopsDuring) newsletterProblems.push(`${label}: ${extra} duplicates for ${killsDuring} kills and ${stopsDuring} SMTP stops`);
    if (n.recipients !== perAddress.size) newsletterProblems.push(`${label}: ${n.recipients} recipients recorded, ${perAddress.size} addresses mailed`);
  }
  check(
    'newsletters: every subscriber got each newsletter exactly once (a duplicate allowed per SIGKILL or SMTP stop during its send); every send ended sent',
    sends.length >= newsletterPosts.length && newsletterPosts.length >= 3 && newsletterProblems.length === 0,
    `${sends.length} sends (${newsletterPosts.length} newsletter posts, ${sends.length - newsletterPosts.filter((p) => newsletters.has(p.id)).length} batch posts of ${batchPublished.length} published), ${mailsCounted} newsletter mails, ${duplicates} duplicates, ${smtp.mails.length} mails in all; SMTP stops: ${mailOutages.map((o) => `${round(o.from / 1000, 0)}-${round(o.to / 1000, 0)} s`).join(', ') || 'none'}${newsletterProblems.length ? `; PROBLEMS: ${newsletterProblems.slice(0, 6).join('; ')}` : ''}`,
  );
  for (const line of newsletterLines) console.log(`    ${line}`);
  const signupAnswers = signups.reduce((m, x) => ((m[`${x.answer}/${x.confirmAnswer ?? 'no mail'}`] = (m[`${x.answer}/${x.confirmAnswer ?? 'no mail'}`] ?? 0) + 1), m), {});
  const unconfirmed = signups.filter((x) => x.answer === 202 && !x.confirmed);
  check('sign-ups: every one answered 202 got its mail and was confirmed by its link', unconfirmed.length === 0, `${signups.length} sign-ups, answers/confirmations ${JSON.stringify(signupAnswers)}${unconfirmed.length ? `; NOT confirmed: ${unconfirmed.length}` : ''}`);

  // children
  const extractorParents = [...extractorSeen.values()].filter((x) => !x.parent).length;
  check(
    `no extractor or other child outliving its server by more than ${ORPHAN_GRACE_MS / 1000} s`,
    outlived.length === 0,
    `${killedAt.size} kills, ${extractorSeen.size} extractors seen (${extractorParents} without EXTRACTOR_PARENT_PID); children at kill time: ${[...childSnapshots.values()].map((k) => k.length).join(', ')}${outlived.length ? `; OUTLIVED: ${JSON.stringify(outlived.slice(0, 5))}` : ''}`,
  );

  // memory, fds, WAL over the last half
  const witness = instances[0];
  // Only the witness's last process (a restart in the last half would hide growth behind a fresh start).
  const lastHalf = samples.filter((s) => s.inst === witness.name && s.pid === witness.server.pid && s.t >= RUN_MS / 2 && s.t <= RUN_MS);
  const q3 = lastHalf.filter((s) => s.t < (RUN_MS * 3) / 4);
  const q4 = lastHalf.filter((s) => s.t >= (RUN_MS * 3) / 4);
  const growth = (field) => {
    const a = median(q3.map((s) => s[field]).filter((v) => v !== null));
    const b = median(q4.map((s) => s[field]).filter((v) => v !== null));
    return { a, b, g: a ? (b - a) / a : null };
  };
  const samePid = witness.pids.every((pid, i) => i === witness.pids.length - 1 || !samples.some((s) => s.pid === pid && s.t >= RUN_MS / 2));
  // A process restarted shortly before the last half is still warming up (caches, the builtin
  // generator's model, connection pools): then there is nothing to judge, and it says so.
  const warmUpMs = Math.min(5 * 60_000, RUN_MS / 10);
  const witnessStart = samples.find((s) => s.pid === witness.server.pid)?.t ?? 0;
  const tooFresh = witnessStart > RUN_MS / 2 - warmUpMs;
  const rss = growth('rss');
  const fds = growth('fds');
  const pct = (g) => (g === null ? 'n/a' : `${g >= 0 ? '+' : ''}${round(g * 100, 1)} %`);
  check(
    'RSS flat over the last half (median of 4th quarter vs 3rd, < 10 %)',
    tooFresh ? null : rss.g !== null && rss.g < 0.1,
    `${witness.name}${samePid ? '' : ' (restarted within the last half: its last process only)'}: ${round(rss.a, 1)} -> ${round(rss.b, 1)} MB (${pct(rss.g)}), ${q3.length}+${q4.length} samples`,
  );
  check('open fds flat over the last half (same medians, < 10 %)', tooFresh ? null : fds.g !== null && fds.g < 0.1, `${fds.a} -> ${fds.b} (${pct(fds.g)})`);
  if (tooFresh) console.log(`  (memory and fds not judged: ${witness.name}'s last process started at ${round(witnessStart / 1000, 0)} s, less than ${round(warmUpMs / 1000, 0)} s before the last half)`);
  if (walFile) {
    const walMax = (list) => Math.max(0, ...list.map((s) => s.wal ?? 0));
    const a = walMax(q3);
    const b = walMax(q4);
    const all = walMax(samples);
    const ok = b <= a * 1.1 + 4 * 2 ** 20 && all < 256 * 2 ** 20;
    check('SQLite WAL checkpointed (max of 4th quarter <= 3rd + 10 %, 4 MB slack)', ok, `WAL max ${round(a / 2 ** 20, 1)} MB (3rd quarter), ${round(b / 2 ** 20, 1)} MB (4th), ${round(all / 2 ** 20, 1)} MB overall`);
  }
  if (kind === 'sqlite') check('full disk reached', fullDiskResult.filled ? true : null, fullDiskResult.filled ? `${round(fullDiskResult.bytes / 2 ** 20, 0)} MB of ballast` : `skipped: ${fullDiskResult.why}`);

  // p99 of reads per window
  const reads = records.filter((r) => r.route === 'read' && r.status > 0 && r.status < 500);
  const windows = [];
  for (let from = 0; from < RUN_MS; from += WINDOW_MS) {
    const inIt = reads.filter((r) => r.t >= from && r.t < from + WINDOW_MS).map((r) => r.ms);
    const faults = [
      ...events.filter((e) => e.t >= from && e.t < from + WINDOW_MS && /SIGKILL|outage|full disk|burner|newsletter post/.test(e.what)).map((e) => e.what.split(/[:(]/)[0].trim()),
    ];
    const mine = samples.filter((x) => x.inst === witness.name && x.t >= from && x.t < from + WINDOW_MS);
    windows.push({
      window: `${round(from / 60_000, 0)}-${round((from + WINDOW_MS) / 60_000, 0)} min`,
      reads: inIt.length,
      p50: round(percentile(inIt, 50), 0),
      p99: round(percentile(inIt, 99), 0),
      rss: mine.length ? round(median(mine.map((x) => x.rss).filter((v) => v !== null)), 0) : null,
      fds: mine.length ? median(mine.map((x) => x.fds).filter((v) => v !== null)) : null,
      faults: faults.join(', '),
    });
  }

  // The witness's memory by part (the probe's lines, MB): which one grows. "workers" is its worker
  // threads' heaps and external memory (the builtin composer's language model among them);
  // "other" is RSS less all that: native allocations (malloc's arenas: libvips, SQLite, V8's
  // compilers), code, stacks.
  const wallStart = Date.now() - at();
  const probeFile = (file) => {
    try {
      return fs.readFileSync(path.join(probeDir, file), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)).map((x) => ({ ...x, t: x.t - wallStart }));
    } catch {
      return [];
    }
  };
  const probeLines = witness.pids.flatMap((pid) => {
    const threads = fs.readdirSync(probeDir).filter((file) => file.startsWith(`${pid}.worker`)).map(probeFile);
    // Each thread's line written nearest to the main thread's (all write every PROBE_MS).
    const workersAt = (t) => threads.reduce((sum, lines) => {
      const near = lines.filter((x) => Math.abs(x.t - t) < PROBE_MS / 2 && x.liveHeap === undefined);
      return sum + (near.length ? near[0].heapTotal + near[0].external : 0);
    }, 0);
    return probeFile(`${pid}.jsonl`).map((x) => ({ ...x, pid, workers: workersAt(x.t) }));
  });
  const partsOf = (lines) => {
    const plain = lines.filter((x) => x.liveHeap === undefined).map((x) => ({ ...x, other: x.rss - x.heapTotal - x.external - x.workers }));
    const out = Object.fromEntries(MEMORY_PARTS.map((k) => [k, plain.length ? round(median(plain.map((x) => x[k])), 0) : null]));
    out.liveHeap = lines.filter((x) => x.liveHeap !== undefined).map((x) => round(x.liveHeap, 0));
    out.n = plain.length;
    return out;
  };
  const memoryWindows = [];
  for (let from = 0; from < RUN_MS; from += MEMORY_WINDOW_MS) {
    const lines = probeLines.filter((x) => x.t >= from && x.t < from + MEMORY_WINDOW_MS);
    const pids = [...new Set(lines.map((x) => x.pid))];
    memoryWindows.push({ window: `${round(from / 60_000, 0)}-${round((from + MEMORY_WINDOW_MS) / 60_000, 0)} min`, pids, ...partsOf(lines) });
  }
  const lastProcess = probeLines.filter((x) => x.pid === witness.server.pid && x.t >= RUN_MS / 2 && x.t <= RUN_MS);
  const memoryQuarters = { q3: partsOf(lastProcess.filter((x) => x.t < (RUN_MS * 3) / 4)), q4: partsOf(lastProcess.filter((x) => x.t >= (RUN_MS * 3) / 4)) };

  for (const inst of instances) await inst.server.stop();
  await receiver.close();
  return { label, checks, windows, memoryWindows, memoryQuarters, witness: witness.name, samples: samples.length, records: records.length, events };
}

const run = (cmd, args) =>
  new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')}: exit ${code} ${err.trim()}`))));
  });

// ---------------------------------------------------------------------------------------------

let failed = false;
await runBench(
  'bench/soak',
  async () => {
    console.log(`plan: ${SETUPS.join(' then ')}, ${MINUTES} min each${QUICK ? ' (--quick)' : ''}, ${USERS} users; outages ${OUTAGE_MS / 1000} s; read p99 per ${WINDOW_MS / 60_000} min window`);
    const results = [];
    for (const kind of SETUPS) {
      try {
        results.push(await runSetup(kind));
      } catch (error) {
        // One setup's failure must not hide the other's results.
        console.error(`\n${kind} setup failed: ${error?.stack ?? error}`);
        results.push({ label: kind, checks: [{ name: 'the setup ran to its end', ok: false, detail: String(error?.message ?? error).slice(0, 300) }], windows: [], samples: 0, records: 0 });
      }
    }
    for (const result of results) {
      console.log(`\n--- ${result.label} ---`);
      if (result.skipped) {
        console.log(`skipped: ${result.skipped}`);
        continue;
      }
      console.log(`${result.records} requests, ${result.samples} samples`);
      console.log(`read latency per minute (public pages, feeds, content API, post lists), ms; the first instance's median RSS (MB) and open fds:`);
      for (const w of result.windows) console.log(`  ${w.window.padEnd(12)} n=${String(w.reads).padEnd(5)} p50 ${String(w.p50).padStart(5)}  p99 ${String(w.p99).padStart(6)}  rss ${String(w.rss ?? '-').padStart(4)}  fds ${String(w.fds ?? '-').padStart(4)}  ${w.faults}`);
      if (result.memoryWindows?.length) {
        console.log(`${result.witness}'s memory per ${MEMORY_WINDOW_MS / 60_000} min (medians of process.memoryUsage() every ${PROBE_MS / 1000} s, MB; workers = worker threads' heapTotal + external; other = rss - heapTotal - external - workers; live = heap after a forced full collection):`);
        const cell = (v, width = 5) => String(v ?? '-').padStart(width);
        for (const w of result.memoryWindows) {
          console.log(`  ${w.window.padEnd(12)} rss ${cell(w.rss)}  heapTotal ${cell(w.heapTotal)} (young ${cell(w.young, 3)})  heapUsed ${cell(w.heapUsed)}  external ${cell(w.external)}  arrayBuffers ${cell(w.arrayBuffers)}  workers ${cell(w.workers)}  other ${cell(w.other)}  live ${w.liveHeap.join(', ') || '-'}${w.pids.length > 1 ? `  (pids ${w.pids.join(', ')})` : ''}`);
        }
        const { q3, q4 } = result.memoryQuarters;
        console.log(`  last process, 3rd -> 4th quarter: ${MEMORY_PARTS.map((k) => `${k} ${q3[k] ?? '-'} -> ${q4[k] ?? '-'}`).join(', ')}; live ${q3.liveHeap.join(', ') || '-'} -> ${q4.liveHeap.join(', ') || '-'}`);
      }
      for (const c of result.checks) {
        const mark = c.ok === null ? 'skip' : c.ok ? 'pass' : 'MISS';
        if (c.ok === false) failed = true;
        console.log(`  ${mark.padEnd(4)} ${c.name}: ${c.detail}`);
      }
    }
    if (failed) throw new Error('at least one check MISSed (above)');
  },
  { timeLimitMs: SETUPS.length * (RUN_MS + DRAIN_MS + 240_000) },
);
