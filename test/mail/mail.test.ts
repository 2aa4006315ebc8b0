import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { renderMail } from '../../src/mail/service.js';
import { MAIL_SEND, type MailMessage } from '../../src/mail/rules.js';
import { BOOTSTRAP_KEY, buildTestApp, loggedApp, tempDataDir, waitFor, type TestApp } from '../helpers/app.js';
import { startMailbox } from '../helpers/smtp.js';

// The mail module end to end: messages queued as jobs, sent by the mail loop over SMTP_URL to a
// real SMTP server in this process, and read back with a real parser. No transport is mocked.

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const jobOf = async (ctx: TestApp, id: string) => (await ctx.rows<Json>('select status, attempts, last_error as "lastError", result from jobs where id = ?', id))[0];

t.test('SMTP_URL and MAIL_FROM are read and checked like every other variable', async (t) => {
  const base = { DATA_DIR: tempDataDir(t) };
  t.equal(loadConfig(base).mail, null, 'no SMTP_URL: no mail');
  const mail = loadConfig({ ...base, SMTP_URL: 'smtps://me:p%40ss@mail.example.com:465', MAIL_FROM: 'Blog <no-reply@example.com>' }).mail;
  t.same(mail, { smtpUrl: 'smtps://me:p%40ss@mail.example.com:465', from: 'Blog <no-reply@example.com>' });
  t.equal(loadConfig({ ...base, SMTP_URL: 'smtp://localhost:2525', PUBLIC_BASE_URL: 'https://blog.example.org' }).mail?.from, 'no-reply@blog.example.org', 'MAIL_FROM defaults to the public host');
  for (const [env, variable] of [
    [{ SMTP_URL: 'http://mail.example.com' }, 'SMTP_URL'],
    [{ SMTP_URL: 'not a url' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://mail.example.com/inbox' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://mail.example.com', MAIL_FROM: 'nobody' }, 'MAIL_FROM'],
    [{ SMTP_URL: 'smtp://mail.example.com', MAIL_FROM: 'Blog <a@b.c>\r\nBcc: x@y.z' }, 'MAIL_FROM'],
  ] as const) {
    t.throws(() => loadConfig({ ...base, ...env }), { name: 'ConfigError', variable }, `${JSON.stringify(env)} is refused`);
  }
  // The password never shows in the message of a refused URL.
  let message = '';
  try {
    loadConfig({ ...base, SMTP_URL: 'ftp://me:secret@mail.example.com' });
  } catch (error) {
    message = (error as Error).message;
  }
  t.match(message, 'SMTP_URL');
  t.notMatch(message, 'secret');
});

t.test('without SMTP_URL, mail says it is not set up and queues nothing', async (t) => {
  const ctx = await buildTestApp(t);
  t.equal(ctx.app.mail.configured, false);
  t.equal(ctx.app.mail.from, null);
  await t.rejects(ctx.app.mail.enqueue(ctx.site.id, { to: 'a@example.com', subject: 'Hi', text: 'x', html: '<p>x</p>' }), { code: 'MAIL_NOT_CONFIGURED', statusCode: 503 });
  t.equal(await ctx.count('select count(*) as n from jobs where kind = ?', MAIL_SEND), 0);
});

t.test('a queued message arrives once, with a text and an HTML part, its Message-ID and the sender of MAIL_FROM', async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'The Blog <no-reply@blog.example.com>' });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  t.equal(ctx.app.mail.configured, true);
  const content = renderMail({
    subject: 'You are invited to "Tom & Jerry"',
    heading: 'An invitation',
    paragraphs: ['Someone invited you to <Tom & Jerry>.'],
    action: { label: 'Accept the invitation', url: 'https://blog.example.com/admin/accept?token=abc&x=1' },
    footer: 'You get this because someone typed your address.',
  });
  const queued = await ctx.app.mail.enqueue(ctx.site.id, { to: 'Reader@Example.com'.toLowerCase(), ...content, headers: { 'X-Blog-Purpose': 'invitation' } });
  t.match(queued.messageId, /^<[0-9a-f-]{36}@blog\.example\.com>$/);

  const mail = await mailbox.nth(1);
  t.same(mail.rcptTo, ['reader@example.com']);
  t.equal(mail.mailFrom, 'no-reply@blog.example.com');
  t.equal(mail.parsed.from?.text, '"The Blog" <no-reply@blog.example.com>');
  t.equal(mail.parsed.subject, 'You are invited to "Tom & Jerry"');
  t.equal(mail.parsed.messageId, queued.messageId);
  t.equal(mail.parsed.headers.get('x-blog-purpose'), 'invitation');
  t.match(mail.parsed.text, 'Someone invited you to <Tom & Jerry>.', 'the text part is plain text, not escaped');
  t.match(mail.parsed.text, 'https://blog.example.com/admin/accept?token=abc&x=1');
  t.match(mail.parsed.html as string, 'Someone invited you to &lt;Tom &amp; Jerry&gt;.', 'the HTML part escapes');
  t.match(mail.parsed.html as string, 'href="https://blog.example.com/admin/accept?token=abc&amp;x=1"');
  t.match(mail.raw, /Content-Type: multipart\/alternative/);

  await waitFor(async () => (await jobOf(ctx, queued.jobId))?.status === 'succeeded', 'the job to succeed');
  const job = await jobOf(ctx, queued.jobId);
  t.equal(job.attempts, 1);
  t.notMatch(JSON.stringify(job.result), 'token=abc', 'the job keeps nothing of the body');
  const [stored] = await ctx.rows<{ payload: unknown }>('select payload from jobs where id = ?', queued.jobId);
  const payload = typeof stored!.payload === 'string' ? JSON.parse(stored!.payload) : stored!.payload;
  t.same(payload, { to: 'reader@example.com', subject: 'You are invited to "Tom & Jerry"', messageId: queued.messageId, sent: true }, 'sent: the stored payload keeps no part or header, so no link or its token');
  await ctx.app.mailLoop.whenIdle();
  t.equal(mailbox.received.length, 1, 'sent once');
});

t.test('a message the server refuses for now is retried with backoff and arrives once; one it refuses for good fails at once', async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'no-reply@example.com' }, { mail: { backoffBaseMs: 20 } });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });

  mailbox.refuseNext(2, 451);
  const later = await ctx.app.mail.enqueue(ctx.site.id, { to: 'later@example.com', subject: 'Later', text: 'Later.', html: '<p>Later.</p>' });
  const mail = await mailbox.to('later@example.com');
  t.equal(mail.parsed.messageId, later.messageId, 'the retry is the same message');
  await waitFor(async () => (await jobOf(ctx, later.jobId))?.status === 'succeeded', 'the retried job to succeed');
  t.equal((await jobOf(ctx, later.jobId)).attempts, 3);

  mailbox.refuseNext(1, 550);
  const never = await ctx.app.mail.enqueue(ctx.site.id, { to: 'nobody@example.com', subject: 'Never', text: 'Never.', html: '<p>Never.</p>' });
  await waitFor(async () => (await jobOf(ctx, never.jobId))?.status === 'failed', 'the refused job to fail');
  const failed = await jobOf(ctx, never.jobId);
  t.equal(failed.attempts, 1, 'a 5xx is not retried');
  t.match(failed.lastError, /550/);
  await ctx.app.mailLoop.whenIdle();
  t.equal(mailbox.received.length, 1);
});

t.test('a server that cannot be reached holds the message without using its attempts', async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: 'smtp://127.0.0.1:1', MAIL_FROM: 'no-reply@example.com' }, { jobs: { autoStart: false } });
  const queued = await ctx.app.mail.enqueue(ctx.site.id, { to: 'held@example.com', subject: 'Held', text: 'Held.', html: '<p>Held.</p>' });
  await ctx.app.mailLoop.tick();
  await ctx.app.mailLoop.whenIdle();
  const job = await jobOf(ctx, queued.jobId);
  t.equal(job.status, 'pending');
  t.equal(job.attempts, 0, 'the attempt is not held against it');
  t.match(job.lastError, /ECONNECTION|ECONNREFUSED/);
  t.equal(mailbox.received.length, 0);
});

t.test('the user and password of SMTP_URL sign in to the server', async (t) => {
  const mailbox = await startMailbox(t, { user: 'blog@example.com', pass: 'p@ss:w/rd' });
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'no-reply@example.com' });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  await ctx.app.mail.enqueue(ctx.site.id, { to: 'signed@example.com', subject: 'Signed in', text: 'Yes.', html: '<p>Yes.</p>' });
  t.equal((await mailbox.nth(1)).parsed.subject, 'Signed in');
});

t.test('a bad message is refused before it is queued', async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url }, { jobs: { autoStart: false } });
  const ok = { to: 'a@example.com', subject: 'Hi', text: 'x', html: '<p>x</p>' };
  const bads: Partial<MailMessage>[] = [{ to: 'a@example.com, b@example.com' }, { to: 'Someone <a@example.com>' }, { subject: 'Hi\r\nBcc: x@example.com' }, { text: ' ' }, { headers: { From: 'x@example.com' } }, { headers: { 'X-Ok': 'a\nb' } }];
  for (const bad of bads) {
    await t.rejects(ctx.app.mail.enqueue(ctx.site.id, { ...ok, ...bad }), { code: 'VALIDATION_ERROR' }, JSON.stringify(bad));
  }
  t.equal(await ctx.count('select count(*) as n from jobs where kind = ?', MAIL_SEND), 0);
});

t.test("a link's token never reaches the log, even at debug level", async (t) => {
  const mailbox = await startMailbox(t);
  const { app, text } = await loggedApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'no-reply@example.com' }, { level: 'debug' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const site = (await app.sites.authenticate(BOOTSTRAP_KEY))!.site;
  const token = 'tok_' + 'S3cr3t'.repeat(6);
  mailbox.refuseNext(1, 451);
  await app.mail.enqueue(site.id, { to: 'logged@example.com', ...renderMail({ subject: 'Reset', paragraphs: ['Here.'], action: { label: 'Reset', url: `http://localhost/admin/reset#token=${token}` } }) });
  const mail = await mailbox.to('logged@example.com');
  t.match(mail.parsed.text, token);
  await app.mailLoop.whenIdle();
  t.match(text(), /job attempt failed/, 'the refused attempt was logged');
  t.notMatch(text(), token);
});
