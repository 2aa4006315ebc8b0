import t from 'tap';
import { runAdmin } from '../../src/admin/cli.js';
import { buildTestApp, waitFor, type TestApp } from '../helpers/app.js';
import { linkIn, rawHeader, startMailbox, type Mailbox } from '../helpers/smtp.js';
import { solve } from '../spam-guard/helpers.js';

// Readers' side of newsletters with a real SMTP server in this process: the sign-up form on
// the pages, double opt-in with the same answer for any state, the confirmation link, a post
// received with the RFC 8058 headers, one-click unsubscribe, and the next post not received.
// Both databases (test/on-postgres/newsletters).

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

async function readerApp(t: Parameters<typeof buildTestApp>[0], env: Record<string, string> = {}): Promise<{ ctx: TestApp; mailbox: Mailbox; later(ms: number): void }> {
  const mailbox = await startMailbox(t);
  // The newsletters' clock, moved on by `later` (an hour between confirmation mails).
  let offset = 0;
  const ctx = await buildTestApp(t, {
    SMTP_URL: mailbox.url,
    MAIL_FROM: 'Blog <news@example.com>',
    MAIL_RATE_PER_MINUTE: '100000',
    SPAM_GUARD_DIFFICULTY: '300',
    SPAM_GUARD_MIN_FILL_SECONDS: '0',
    SPAM_GUARD_RATE_MAX: '100',
    ...env,
  }, { newsletters: { clock: { now: () => Date.now() + offset } } });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { enabled: true } } });
  return { ctx, mailbox, later: (ms) => (offset += ms) };
}

const subscribe = (ctx: TestApp, fields: Record<string, string>) => ctx.call({ method: 'POST', url: '/sites/my-blog/subscribe', key: null, headers: FORM, payload: form(fields) });
const publish = async (ctx: TestApp, title: string) => (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title, content: `About ${title}.`, isDraft: false } })).json().data.post.id as string;
const sentOut = (ctx: TestApp, id: string) =>
  waitFor(async () => {
    const progress = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}/newsletter` })).json().data.newsletter;
    return progress.status === 'sent' && progress;
  }, 'the newsletter to be sent');

t.test('subscribe on the page, confirm by the link, receive a post with RFC 8058 headers, unsubscribe in one click', async (t) => {
  const { ctx, mailbox, later } = await readerApp(t);

  // The form is on the index and on each post's page, not on a draft's preview.
  const index = await ctx.call({ method: 'GET', url: '/sites/my-blog/', key: null });
  t.match(index.body, /<form method="post" action="\/sites\/my-blog\/subscribe"/);
  t.match(index.body, /<label for="subscribe-email">Email<\/label>/);
  t.match(index.body, /<button type="submit">Subscribe<\/button>/);
  t.match(index.body, /challenge="\/content\/v1\/sites\/my-blog\/challenge\?form=subscribe"/);
  const first = await publish(ctx, 'Before anyone subscribed');
  t.match(await sentOut(ctx, first), { recipients: 0 });
  const postPage = await ctx.call({ method: 'GET', url: '/sites/my-blog/before-anyone-subscribed/', key: null });
  t.match(postPage.body, /action="\/sites\/my-blog\/subscribe"/);

  // With the widget's proof of work.
  const challenge = (await ctx.call({ method: 'GET', url: '/content/v1/sites/my-blog/challenge?form=subscribe', key: null })).json();
  const signed = await subscribe(ctx, { email: 'Reader@Example.com', altcha: await solve(challenge), website: '' });
  t.equal(signed.statusCode, 303);
  t.equal(signed.headers.location, '/sites/my-blog/subscribe?sent=1');
  const notice = await ctx.call({ method: 'GET', url: signed.headers.location as string, key: null });
  t.match(notice.body, /Check your inbox/);

  const confirmation = await mailbox.to('reader@example.com');
  t.match(confirmation.parsed.subject, /Confirm your subscription to/);
  const link = linkIn(confirmation, 'http://localhost:3000/sites/my-blog/subscribe/confirm?token=');
  const path = link.replace('http://localhost:3000', '');
  // A scanner's GET confirms nothing: the page asks with a button.
  const ask = await ctx.call({ method: 'GET', url: path, key: null });
  t.equal(ask.statusCode, 200);
  t.match(ask.body, /Confirm my subscription/);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/subscribers?status=pending' })).json().data.counts.pending, 1);
  const token = new URL(link).searchParams.get('token')!;
  const confirmed = await ctx.call({ method: 'POST', url: '/sites/my-blog/subscribe/confirm', key: null, headers: FORM, payload: form({ token }) });
  t.equal(confirmed.statusCode, 200);
  t.match(confirmed.body, /You are subscribed/);
  const again = await ctx.call({ method: 'POST', url: '/sites/my-blog/subscribe/confirm', key: null, headers: FORM, payload: form({ token }) });
  t.equal(again.statusCode, 400, 'the link works once');
  const listed = (await ctx.call({ method: 'GET', url: '/api/v1/subscribers' })).json().data;
  t.match(listed.subscribers, [{ email: 'reader@example.com', status: 'active', consentSource: 'form' }]);

  const second = await publish(ctx, 'For the subscriber');
  t.match(await sentOut(ctx, second), { recipients: 1, sent: 1 });
  const mail = await mailbox.to('reader@example.com', (each) => each.parsed.subject === 'For the subscriber');
  const unsubscribe = rawHeader(mail, 'List-Unsubscribe')!;
  t.match(unsubscribe, /^<http:\/\/localhost:3000\/sites\/my-blog\/unsubscribe\?token=[\w-]+>$/);
  t.equal(rawHeader(mail, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
  const unsubscribePath = unsubscribe.slice(1, -1).replace('http://localhost:3000', '');

  // The GET page asks first and changes nothing.
  const page = await ctx.call({ method: 'GET', url: unsubscribePath, key: null });
  t.match(page.body, /<button type="submit">Unsubscribe<\/button>/);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/subscribers?status=active' })).json().data.counts.active, 1, 'a GET unsubscribes no one');
  // As a mail provider sends it (RFC 8058): a POST with List-Unsubscribe=One-Click, no sign-in.
  const oneClick = await ctx.call({ method: 'POST', url: unsubscribePath, key: null, headers: FORM, payload: 'List-Unsubscribe=One-Click' });
  t.equal(oneClick.statusCode, 200);
  t.match(oneClick.body, /You are unsubscribed/);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/subscribers?status=unsubscribed' })).json().data.counts.unsubscribed, 1);

  const third = await publish(ctx, 'After unsubscribing');
  t.match(await sentOut(ctx, third), { recipients: 0 });
  await ctx.app.mailLoop.whenIdle();
  t.notOk(mailbox.received.some((each) => each.parsed.subject === 'After unsubscribing'), 'the next post does not arrive');

  // A resubscribe needs a new confirmation, and gets it at most an hour after the last one.
  t.equal((await subscribe(ctx, { email: 'reader@example.com' })).statusCode, 303);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/subscribers?status=unsubscribed' })).json().data.counts.unsubscribed, 1, 'within the hour: nothing');
  later(3_600_001);
  t.equal((await subscribe(ctx, { email: 'reader@example.com' })).statusCode, 303);
  await waitFor(() => mailbox.received.filter((each) => /Confirm/.test(each.parsed.subject ?? '')).length === 2, 'a second confirmation');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/subscribers?status=pending' })).json().data.counts.pending, 1);
});

t.test('the same answer whatever the state; one confirmation an hour; the guard; unsubscribe for any token', async (t) => {
  const { ctx, mailbox } = await readerApp(t);
  const answers = [];
  for (let i = 0; i < 3; i++) answers.push(await subscribe(ctx, { email: 'twice@example.com' }));
  await ctx.call({ method: 'POST', url: '/api/v1/subscribers/import', ...importOf('active@example.com') });
  answers.push(await subscribe(ctx, { email: 'active@example.com' }));
  for (const answer of answers) {
    t.equal(answer.statusCode, 303);
    t.equal(answer.headers.location, '/sites/my-blog/subscribe?sent=1');
  }
  await ctx.app.mailLoop.whenIdle();
  await mailbox.to('twice@example.com');
  t.equal(mailbox.received.filter((mail) => mail.rcptTo.includes('twice@example.com')).length, 1, 'one confirmation mail within the hour');
  t.equal(mailbox.received.filter((mail) => mail.rcptTo.includes('active@example.com')).length, 0, 'nothing to an active address');

  // The JSON way: 202, open to any origin, the same message for any state.
  const json = (email: string, extra: Record<string, unknown> = {}) =>
    ctx.call({ method: 'POST', url: '/content/v1/sites/my-blog/subscribers', key: null, headers: { origin: 'https://front.example' }, payload: { email, ...extra } });
  const fresh = await json('api@example.com');
  const known = await json('active@example.com');
  t.equal(fresh.statusCode, 202);
  t.equal(fresh.headers['access-control-allow-origin'], '*');
  t.same(fresh.json(), known.json());
  const preflight = await ctx.call({ method: 'OPTIONS', url: '/content/v1/sites/my-blog/subscribers', key: null, headers: { origin: 'https://front.example', 'access-control-request-method': 'POST' } });
  t.equal(preflight.statusCode, 204);
  t.match(preflight.headers['access-control-allow-methods'], /POST/);
  t.match(preflight.headers['access-control-allow-headers'], /content-type/);
  t.equal((await json('not an address')).statusCode, 400);
  t.equal((await json('x@example.com', { list: 'all' })).statusCode, 400, 'unknown fields are refused');
  const forged = await json('forged@example.com', { altcha: Buffer.from('{"challenge":{}}').toString('base64') });
  t.equal(forged.statusCode, 400);
  t.equal(forged.json().error.details[0].path, '/body/altcha');
  // The honeypot: the same answer, and nothing kept or sent.
  const robot = await subscribe(ctx, { email: 'robot@example.com', website: 'http://spam.example' });
  t.equal(robot.statusCode, 303);
  const bad = await subscribe(ctx, { email: 'nope' });
  t.equal(bad.statusCode, 400);
  t.match(bad.body, /Enter one email address/);
  await ctx.app.mailLoop.whenIdle();
  t.equal(mailbox.received.filter((mail) => mail.rcptTo.includes('robot@example.com')).length, 0);
  const all = (await ctx.call({ method: 'GET', url: '/api/v1/subscribers?limit=100' })).json().data.subscribers.map((s: { email: string }) => s.email);
  t.notOk(all.includes('robot@example.com'));

  // Unsubscribe pages answer alike for any token, known, unknown or malformed.
  const bodies = [];
  for (const token of ['', 'x', 'A'.repeat(43), '%00%27;--', 'a'.repeat(5000)]) {
    const get = await ctx.call({ method: 'GET', url: `/sites/my-blog/unsubscribe?token=${token}`, key: null });
    const post = await ctx.call({ method: 'POST', url: `/sites/my-blog/unsubscribe?token=${token}`, key: null, headers: FORM, payload: 'List-Unsubscribe=One-Click' });
    t.equal(get.statusCode, 200);
    t.equal(post.statusCode, 200);
    bodies.push(post.body);
  }
  t.equal(new Set(bodies).size, 1, 'the same page');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/subscribers?status=active' })).json().data.counts.active, 1);
});

t.test('sign-ups from one client are limited; a site without newsletters has no form', async (t) => {
  const { ctx } = await readerApp(t, { SPAM_GUARD_RATE_MAX: '2' });
  for (let i = 0; i < 2; i++) t.equal((await subscribe(ctx, { email: `n${i}@example.com` })).statusCode, 303);
  const limited = await subscribe(ctx, { email: 'n3@example.com' });
  t.equal(limited.statusCode, 429);
  t.ok(Number(limited.headers['retry-after']) > 0);

  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { enabled: false } } });
  t.notMatch((await ctx.call({ method: 'GET', url: '/sites/my-blog/', key: null })).body, /subscribe-form/);
  t.equal((await subscribe(ctx, { email: 'late@example.com' })).statusCode, 404);
  t.equal((await ctx.call({ method: 'POST', url: '/content/v1/sites/my-blog/subscribers', key: null, payload: { email: 'late@example.com' } })).statusCode, 404);
});

t.test("on a site's proven domain: the form, /subscribe, the confirmation and unsubscribe links at its root", async (t) => {
  const { ctx, mailbox } = await readerApp(t);
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { url: 'https://blog.example.com' } });
  const host = { host: 'blog.example.com' };
  // Not yet proven: the root of that host is no site's.
  t.equal((await ctx.call({ method: 'POST', url: '/subscribe', key: null, headers: { ...FORM, ...host }, payload: form({ email: 'early@example.com' }) })).statusCode, 404);
  await runAdmin(['site', 'verify-domain', ctx.site.id], ctx.config, () => {});
  const home = await ctx.call({ method: 'GET', url: '/', key: null, headers: host });
  t.match(home.body, /<form method="post" action="\/subscribe"/);
  const signed = await ctx.call({ method: 'POST', url: '/subscribe', key: null, headers: { ...FORM, ...host }, payload: form({ email: 'own@example.com' }) });
  t.equal(signed.statusCode, 303);
  t.equal(signed.headers.location, '/subscribe?sent=1');
  const confirmation = await mailbox.to('own@example.com');
  const link = linkIn(confirmation, 'https://blog.example.com/subscribe/confirm?token=');
  const token = new URL(link).searchParams.get('token')!;
  const confirmed = await ctx.call({ method: 'POST', url: '/subscribe/confirm', key: null, headers: { ...FORM, ...host }, payload: form({ token }) });
  t.match(confirmed.body, /You are subscribed/);
  // Elsewhere (the API's host) the root paths are nobody's.
  t.equal((await ctx.call({ method: 'POST', url: '/subscribe', key: null, headers: FORM, payload: form({ email: 'x@example.com' }) })).statusCode, 404);
});

t.test('without SMTP_URL no sign-up is taken', async (t) => {
  const ctx = await buildTestApp(t);
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { enabled: true } } });
  const answer = await ctx.call({ method: 'POST', url: '/content/v1/sites/my-blog/subscribers', key: null, payload: { email: 'a@example.com' } });
  t.equal(answer.statusCode, 503);
  t.equal(answer.json().error.code, 'MAIL_NOT_CONFIGURED');
});

function importOf(email: string) {
  const boundary = 'x-boundary';
  return {
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\n${email}\r\n--${boundary}--\r\n`,
  };
}
