import t from 'tap';
import { buildTestApp, waitFor, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';
import { startReceiver } from '../helpers/receiver.js';
import { rawHeader, startMailbox } from '../helpers/smtp.js';
import { addUser, asUser, signIn } from '../helpers/accounts.js';

// A post's first publication reaches every confirmed subscriber once, through a real SMTP
// server in this process, with the RFC 8058 headers; publishing again sends nothing more;
// refusals are retried (4xx) or counted against the address (5xx). Both databases
// (test/on-postgres/newsletters).

async function subscribersOf(ctx: TestApp, addresses: string[]) {
  const form = multipart([{ name: 'file', filename: 'list.csv', content: `email\n${addresses.join('\n')}\n` }]);
  const imported = await ctx.call({ method: 'POST', url: '/api/v1/subscribers/import', payload: form.payload, headers: form.headers });
  if (imported.json().data?.imported !== addresses.length) throw new Error(`import failed: ${imported.body}`);
}

const publish = async (ctx: TestApp, payload: Record<string, unknown>) => (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { isDraft: false, ...payload } })).json().data.post.id as string;
const progress = async (ctx: TestApp, id: string) => (await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}/newsletter` })).json().data.newsletter;
const sent = (ctx: TestApp, id: string) =>
  waitFor(async () => {
    const now = await progress(ctx, id);
    return now.status === 'sent' && now;
  }, 'the newsletter to be sent');

t.test('a published post is mailed once to each subscriber, with its unsubscribe headers', async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'Blog <news@example.com>', MAIL_RATE_PER_MINUTE: '100000' });
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { enabled: true, senderName: 'The Notes', footer: 'From the desk' } } });
  const addresses = Array.from({ length: 20 }, (_, i) => `reader${i}@example.com`);
  await subscribersOf(ctx, addresses);
  ctx.app.newsletterLoop.start();

  const id = await publish(ctx, { title: 'Spring issue', content: 'Hello **readers**.\n\n![a cup](/sites/my-blog/media/x.png)' });
  t.match(await sent(ctx, id), { status: 'sent', recipients: 20, sent: 20, failed: 0, bounced: 0 });
  t.equal(mailbox.received.length, 20);
  t.same(mailbox.received.map((mail) => mail.rcptTo[0]).sort(), [...addresses].sort(), 'each address once');
  const mail = mailbox.received[0]!;
  t.equal(mail.parsed.subject, 'Spring issue');
  t.match(mail.parsed.from?.text, /"?The Notes"? <news@example\.com>/);
  t.match(rawHeader(mail, 'List-Unsubscribe'), /^<http:\/\/localhost:3000\/sites\/my-blog\/unsubscribe\?token=[\w-]+>$/);
  t.equal(rawHeader(mail, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
  t.match(mail.parsed.text, /Hello readers\./);
  t.match(mail.parsed.text, /Unsubscribe: http:\/\/localhost:3000\/sites\/my-blog\/unsubscribe\?token=/);
  t.match(mail.parsed.text, /http:\/\/localhost:3000\/sites\/my-blog\/posts\/spring-issue|http:\/\/localhost:3000\/sites\/my-blog\/spring-issue/, 'a link to the page');
  t.match(String(mail.parsed.html), /src="http:\/\/localhost:3000\/sites\/my-blog\/media\/x\.png"/, 'images with absolute URLs');
  t.match(String(mail.parsed.html), /From the desk/);
  t.notMatch(String(mail.parsed.html), /<img[^>]+(width="1"|height="1")/, 'no tracking pixel');
  const tokens = new Set(mailbox.received.map((each) => rawHeader(each, 'List-Unsubscribe')));
  t.equal(tokens.size, 20, 'each recipient has a link of their own');
  const ownLinkInSight = (each: (typeof mailbox.received)[number]) => {
    const link = rawHeader(each, 'List-Unsubscribe')!.slice(1, -1);
    return each.parsed.text!.includes(`Unsubscribe: ${link}`) && String(each.parsed.html).includes(`href="${link}"`);
  };
  t.ok(mailbox.received.every(ownLinkInSight), 'each message shows its own link, in the text and in the HTML, as in its header');

  // Unpublish and publish again: nothing more.
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { isDraft: true } });
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { isDraft: false } });
  await ctx.app.newsletterLoop.whenIdle();
  t.equal(mailbox.received.length, 20, 'no second newsletter');
  const optOut = await publish(ctx, { title: 'Quiet note', sendNewsletter: false });
  t.equal((await progress(ctx, optOut)).status, 'none');
});

t.test('a temporary refusal is retried with backoff; a permanent one bounces, and three stop the address', async (t) => {
  const mailbox = await startMailbox(t);
  const receiver = await startReceiver(t);
  const ctx = await buildTestApp(
    t,
    { SMTP_URL: mailbox.url, MAIL_FROM: 'news@example.com', MAIL_RATE_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '50' },
    { newsletters: { backoffBaseMs: 50 } },
  );
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { enabled: true } } });
  const hook = await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url: receiver.url, events: ['newsletter.sent'] } });
  t.equal(hook.statusCode, 201, hook.body);
  await subscribersOf(ctx, ['first@example.com', 'second@example.com']);

  // The first recipient is refused for now twice, then accepted.
  mailbox.refuseNext(2, 451);
  const first = await publish(ctx, { title: 'Retried' });
  t.match(await sent(ctx, first), { recipients: 2, sent: 2, failed: 0, bounced: 0 });
  t.equal(mailbox.received.length, 2, 'each once, after the retries');
  const [event] = await receiver.received(1);
  t.equal(event!.json().type, 'newsletter.sent');
  t.match(event!.json().data.newsletter, { postId: first, status: 'sent', recipients: 2, sent: 2 });

  // The first recipient of each send is refused for good.
  const bouncer = async (title: string) => {
    mailbox.refuseNext(1, 550);
    const id = await publish(ctx, { title });
    return sent(ctx, id);
  };
  const before = mailbox.received.length;
  const bounced = [await bouncer('One'), await bouncer('Two'), await bouncer('Three')];
  for (const each of bounced) t.match(each, { recipients: 2, sent: 1, bounced: 1 });
  t.equal(mailbox.received.length, before + 3);
  const list = (await ctx.call({ method: 'GET', url: '/api/v1/subscribers?status=bouncing' })).json().data;
  t.equal(list.subscribers.length, 1, 'one address refused three times is bouncing');
  t.equal(list.counts.bouncing, 1);
  const next = await publish(ctx, { title: 'After the bounces' });
  t.match(await sent(ctx, next), { recipients: 1, sent: 1, bounced: 0 }, 'a bouncing address is no longer sent to');
  t.equal(mailbox.received.at(-1)!.rcptTo[0], list.subscribers[0].email === 'first@example.com' ? 'second@example.com' : 'first@example.com');
});

t.test('without SMTP_URL a send waits, recorded', async (t) => {
  const ctx = await buildTestApp(t);
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { enabled: true } } });
  await subscribersOf(ctx, ['a@example.com']);
  ctx.app.newsletterLoop.start();
  const id = await publish(ctx, { title: 'Waiting' });
  await ctx.app.newsletterLoop.whenIdle();
  t.match(await progress(ctx, id), { status: 'sending', recipients: 1, sent: 0 });
});

t.test('"Send a test" mails a draft to the signed-in person only', async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'news@example.com' });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { enabled: true } } });
  await subscribersOf(ctx, ['reader@example.com']);
  await addUser(ctx, 'writer@example.com', 'editor');
  const cookie = await signIn(ctx, 'writer@example.com');
  const draft = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Draft issue', content: 'Not yet **out**.' } })).json().data.post.id;
  const sent = await asUser(ctx, cookie, { method: 'POST', url: `/api/v1/posts/${draft}/newsletter/test` });
  t.equal(sent.statusCode, 202, sent.body);
  t.equal(sent.json().data.to, 'writer@example.com');
  const mail = await mailbox.to('writer@example.com');
  t.equal(mail.parsed.subject, '[Test] Draft issue');
  t.match(mail.parsed.text, /Not yet out\./);
  t.equal(rawHeader(mail, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
  await ctx.app.mailLoop.whenIdle();
  t.equal(mailbox.received.length, 1, 'no subscriber got it');
  t.equal((await progress(ctx, draft)).status, 'none', 'the post has no newsletter yet');
  const byKey = await ctx.call({ method: 'POST', url: `/api/v1/posts/${draft}/newsletter/test` });
  t.equal(byKey.statusCode, 403, 'an API key has no address of its own');
});
