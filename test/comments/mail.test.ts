/**
 * Staff told of waiting comments by mail, through a real SMTP server: owners by default,
 * editors when they ask, at most one mail per post an hour; each person's own choice.
 */
import t from 'tap';
import { addUser, asUser, signIn } from '../helpers/accounts.js';
import { buildTestApp, waitFor } from '../helpers/app.js';
import { startMailbox } from '../helpers/smtp.js';

t.test('a waiting comment mails the owners (and editors who asked), at most once per post an hour', async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'no-reply@example.com', SPAM_GUARD_RATE_MAX: '0' });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' }); // the mail loop runs once the service listens
  await addUser(ctx, 'owner@example.com', 'owner');
  await addUser(ctx, 'editor@example.com', 'editor');
  await addUser(ctx, 'quiet-owner@example.com', 'owner');
  // Mail about comments (signing in may mail other things).
  const mailJobs = async () =>
    (await ctx.rows<{ payload: unknown }>("select payload from jobs where kind = 'mail-send'")).filter(({ payload }) =>
      (typeof payload === 'string' ? payload : JSON.stringify(payload)).includes('Comments wait for a moderator'),
    ).length;

  // Each person's choice: owners on by default, editors off; a key has no such choice.
  const editor = await signIn(ctx, 'editor@example.com');
  t.same((await asUser(ctx, editor, { method: 'GET', url: '/api/v1/comments/mail' })).json().data, { enabled: false, mailConfigured: true });
  t.equal((await asUser(ctx, editor, { method: 'PUT', url: '/api/v1/comments/mail', payload: { enabled: true } })).statusCode, 200);
  const quiet = await signIn(ctx, 'quiet-owner@example.com');
  t.same((await asUser(ctx, quiet, { method: 'GET', url: '/api/v1/comments/mail' })).json().data.enabled, true);
  await asUser(ctx, quiet, { method: 'PUT', url: '/api/v1/comments/mail', payload: { enabled: false } });
  t.same((await asUser(ctx, quiet, { method: 'GET', url: '/api/v1/comments/mail' })).json().data.enabled, false);
  const keyAsks = await ctx.call({ method: 'GET', url: '/api/v1/comments/mail' });
  t.equal(keyAsks.statusCode, 400);
  t.match(keyAsks.json().error.message, 'not of an API key');

  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Tide tables', content: 'High at six.', isDraft: false } })).json().data.post;
  const other = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Low water', content: 'Mud.', isDraft: false } })).json().data.post;
  const comment = (slug: string, body: string) =>
    ctx.app.inject({ method: 'POST', url: `/content/v1/sites/my-blog/posts/${slug}/comments`, payload: { name: 'Ada <Reader>', email: 'ada@example.com', body } });

  t.equal((await comment(post.slug, 'When is the next spring tide?')).statusCode, 201);
  const toOwner = await mailbox.to('owner@example.com');
  const toEditor = await mailbox.to('editor@example.com');
  for (const mail of [toOwner, toEditor]) {
    t.equal(mail.parsed.subject, 'Comments wait for a moderator on “Tide tables”');
    t.match(mail.parsed.text, 'A comment waits for a moderator on “Tide tables”.');
    t.match(mail.parsed.text, 'The latest, by Ada <Reader>: “When is the next spring tide?”');
    t.match(mail.parsed.text, `/admin/comments?postId=${post.id}`);
    t.notMatch(mail.raw, 'ada@example.com', "the commenter's email is not passed on");
  }
  t.match(toOwner.parsed.html, 'Ada &lt;Reader&gt;', 'the HTML part escapes the name');
  t.equal(await mailJobs(), 3, 'one mail to each who takes it (the test site\'s first owner too); none to the owner who said no');

  // More comments on the same post within the hour: no more mail. Another post: its own mail.
  for (const body of ['And the neap?', 'Thanks!']) await comment(post.slug, body);
  t.equal(await mailJobs(), 3, 'at most one mail per post an hour');
  await comment(other.slug, 'Muddy indeed.');
  t.equal(await mailJobs(), 6, 'another post is another mail');

  // An hour on, the next waiting comment is told again, with the count of all that wait.
  await ctx.rows('update comment_notices set sent_at = ? where post_id = ? returning post_id', ctx.app.backend.kind === 'sqlite' ? Date.now() - 3_600_001 : new Date(Date.now() - 3_600_001), post.id);
  await comment(post.slug, 'Still wondering.');
  t.equal(await mailJobs(), 9);
  await waitFor(() => mailbox.received.some((mail) => mail.parsed.subject?.includes('Tide tables') && mail.parsed.text?.includes('4 comments wait')), 'the second mail, counting all four');
  t.notOk(mailbox.received.some((mail) => mail.rcptTo.includes('quiet-owner@example.com')), 'nothing to the owner who said no');

  // Spam, and a staff reply, tell nobody.
  await ctx.call({ method: 'POST', url: `/api/v1/posts/${other.id}/comments`, payload: { body: 'Welcome.' } });
  await ctx.app.inject({ method: 'POST', url: `/content/v1/sites/my-blog/posts/${other.slug}/comments`, payload: { name: 'Bot', body: 'x', website: 'spam' } });
  t.equal(await mailJobs(), 9);
});

t.test('without mail set up, comments wait as ever and nothing is queued', async (t) => {
  const ctx = await buildTestApp(t);
  await addUser(ctx, 'owner@example.com', 'owner');
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Quiet', isDraft: false } })).json().data.post;
  const sent = await ctx.app.inject({ method: 'POST', url: `/content/v1/sites/my-blog/posts/${post.slug}/comments`, payload: { name: 'Bo', body: 'Hi' } });
  t.equal(sent.statusCode, 201);
  t.equal(await ctx.count("select count(*) as n from jobs where kind = 'mail-send'"), 0);
  const owner = await signIn(ctx, 'owner@example.com');
  t.same((await asUser(ctx, owner, { method: 'GET', url: '/api/v1/comments/mail' })).json().data, { enabled: true, mailConfigured: false });
});
