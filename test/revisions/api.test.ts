import t from 'tap';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { addUser, asUser, signIn } from '../helpers/accounts.js';
import { REVISIONS_KEPT } from '../../src/revisions/store.js';

const create = async (ctx: TestApp, payload: object) => {
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json().data.post as { id: string };
};

t.test('PATCH with If-Match: the second of two tabs is told the post changed (412), never overwrites', async (t) => {
  const ctx = await buildTestApp(t);
  const { id } = await create(ctx, { title: 'Two tabs', content: 'First text' });
  const opened = await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}` });
  const etag = opened.headers.etag as string;
  t.match(etag, /^"[0-9a-z]+"$/, 'GET answers an ETag');

  const first = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, headers: { 'if-match': etag }, payload: { content: 'Tab one' } });
  t.equal(first.statusCode, 200);
  t.not(first.headers.etag, etag, 'a save moves the ETag');
  const second = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, headers: { 'if-match': etag }, payload: { content: 'Tab two' } });
  t.equal(second.statusCode, 412);
  t.equal(second.json().error.code, 'PRECONDITION_FAILED');
  t.match(second.json().error.message, /changed since you opened it/);
  const now = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}` })).json().data.post;
  t.equal(now.content, 'Tab one', 'the first save stands');
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}` })).headers.etag, first.headers.etag, 'GET answers the ETag PATCH did');
  // With the new ETag, or without a condition, saves go through.
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, headers: { 'if-match': first.headers.etag as string }, payload: { content: 'Tab two' } })).statusCode, 200);
});

t.test('each save of the text keeps a revision; a revision restores as a new one; the last 50 are kept', async (t) => {
  const ctx = await buildTestApp(t);
  const { id } = await create(ctx, { title: 'History', content: 'v1' });
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { content: 'v2' } });
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { tags: ['no-text-change'] } });
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { content: 'v3', description: 'About it' } });
  const listed = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}/revisions` })).json().data.revisions;
  t.same(
    listed.map((r: { content: string; kind: string }) => [r.content, r.kind]),
    [
      ['v3', 'save'],
      ['v2', 'save'],
      ['v1', 'save'],
    ],
    'one per text change, newest first (a tags edit keeps none)',
  );
  const v1 = listed[2];
  const restored = await ctx.call({ method: 'POST', url: `/api/v1/posts/${id}/revisions/${v1.id}/restore` });
  t.equal(restored.statusCode, 200);
  t.equal(restored.json().data.post.content, 'v1');
  t.equal(restored.json().data.post.description, null, 'the whole text of the revision');
  const after = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}/revisions` })).json().data.revisions;
  t.equal(after[0].kind, 'restore');
  t.equal(after[0].content, 'v1');
  t.equal((await ctx.call({ method: 'POST', url: `/api/v1/posts/${id}/revisions/00000000-0000-4000-8000-000000000000/restore` })).statusCode, 404);

  for (let i = 0; i < REVISIONS_KEPT + 5; i++) await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { content: `edit ${i}` } });
  const kept = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}/revisions` })).json().data.revisions;
  t.equal(kept.length, REVISIONS_KEPT, 'older ones thinned');
  t.equal(kept[0].content, `edit ${REVISIONS_KEPT + 4}`);
});

t.test("a published post's edits wait as a pending change until Update (a PATCH)", async (t) => {
  const ctx = await buildTestApp(t);
  const { id } = await create(ctx, { title: 'Live', content: 'Live text', isDraft: false });
  const handle = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site.handle;
  const page = () => ctx.call({ method: 'GET', url: `/sites/${handle}/live/`, key: null });

  const empty = await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}/pending` });
  t.equal(empty.json().data.pending, null);
  const etag = empty.json().data.etag;
  const saved = await ctx.call({ method: 'PUT', url: `/api/v1/posts/${id}/pending`, headers: { 'if-match': etag }, payload: { content: 'Better text' } });
  t.equal(saved.statusCode, 200, saved.body);
  t.equal(saved.json().data.pending.content, 'Better text');
  t.equal(saved.json().data.pending.title, 'Live', 'fields not given keep the live value');
  t.match((await page()).body, /Live text/, 'readers still see the live text');
  t.notMatch((await page()).body, /Better text/);
  const stale = await ctx.call({ method: 'PUT', url: `/api/v1/posts/${id}/pending`, headers: { 'if-match': etag }, payload: { content: 'Other tab' } });
  t.equal(stale.statusCode, 412, 'another tab is told');

  const preview = await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}/page` });
  t.equal(preview.statusCode, 200);
  t.match(preview.headers['content-type'], /text\/html/);
  t.match(preview.body, /Better text/, 'the preview shows the pending text');
  t.match(preview.body, /<meta name="robots" content="noindex">/);

  const update = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { content: 'Better text' } });
  t.equal(update.statusCode, 200);
  t.match((await page()).body, /Better text/, 'Update makes it live');
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}/pending` })).json().data.pending, null, 'and clears it');

  const draft = await create(ctx, { title: 'A draft' });
  t.equal((await ctx.call({ method: 'PUT', url: `/api/v1/posts/${draft.id}/pending`, payload: { content: 'x' } })).statusCode, 409);
  t.equal((await ctx.call({ method: 'PUT', url: `/api/v1/posts/${id}/pending`, payload: { content: 'x' } })).statusCode, 200);
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${id}/pending` })).statusCode, 200);
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}/pending` })).json().data.pending, null, 'discarded');
});

t.test('roles: authors own their posts, contributors write drafts only; the API answers 403', async (t) => {
  const ctx = await buildTestApp(t);
  const author = await addUser(ctx, 'author@example.com', 'author');
  await addUser(ctx, 'other@example.com', 'author');
  const contributor = await addUser(ctx, 'contributor@example.com', 'contributor');
  const asAuthor = await signIn(ctx, 'author@example.com');
  const asOther = await signIn(ctx, 'other@example.com');
  const asContributor = await signIn(ctx, 'contributor@example.com');
  const call = (cookie: string, method: string, url: string, payload?: object) => asUser(ctx, cookie, { method: method as 'GET', url, payload });

  const made = await call(asAuthor, 'POST', '/api/v1/posts', { title: 'Mine', authorId: null });
  t.equal(made.statusCode, 201);
  const mine = made.json().data.post;
  t.equal(mine.authorId, author.id, "a person's post carries their user id");
  t.equal((await call(asAuthor, 'PUT', `/api/v1/posts/${mine.id}`)).statusCode, 200, 'an author publishes their own');

  for (const [method, url, payload] of [
    ['PATCH', `/api/v1/posts/${mine.id}`, { title: 'Taken' }],
    ['PUT', `/api/v1/posts/${mine.id}`],
    ['DELETE', `/api/v1/posts/${mine.id}`],
    ['PUT', `/api/v1/posts/${mine.id}/pending`, { content: 'x' }],
  ] as [string, string, object?][]) {
    const res = await call(asOther, method, url, payload);
    t.equal(res.statusCode, 403, `another author: ${method} ${url}`);
    t.equal(res.json().error.code, 'FORBIDDEN');
  }
  t.equal((await call(asAuthor, 'POST', '/api/v1/posts', { title: 'Theirs', authorId: 'someone-else' })).statusCode, 403, 'an author writes under their own name');

  const draft = (await call(asContributor, 'POST', '/api/v1/posts', { title: 'Contribution' })).json().data.post;
  t.equal(draft.authorId, contributor.id);
  t.equal((await call(asContributor, 'PATCH', `/api/v1/posts/${draft.id}`, { content: 'Written' })).statusCode, 200, 'a contributor edits their draft');
  for (const [method, url, payload] of [
    ['POST', '/api/v1/posts', { title: 'Straight out', isDraft: false }],
    ['POST', '/api/v1/posts', { title: 'Later', publishAt: new Date(Date.now() + 86_400_000).toISOString() }],
    ['PATCH', `/api/v1/posts/${draft.id}`, { isDraft: false }],
    ['PATCH', `/api/v1/posts/${draft.id}`, { publishAt: new Date(Date.now() + 86_400_000).toISOString() }],
    ['PUT', `/api/v1/posts/${draft.id}`],
    ['POST', '/api/v1/posts/batch', { posts: [{ topic: 'Anything' }] }],
  ] as [string, string, object?][]) {
    t.equal((await call(asContributor, method, url, payload)).statusCode, 403, `contributor: ${method} ${url}`);
  }
  const submitted = await call(asContributor, 'POST', `/api/v1/posts/${draft.id}/review`);
  t.equal(submitted.statusCode, 200);
  t.match(submitted.json().data.post.reviewRequestedAt, /^\d{4}-/);
  // An editor publishes it; the contributor can then neither change nor delete it.
  t.equal((await ctx.call({ method: 'PUT', url: `/api/v1/posts/${draft.id}` })).statusCode, 200);
  t.equal((await call(asContributor, 'PATCH', `/api/v1/posts/${draft.id}`, { content: 'After' })).statusCode, 403);
  t.equal((await call(asContributor, 'DELETE', `/api/v1/posts/${draft.id}`)).statusCode, 403);
  const published = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${draft.id}` })).json().data.post;
  t.equal(published.reviewRequestedAt, null, 'published: no longer waiting for review');
  const ownDraft = (await call(asContributor, 'POST', '/api/v1/posts', { title: 'Scrap' })).json().data.post;
  t.equal((await call(asContributor, 'DELETE', `/api/v1/posts/${ownDraft.id}`)).statusCode, 200, 'a contributor deletes their own draft');
});

t.test("share-preview links open a draft signed out until it is published or the link revoked; the public page names the author", async (t) => {
  const ctx = await buildTestApp(t);
  const user = await addUser(ctx, 'writer@example.com', 'author');
  await ctx.app.accounts.setDisplayName(user.id, 'Ada Writer');
  const cookie = await signIn(ctx, 'writer@example.com');
  const post = (await asUser(ctx, cookie, { method: 'POST', url: '/api/v1/posts', payload: { title: 'Secret plans', content: 'Draft body' } })).json().data.post;

  const shared = await asUser(ctx, cookie, { method: 'POST', url: `/api/v1/posts/${post.id}/share` });
  t.equal(shared.statusCode, 200);
  const { url, token } = shared.json().data;
  t.ok(token.length >= 32, 'an unguessable token');
  t.equal(url, `/preview/${token}`);
  const open = await ctx.call({ method: 'GET', url, key: null });
  t.equal(open.statusCode, 200);
  t.match(open.body, /Secret plans/);
  t.match(open.body, /Draft body/);
  t.match(open.body, /Preview/);
  t.match(open.body, /<meta name="robots" content="noindex">/);
  t.match(open.body, /By <span class="author">Ada Writer<\/span>/);
  t.equal(open.headers['x-robots-tag'], 'noindex');
  t.equal((await ctx.call({ method: 'GET', url: `/preview/${'x'.repeat(32)}`, key: null })).statusCode, 404, 'a made-up token opens nothing');

  t.equal((await asUser(ctx, cookie, { method: 'GET', url: `/api/v1/posts/${post.id}/share` })).json().data.url, url);
  await asUser(ctx, cookie, { method: 'PUT', url: `/api/v1/posts/${post.id}` });
  t.equal((await ctx.call({ method: 'GET', url, key: null })).statusCode, 404, 'published: the link stops');
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${post.id}/share` })).json().data.url, null);
  const handle = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site.handle;
  t.match((await ctx.call({ method: 'GET', url: `/sites/${handle}/secret-plans/`, key: null })).body, /By <span class="author">Ada Writer<\/span>/, "the public page shows the author's display name");

  const other = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Another' } })).json().data.post;
  const link = (await ctx.call({ method: 'POST', url: `/api/v1/posts/${other.id}/share` })).json().data.url;
  t.equal((await ctx.call({ method: 'GET', url: link, key: null })).statusCode, 200);
  await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${other.id}/share` });
  t.equal((await ctx.call({ method: 'GET', url: link, key: null })).statusCode, 404, 'revoked: the link stops');
});
