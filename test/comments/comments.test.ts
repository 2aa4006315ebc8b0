/**
 * Comments end to end through the API: the no-JavaScript form waits for a moderator, is
 * approved, and shows on the page, in the content API and in the count; the JSON path with a
 * solved challenge; replies, deletes, closing, erasure; nothing of the email ever public.
 */
import t, { type Test } from 'tap';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { solve } from '../spam-guard/helpers.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

async function setup(t: Test, env: Record<string, string> = {}) {
  const ctx = await buildTestApp(t, { SPAM_GUARD_DIFFICULTY: '100', SPAM_GUARD_MIN_FILL_SECONDS: '0', ...env });
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Espresso at home', content: 'Nine bars.', isDraft: false } })).json().data.post;
  return { ctx, post, page: `/sites/my-blog/${post.slug}/` };
}

const get = (ctx: TestApp, url: string) => ctx.call({ method: 'GET', url, key: null });

t.test('a reader without JavaScript comments; it waits; a moderator approves it; page, content API and count show it', async (t) => {
  const { ctx, post, page } = await setup(t);
  const empty = (await get(ctx, page)).body;
  for (const text of ['No comments yet', '>Name</label>', '>Email (optional, never shown)</label>', '>Comment</label>', '>Post comment</button>']) t.match(empty, text);

  const sent = await ctx.call({ method: 'POST', url: `${page}comments`, key: null, headers: FORM, payload: form({ name: 'Ada', email: 'Ada@Example.com', body: 'Lovely.\n\nSee https://example.org/x' }) });
  t.equal(sent.statusCode, 303);
  t.equal(sent.headers.location, `${page}?comment=pending#comments`);
  t.match((await get(ctx, String(sent.headers.location).split('#')[0]!)).body, 'Thanks: your comment waits for a moderator');
  t.notMatch((await get(ctx, page)).body, 'Lovely.', 'not shown while it waits');

  const pending = (await ctx.call({ method: 'GET', url: '/api/v1/comments?status=pending' })).json().data;
  t.equal(pending.pending, 1);
  t.match(pending.comments[0], { authorName: 'Ada', status: 'pending', heldFor: 'no proof of work (sent without JavaScript)', authorEmail: 'ada@example.com', post: { id: post.id, title: 'Espresso at home' } });

  const approved = await ctx.call({ method: 'PATCH', url: `/api/v1/comments/${pending.comments[0].id}`, payload: { status: 'approved' } });
  t.equal(approved.statusCode, 200);
  const shown = (await get(ctx, page)).body;
  t.match(shown, '1 comment');
  t.match(shown, '<p>Lovely.</p>');
  t.match(shown, '<a href="https://example.org/x" rel="nofollow ugc noopener">https://example.org/x</a>');
  t.notMatch(shown, /ada@example\.com/i, 'the email is never shown');

  const api = await get(ctx, `/content/v1/sites/my-blog/posts/${post.slug}/comments`);
  t.equal(api.statusCode, 200);
  t.equal(api.headers['access-control-allow-origin'], '*');
  t.match(api.json().data, { comments: [{ authorName: 'Ada', parentId: null }], pagination: { total: 1 } });
  t.notMatch(api.body, /example\.com|authorEmail|heldFor/i);

  // Hidden again (spam): gone from page and API at once.
  await ctx.call({ method: 'PATCH', url: `/api/v1/comments/${pending.comments[0].id}`, payload: { status: 'spam' } });
  t.match((await get(ctx, page)).body, 'No comments yet');
  t.equal((await get(ctx, `/content/v1/sites/my-blog/posts/${post.slug}/comments`)).json().data.pagination.total, 0);
});

t.test('a bad field is shown on the page with what was typed kept', async (t) => {
  const { ctx, page } = await setup(t);
  const answer = await ctx.call({ method: 'POST', url: `${page}comments`, key: null, headers: FORM, payload: form({ name: '', email: 'not-an-email', body: 'My <typed> words' }) });
  t.equal(answer.statusCode, 400);
  t.match(answer.headers['content-type'], 'text/html');
  t.match(answer.body, 'Name is required');
  t.match(answer.body, 'Email must be an email address');
  t.match(answer.body, 'value="not-an-email"');
  t.match(answer.body, '>My &lt;typed&gt; words</textarea>');
});

t.test('the JSON path: a solved challenge, 201 with the status; 400 naming the field; 429 with Retry-After; open sites publish returning authors', async (t) => {
  const { ctx, post } = await setup(t, { SPAM_GUARD_RATE_MAX: '3' });
  const url = `/content/v1/sites/my-blog/posts/${post.slug}/comments`;
  const proof = async () => solve((await get(ctx, '/content/v1/sites/my-blog/challenge?form=comment')).json());
  const send = async (payload: object, address = '198.51.100.1') => ctx.app.inject({ method: 'POST', url, payload, remoteAddress: address });

  const firstProof = await proof();
  const first = await send({ name: 'Bo', email: 'bo@example.com', body: 'First!', altcha: firstProof });
  t.equal(first.statusCode, 201);
  t.match(first.json().data.comment, { status: 'pending', authorName: 'Bo' });
  t.notMatch(first.body, 'bo@example.com');

  const bad = await send({ name: 'Bo', body: '' }, '198.51.100.2');
  t.equal(bad.statusCode, 400);
  t.match(bad.json().error.details, [{ path: '/body/body' }]);
  const replayed = await send({ name: 'Bo', body: 'again', altcha: firstProof }, '198.51.100.3');
  t.equal(replayed.statusCode, 400);
  t.match(replayed.json().error.details, [{ path: '/body/altcha' }]);

  for (let i = 0; i < 3; i++) await send({ name: 'Cy', body: `note ${i}` }, '203.0.113.50');
  const limited = await send({ name: 'Cy', body: 'one more' }, '203.0.113.50');
  t.equal(limited.statusCode, 429);
  t.ok(Number(limited.headers['retry-after']) > 0);

  // An open site publishes a returning author's comment at once.
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { comments: 'open' } });
  await ctx.call({ method: 'PATCH', url: `/api/v1/comments/${first.json().data.comment.id}`, payload: { status: 'approved' } });
  const again = await send({ name: 'Bo', email: 'BO@example.com', body: 'Back again', altcha: await proof() }, '198.51.100.9');
  t.match(again.json().data.comment, { status: 'approved' });
  const stranger = await send({ name: 'Di', email: 'di@example.com', body: 'New here', altcha: await proof() }, '198.51.100.10');
  t.match(stranger.json().data.comment, { status: 'pending' });
});

t.test('replies one level deep under their parent; a staff reply is the site\'s; deleting a comment deletes its replies', async (t) => {
  const { ctx, post, page } = await setup(t);
  const staff = await ctx.call({ method: 'POST', url: `/api/v1/posts/${post.id}/comments`, payload: { body: 'Welcome, readers.' } });
  t.equal(staff.statusCode, 201);
  const parent = staff.json().data.comment;
  t.match(parent, { status: 'approved', byStaff: true, authorName: 'My Blog' });
  const replyPage = (await get(ctx, `${page}?replyTo=${parent.id}`)).body;
  t.match(replyPage, `name="parentId" value="${parent.id}"`, 'the Reply link fills in the parent');
  t.match(replyPage, 'Replying to');

  const reply = await ctx.call({ method: 'POST', url: `/api/v1/posts/${post.id}/comments`, payload: { body: 'A reply.', parentId: parent.id } });
  t.equal(reply.statusCode, 201);
  const deeper = await ctx.call({ method: 'POST', url: `/api/v1/posts/${post.id}/comments`, payload: { body: 'Too deep.', parentId: reply.json().data.comment.id } });
  t.equal(deeper.statusCode, 400, 'one level deep');
  const html = (await get(ctx, page)).body;
  t.match(html, '2 comments');
  t.match(html, /class="comment-replies">[\s\S]*A reply\./);
  t.match(html, '>Reply</a>');

  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/comments/${parent.id}` })).statusCode, 200);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/comments' })).json().data.pagination.total, 0, 'the reply went with it');
  t.match((await get(ctx, page)).body, 'No comments yet');
});

t.test('a post can close its comments; the site can turn them off; deleting a post deletes its comments and stats', async (t) => {
  const { ctx, post, page } = await setup(t);
  await ctx.call({ method: 'POST', url: `/api/v1/posts/${post.id}/comments`, payload: { body: 'Kept.' } });
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${post.id}`, payload: { commentsEnabled: false } })).statusCode, 200);
  const closed = (await get(ctx, page)).body;
  t.match(closed, 'Comments are closed');
  t.match(closed, 'Kept.', 'existing comments stay');
  t.notMatch(closed, '<form class="comment-form"');
  t.equal((await ctx.app.inject({ method: 'POST', url: `/content/v1/sites/my-blog/posts/${post.slug}/comments`, payload: { name: 'A', body: 'b' } })).statusCode, 409);

  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { comments: 'off' } });
  t.notMatch((await get(ctx, page)).body, 'id="comments"');

  await ctx.app.inject({ method: 'GET', url: page, headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' } });
  await ctx.app.analytics.flush();
  t.ok((await ctx.count('select count(*) as n from analytics_pages where page = ?', post.id)) > 0);
  await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${post.id}` });
  t.equal(await ctx.count('select count(*) as n from comments where post_id = ?', post.id), 0);
  t.equal(await ctx.count('select count(*) as n from analytics_pages where page = ?', post.id), 0, 'the analytics half too');
  t.equal(await ctx.count('select count(*) as n from analytics_visitors where page = ?', post.id), 0);
});

t.test('an owner erases a commenter\'s email from every comment of the site', async (t) => {
  const { ctx, page } = await setup(t);
  for (const body of ['one', 'two']) await ctx.call({ method: 'POST', url: `${page}comments`, key: null, headers: FORM, payload: form({ name: 'Ed', email: 'ed@example.com', body }) });
  const erased = await ctx.call({ method: 'POST', url: '/api/v1/comments/erase-email', payload: { email: 'ED@example.com' } });
  t.match(erased.json().data, { erased: 2 });
  t.equal(await ctx.count("select count(*) as n from comments where author_email is not null"), 0);
});
