// npm run bench:newsletter: a post's newsletter to 2,000 subscribers, on SQLite and on PostgreSQL.
//
// The SMTP server is smtp-server in this process, counting each message by its RCPT TO. For
// each database:
// (1) A clean send: every address must receive exactly one mail. Messages per second from the
//     first mail received to the last, against the SMTP server's own receive rate: the same
//     message (the service's own, as received) sent to it 2,000 times by Nodemailer alone over
//     one pooled connection, as the service sends (target: at least 0.7 of it). The server's
//     RSS is sampled during the send (memory flat: the last sample within 30 MB of the first).
// (2) The same send with the server SIGKILLed twice (at a third and at two thirds of the mails
//     received) and started again each time: every address must receive the post, with at most
//     one duplicate per kill.
// MAIL_RATE_PER_MINUTE is set far above what one connection carries (no bound), JOB_LEASE_MS to
// 5 s (a killed instance's claims pass on after it; on SQLite a restart takes them at once).
//
// BENCH_SUBSCRIBERS changes the count; BENCH_DATABASES=sqlite or =postgres runs one of them. PostgreSQL's part is skipped, saying why, when no
// PostgreSQL can be had. Run after `npm run build` (npm run bench:newsletter does). About 2
// minutes on 2 busy cores.

import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { benchPostgres, postgresUnavailable } from './postgres-cluster.mjs';
import { apiClient, makeApiKey, multipartFile, pollUntil, printTable, ratio, request, round, rssMb, runBench, sleep, startServer, tempDir, verdict } from './lib.mjs';

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 2000);
const TARGET_RATIO = 0.7;
const FLAT_MB = 30;

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

/** The SMTP server's own receive rate: `raw` sent `count` times by Nodemailer over one pooled connection. */
async function ownRate(smtp, raw, count) {
  smtp.reset();
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity });
  const started = performance.now();
  for (let i = 0; i < count; i++) await transport.sendMail({ envelope: { from: 'news@example.com', to: `baseline${i}@example.com` }, raw });
  const seconds = (performance.now() - started) / 1000;
  transport.close();
  return count / seconds;
}

/** One send to SUBSCRIBERS addresses through the real server; `kills` SIGKILLs on the way. */
async function send(smtp, label, env, kills) {
  smtp.reset();
  const dataDir = tempDir();
  const apiKey = makeApiKey();
  const serverEnv = { SMTP_URL: smtp.url, MAIL_FROM: 'Bench <news@example.com>', MAIL_RATE_PER_MINUTE: '1000000', JOB_LEASE_MS: '5000', JOB_POLL_MS: '100', ...env };
  // The first site (and its key) is made once the server listens: wait for the key to work.
  const start = async () => {
    const started = await startServer({ dataDir, apiKey, env: serverEnv });
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
  const post = ok(await api.post('/api/v1/posts', { title: `Bench issue (${label})`, content, isDraft: false }), 'publish').data.post;

  const rss = [];
  const sampler = setInterval(() => {
    const mb = rssMb(server.pid);
    if (mb !== null) rss.push(mb);
  }, 250);
  try {
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
      { intervalMs: 100, timeoutMs: 150_000, what: 'the send to finish' },
    );
    await sleep(200);
    const seconds = (smtp.sink.times.at(-1) - smtp.sink.times[0]) / 1000;
    const counts = addresses.map((address) => smtp.sink.perAddress.get(address) ?? 0);
    return {
      run: label,
      kills: kills.length,
      recipients: progress.recipients,
      sent: progress.sent,
      received: smtp.sink.count,
      missing: counts.filter((n) => n === 0).length,
      duplicates: counts.reduce((sum, n) => sum + Math.max(0, n - 1), 0),
      seconds: round(seconds, 2),
      perSecond: round(SUBSCRIBERS / seconds, 1),
      rssFirstMb: rss[0] ?? null,
      rssPeakMb: rss.length ? Math.max(...rss) : null,
      rssLastMb: rss.at(-1) ?? null,
    };
  } finally {
    clearInterval(sampler);
    await server.stop();
  }
}

await runBench(
  'bench/newsletter',
  async () => {
    const smtp = await startSink();
    const rows = [];
    const only = process.env.BENCH_DATABASES ?? 'sqlite,postgres';
    const databases = only.includes('sqlite') ? [['SQLite', async () => ({})]] : [];
    const pgMissing = only.includes('postgres') ? postgresUnavailable() : 'not asked for (BENCH_DATABASES)';
    if (pgMissing) console.log(`PostgreSQL part skipped: ${pgMissing}`);
    else {
      const cluster = await benchPostgres();
      databases.push(['PostgreSQL', async () => ({ DATABASE_URL: await cluster.createDatabase('newsletter') })]);
    }
    let own = null;
    for (const [name, envOf] of databases) {
      const clean = await send(smtp, `${name}`, await envOf(), []);
      // The server's own rate, measured once with the service's own message.
      own ??= await ownRate(smtp, smtp.sink.lastRaw, SUBSCRIBERS);
      rows.push(clean);
      rows.push(await send(smtp, `${name}, 2 kills`, await envOf(), [1 / 3, 2 / 3]));
    }
    await smtp.close();
    printTable(`newsletter to ${SUBSCRIBERS} subscribers (SMTP server's own receive rate over one connection: ${round(own, 1)} messages/s)`, rows.map((row) => ({
      ...row,
      ofOwnRate: ratio(row.perSecond, own, 2),
      exactlyOnce: verdict(row.kills === 0 ? row.missing === 0 && row.duplicates === 0 : row.missing === 0 && row.duplicates <= row.kills),
      rate: row.kills === 0 ? verdict(row.perSecond / own >= TARGET_RATIO) : '-',
      memoryFlat: row.kills === 0 ? verdict(row.rssLastMb !== null && row.rssLastMb - row.rssFirstMb <= FLAT_MB) : '-',
    })));
  },
  { timeLimitMs: 600_000 },
);
