// npm run bench:newsletter: a post's newsletter to 2,000 subscribers, on SQLite and on PostgreSQL.
//
// The SMTP server is smtp-server in this process, counting each message by its RCPT TO. For
// each database:
// (1) Three clean sends from one server: a post to every subscriber, then, once it is sent,
//     another post to the same subscribers, and a third. Every address must receive each
//     exactly once. Messages per second from the first mail received to the last, against the
//     SMTP server's own receive rate, measured right after these sends and timed the same way:
//     the same message (the service's own, as received) sent to it 2,000 times by Nodemailer
//     alone over two pooled connections, two messages in flight as the service sends them
//     (smtp-session.ts), from a thread of its own as the service sends from a process of its
//     own (target: at least 0.7 of it). The SMTP server is warmed up first (10,000 messages),
//     and its own rate is the median of three such measurements. The service is warmed up the
//     same way: the first send of a fresh server ("cold send") compiles its code as it goes
//     (0.1-0.2 ms more CPU a message than the sends after it) and fills its caches and pools;
//     its rate is printed, and the rate is judged on the two sends after it.
//     serverCpuMsPerMail: the service process's CPU time over the send, per message.
//     Memory flat, judged on the sends after the cold one: the heap alive after a full
//     collection may grow at most 2 MB over it (a server preloads bench/memory-probe.mjs, which
//     collects and reports on SIGUSR2, before the first send and after each), and the RSS,
//     sampled when the post is published (just after that collection), every 250 ms and once it
//     is sent, at most 30 MB beyond what the young generation's pages grew (heldGrowthMb:
//     growthMb less youngGrowthMb, the new spaces' physical size as V8 reports it at the
//     collections before and after the send).
//     RSS alone cannot tell a leak: V8 sizes its heap to the garbage it makes and keeps the
//     pages. Without the collections between sends, a server's RSS climbed by 15-40 MB a send
//     for the first five or six sends of 2,000 and then stayed within about 1 MB a send, while
//     the heap alive after a collection stayed within 0.2 MB a send throughout (10 sends,
//     SQLite, Node 24). With them, V8 still doubles its young generation (64 -> 128 MB of
//     space on Node 24 here) when allocation stays fast, at a moment of its choosing: in most
//     runs during the second judged send, whose RSS then grew by 25-31 MB, 20-26 MB of it the
//     young generation's new pages, while the live heap grew by 0.2-0.3 MB.
// (2) One send with the server SIGKILLed twice (at a third and at two thirds of the mails
//     received) and started again each time: every address must receive the post, with at most
//     one duplicate per kill.
// MAIL_RATE_PER_MINUTE is set far above what two connections carry (no bound), JOB_LEASE_MS to
// 5 s (a killed instance's claims pass on after it; on SQLite a restart takes them at once).
// JOB_POLL_MS stays at its default (1 s), as deployed: polled ten times a second, the service's
// job loops (release and claim, a transaction each) took about a tenth of its CPU during a send.
//
// BENCH_SUBSCRIBERS changes the count; BENCH_DATABASES=sqlite or =postgres runs one of them.
// PostgreSQL's part is skipped, saying why, when no PostgreSQL can be had. Run after `npm run
// build` (npm run bench:newsletter does). About 3 minutes on 2 busy cores; the machine's load
// moves both rates, so compare ratios over several runs.

import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { benchPostgres, postgresUnavailable } from './postgres-cluster.mjs';
import { apiClient, BENCH_DIR, cpuSeconds, makeApiKey, median, multipartFile, pollUntil, printTable, ratio, request, round, rssMb, runBench, sleep, startServer, tempDir, verdict } from './lib.mjs';

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 2000);
const TARGET_RATIO = 0.7;
const FLAT_MB = 30;
/** Most the heap alive after a full collection may grow over a warm server's send (under 1 KB a message at 2,000). */
const FLAT_LIVE_MB = 2;

/** An SMTP server that keeps counts: messages per recipient, arrival times, the last message as it arrived. */
async function startSink() {
  const sink = { perAddress: new Map(), times: [], lastRaw: null, count: 0 };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks = [];
      stream.on('data', (chunk) => chunks.push(chunk));
      stream.on('end', () => {
        for (const to of session.envelope.rcptTo) sink.perAddress.set(to.address, (sink.perAddress.get(to.address) ?? 0) + 1);
        sink.times.push(performance.now());
        sink.count++;
        sink.lastRaw = Buffer.concat(chunks);
        callback();
      });
    },
  });
  // A killed server's connection resets: nothing to report.
  server.on('error', () => {});
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    sink,
    url: `smtp://127.0.0.1:${server.server.address().port}`,
    port: server.server.address().port,
    reset() {
      sink.perAddress = new Map();
      sink.times = [];
      sink.count = 0;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * The SMTP server's own receive rate: `raw` sent `count` times by Nodemailer over
 * OWN_CONNECTIONS pooled connections, from a thread of its own (as the service sends from a
 * process of its own, the sender does not take the SMTP server's turns on this thread's event
 * loop). Timed as the
 * service's sends are: from the first message received to the last.
 */
async function ownRate(smtp, raw, count) {
  smtp.reset();
  const worker = new Worker(new URL(import.meta.url), { workerData: { port: smtp.port, raw, count } });
  await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  return count / ((smtp.sink.times.at(-1) - smtp.sink.times[0]) / 1000);
}

/** Connections the SMTP server's own rate is measured over: as many as the service sends over (SMTP_CONNECTIONS, src/newsletters/smtp-session.ts). */
const OWN_CONNECTIONS = 2;
/** Rounds of 2,000 messages that warm the SMTP server up before the first send. */
const WARM_UP_ROUNDS = 5;
/** A message of a newsletter's size for warming the SMTP server up before the first send. */
const warmUpMessage = `From: news@example.com\r\nTo: reader@example.com\r\nSubject: Warm-up\r\nContent-Type: text/plain\r\n\r\n${'A line of the warm-up message, as long as a paragraph is.\r\n'.repeat(120)}`;

/** The worker thread of ownRate. */
async function sendAlone({ port, raw, count }) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, pool: true, maxConnections: OWN_CONNECTIONS, maxMessages: Infinity });
  const message = Buffer.from(raw);
  // As many messages in flight as the service keeps, each over a connection of its own.
  let next = 0;
  const lane = async () => {
    while (next < count) await transport.sendMail({ envelope: { from: 'news@example.com', to: `baseline${next++}@example.com` }, raw: message });
  };
  await Promise.all(Array.from({ length: OWN_CONNECTIONS }, lane));
  transport.close();
  parentPort.postMessage('done');
}

/** The server's live heap after a full collection (bench/memory-probe.mjs, preloaded), its RSS and its young generation's pages then. */
async function probeMemory(server) {
  const before = server.logTail().lastIndexOf('memory-probe ');
  process.kill(server.pid, 'SIGUSR2');
  const line = await pollUntil(
    () => {
      const tail = server.logTail();
      const at = tail.lastIndexOf('memory-probe ');
      return at > before && tail.indexOf('\n', at) > at && tail.slice(at + 'memory-probe '.length, tail.indexOf('\n', at));
    },
    { intervalMs: 50, timeoutMs: 30_000, what: 'the memory probe' },
  );
  return JSON.parse(line);
}

/** Sends to SUBSCRIBERS addresses through one real server: `posts` posts one after the other, or one with `kills` SIGKILLs on the way. */
async function send(smtp, label, env, { kills = [], posts = 1 } = {}) {
  const dataDir = tempDir();
  const apiKey = makeApiKey();
  const serverEnv = {
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Bench <news@example.com>',
    MAIL_RATE_PER_MINUTE: '1000000',
    JOB_LEASE_MS: '5000',
    NODE_OPTIONS: `--import=${path.join(BENCH_DIR, 'memory-probe.mjs')}`,
    ...env,
  };
  // The first site (and its key) is made once the server listens: wait for the key to work.
  const start = async () => {
    const started = await startServer({ dataDir, apiKey, env: serverEnv, readyTimeoutMs: 60_000 });
    const client = apiClient(started, apiKey);
    await pollUntil(async () => (await client.get('/api/v1/site')).status === 200, { intervalMs: 50, timeoutMs: 30_000, what: 'the bootstrap key to work' });
    return { started, client };
  };
  let { started: server, client: api } = await start();
  const ok = (answer, what) => {
    if (answer.status >= 300) throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
    return answer.json();
  };
  ok(await request(server.baseUrl, 'PATCH', '/api/v1/site', { body: { newsletter: { enabled: true, senderName: 'Bench Notes' } }, headers: api.auth }), 'newsletter on');
  const addresses = Array.from({ length: SUBSCRIBERS }, (_, i) => `reader${i}@example.com`);
  const file = multipartFile('list.csv', Buffer.from(`email\n${addresses.join('\n')}\n`), 'text/csv');
  const imported = ok(await api.post('/api/v1/subscribers/import', file.body, { headers: { 'content-type': file.contentType } }), 'import');
  if (imported.data.imported !== SUBSCRIBERS) throw new Error(`imported ${imported.data.imported}`);
  const content = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of the bench issue, with [a link](https://example.com/${i}) and **some emphasis** to render.`).join('\n\n');

  let rss = [];
  const sampler = setInterval(() => {
    const mb = rssMb(server.pid);
    if (mb !== null) rss.push(mb);
  }, 250);
  const rows = [];
  try {
    // The clean sends' memory: the live heap and the young generation's pages before the first
    // send and after each (a full collection each time).
    let probed = kills.length ? null : await probeMemory(server);
    for (let n = 1; n <= posts; n++) {
      smtp.reset();
      // RSS when the post is published (the server idle, the last send over), then during the send.
      rss = [rssMb(server.pid)];
      const cpuBefore = kills.length ? null : cpuSeconds(server.pid);
      const post = ok(await api.post('/api/v1/posts', { title: `Bench issue ${n} (${label})`, content, isDraft: false }), 'publish').data.post;
      for (const [i, fraction] of kills.entries()) {
        await pollUntil(() => smtp.sink.count >= Math.floor(SUBSCRIBERS * fraction), { intervalMs: 5, timeoutMs: 120_000, what: `${fraction} of the mails (kill ${i + 1})` });
        process.kill(server.pid, 'SIGKILL');
        await server.exited;
        ({ started: server, client: api } = await start());
      }
      const progress = await pollUntil(
        async () => {
          const answer = await api.get(`/api/v1/posts/${post.id}/newsletter`);
          const newsletter = answer.status === 200 ? answer.json().data.newsletter : null;
          return newsletter?.status === 'sent' && newsletter;
        },
        // Four times as often as the admin's progress bar (every 2 s): each poll is work the
        // sending server does too (three queries), which at ten a second took about 5 % of its CPU.
        { intervalMs: 500, timeoutMs: 150_000, what: 'the send to finish' },
      );
      const cpuAfter = cpuBefore === null ? null : cpuSeconds(server.pid);
      const cpu = cpuAfter === null ? null : cpuAfter - cpuBefore;
      await sleep(200);
      rss.push(rssMb(server.pid));
      const seconds = (smtp.sink.times.at(-1) - smtp.sink.times[0]) / 1000;
      const counts = addresses.map((address) => smtp.sink.perAddress.get(address) ?? 0);
      const samples = rss.filter((mb) => mb !== null);
      const before = probed;
      probed = kills.length ? null : await probeMemory(server);
      const growthMb = samples.length ? round(samples.at(-1) - samples[0], 1) : null;
      const youngGrowthMb = probed ? round(probed.youngMb - before.youngMb, 1) : null;
      rows.push({
        run: kills.length ? label : n === 1 ? `${label}, cold send` : `${label}, send ${n - 1}`,
        cold: kills.length === 0 && n === 1,
        kills: kills.length,
        recipients: progress.recipients,
        sent: progress.sent,
        received: smtp.sink.count,
        missing: counts.filter((count) => count === 0).length,
        duplicates: counts.reduce((sum, count) => sum + Math.max(0, count - 1), 0),
        seconds: round(seconds, 2),
        perSecond: round(SUBSCRIBERS / seconds, 1),
        serverCpuMsPerMail: cpu === null ? null : round((cpu * 1000) / SUBSCRIBERS, 2),
        rssStartMb: samples[0] ?? null,
        rssPeakMb: samples.length ? Math.max(...samples) : null,
        rssEndMb: samples.at(-1) ?? null,
        growthMb,
        youngGrowthMb,
        heldGrowthMb: growthMb === null || youngGrowthMb === null ? null : round(growthMb - Math.max(0, youngGrowthMb), 1),
        liveHeapMb: probed?.liveHeapMb ?? null,
        liveGrowthMb: probed ? round(probed.liveHeapMb - before.liveHeapMb, 1) : null,
      });
    }
    return rows;
  } finally {
    clearInterval(sampler);
    await server.stop();
  }
}

if (!isMainThread) await sendAlone(workerData);
else await runBench(
  'bench/newsletter',
  async () => {
    const smtp = await startSink();
    // The SMTP server warmed up before anything is measured: in one process its receive rate
    // rose by about a quarter over its first 10,000 messages (900 -> 1,130 a second), so a rate
    // measured after a database's sends (and the other database's) met a faster server than
    // those sends had.
    for (let i = 0; i < WARM_UP_ROUNDS; i++) await ownRate(smtp, warmUpMessage, 2000);
    const rows = [];
    const only = process.env.BENCH_DATABASES ?? 'sqlite,postgres';
    const databases = only.includes('sqlite') ? [['SQLite', async () => ({})]] : [];
    const pgMissing = only.includes('postgres') ? postgresUnavailable() : 'not asked for (BENCH_DATABASES)';
    if (pgMissing) console.log(`PostgreSQL part skipped: ${pgMissing}`);
    else {
      const cluster = await benchPostgres();
      databases.push(['PostgreSQL', async () => ({ DATABASE_URL: await cluster.createDatabase('newsletter') })]);
    }
    for (const [name, envOf] of databases) {
      const clean = await send(smtp, name, await envOf(), { posts: 3 });
      // The server's own rate with the service's own message, measured right after the sends it is compared with.
      // The median of three: one measurement moved by a tenth between runs.
      const owns = [];
      for (let i = 0; i < 3; i++) owns.push(await ownRate(smtp, smtp.sink.lastRaw, SUBSCRIBERS));
      const own = median(owns);
      console.log(`${name}: the SMTP server's own rate, three measurements: ${owns.map((own) => round(own, 1)).join(', ')} messages/s`);
      const killed = await send(smtp, `${name}, 2 kills`, await envOf(), { kills: [1 / 3, 2 / 3] });
      rows.push(...[...clean, ...killed].map((row) => ({ ...row, ownPerSecond: round(own, 1) })));
    }
    await smtp.close();
    printTable(`newsletter to ${SUBSCRIBERS} subscribers (ownPerSecond: the SMTP server's own receive rate over ${OWN_CONNECTIONS} connections)`, rows.map(({ cold, ...row }) => ({
      ...row,
      ofOwnRate: ratio(row.perSecond, row.ownPerSecond, 2),
      exactlyOnce: verdict(row.kills === 0 ? row.missing === 0 && row.duplicates === 0 : row.missing === 0 && row.duplicates <= row.kills),
      // The first send of a fresh server compiles its code and grows it once (caches and pools filled): rate and flat are judged on the sends after it.
      rate: row.kills === 0 && !cold ? verdict(row.perSecond / row.ownPerSecond >= TARGET_RATIO) : '-',
      memoryFlat: row.kills === 0 && !cold ? verdict(row.heldGrowthMb !== null && row.heldGrowthMb <= FLAT_MB && row.liveGrowthMb <= FLAT_LIVE_MB) : '-',
    })));
  },
  { timeLimitMs: 600_000 },
);
