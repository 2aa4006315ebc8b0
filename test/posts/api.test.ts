import t from 'tap';
import { ISO_MS, SQLITE_ONLY, UUID_V4, buildTestApp } from '../helpers/app.js';

const SUMMARY_KEYS = ['authorId', 'category', 'createdAt', 'description', 'id', 'isDraft', 'slug', 'tags', 'title', 'updatedAt'];
// Retrieve adds content, visibility, publishedAt and publishAt (scheduled publishing) to the spec's fields.
const DETAIL_KEYS = [...SUMMARY_KEYS, 'commentsEnabled', 'content', 'cta', 'featureImage', 'featureImageAlt', 'generatorModel', 'generatorProvider', 'publishAt', 'publishedAt', 'reviewRequestedAt', 'sendNewsletter', 'visibility'].sort();

t.test('create returns the spec shape, field by field', async (t) => {
  const ctx = await buildTestApp(t);
  const res = await ctx.call({
    method: 'POST',
    url: '/api/v1/posts',
    payload: {
      title: '  Café Culture: A Guide!  ',
      description: 'All about coffee',
      content: '# Hello\n\nBody',
      category: 'Food',
      tags: ['coffee', 'Coffee', ' travel ', ''],
      authorId: 'author-1',
    },
  });
  t.equal(res.statusCode, 201);
  t.ok(res.headers['x-request-id']);
  const body = res.json();
  t.equal(body.success, true);
  t.same(Object.keys(body.data).sort(), ['message', 'post', 'site']);
  t.type(body.data.message, 'string');
  t.same(body.data.site, ctx.site);
  const post = body.data.post;
  t.same(Object.keys(post).sort(), SUMMARY_KEYS);
  t.match(post.id, UUID_V4);
  t.equal(post.slug, 'cafe-culture-a-guide');
  t.equal(post.title, 'Café Culture: A Guide!');
  t.equal(post.description, 'All about coffee');
  t.equal(post.category, 'Food');
  t.same(post.tags, ['coffee', 'travel']);
  t.equal(post.authorId, 'author-1');
  t.equal(post.isDraft, true, 'isDraft defaults to true');
  t.match(post.createdAt, ISO_MS);
  t.equal(post.updatedAt, post.createdAt);
});

t.test('absent optional fields are null and tags []', async (t) => {
  const ctx = await buildTestApp(t);
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Plain', isDraft: false } });
  const post = res.json().data.post;
  t.equal(post.description, null);
  t.equal(post.category, null);
  t.equal(post.authorId, null);
  t.same(post.tags, []);
  t.equal(post.isDraft, false);
  const got = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${post.id}` })).json().data.post;
  t.equal(got.content, null);
  t.equal(got.publishedAt, got.createdAt, 'a post created published has publishedAt');
});

t.test('retrieve returns the spec fields plus content, visibility, publishedAt', async (t) => {
  const ctx = await buildTestApp(t);
  const created = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Read me', content: 'Some **markdown**', tags: ['x'] } })).json().data.post;
  const res = await ctx.call({ method: 'GET', url: `/api/v1/posts/${created.id}` });
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.equal(body.success, true);
  t.same(Object.keys(body.data).sort(), ['message', 'post', 'site']);
  t.same(body.data.site, ctx.site);
  const post = body.data.post;
  t.same(Object.keys(post).sort(), DETAIL_KEYS);
  t.equal(post.cta, null);
  t.equal(post.content, 'Some **markdown**');
  t.equal(post.visibility, 'public');
  t.equal(post.publishedAt, null);
  for (const key of SUMMARY_KEYS) t.same(post[key], created[key], key);
});

t.test('validation errors are 400 with details', async (t) => {
  const ctx = await buildTestApp(t);
  const cases: [string, unknown][] = [
    ['missing title', { description: 'x' }],
    ['blank title', { title: '   ' }],
    ['title too long', { title: 'x'.repeat(301) }],
    ['tags not an array', { title: 'x', tags: 'a,b' }],
    ['isDraft as string', { title: 'x', isDraft: 'true' }],
    ['title as number', { title: 42 }],
    ['too many tags', { title: 'x', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }],
    ['array body', [{ title: 'x' }]],
  ];
  for (const [name, payload] of cases) {
    const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: payload as object });
    t.equal(res.statusCode, 400, name);
    const body = res.json();
    t.equal(body.success, false, name);
    t.equal(body.error.code, 'VALIDATION_ERROR', name);
    t.type(body.error.message, 'string');
    t.equal(body.error.requestId, res.headers['x-request-id'], `${name}: requestId matches the header`);
  }
  const missing = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: {} });
  t.same(missing.json().error.details, [{ path: '/body/title', message: "must have required property 'title'" }]);
});

t.test('slugs are unique per site', async (t) => {
  const ctx = await buildTestApp(t);
  const slugs: string[] = [];
  for (let i = 0; i < 3; i++) {
    slugs.push((await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Same Title' } })).json().data.post.slug);
  }
  t.same(slugs, ['same-title', 'same-title-2', 'same-title-3']);
  const other = await ctx.addSite('Other');
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Same Title' }, key: other.key });
  t.equal(res.json().data.post.slug, 'same-title', 'another site has its own slug space');
  const symbols = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: '日本語 !!!' } });
  t.equal(symbols.json().data.post.slug, 'post');
  const more = [];
  for (let i = 0; i < 12; i++) more.push((await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: '中文' } })).json().data.post.slug);
  t.same(more, Array.from({ length: 12 }, (_, i) => `post-${i + 2}`), 'numbers past 9 sort as numbers');
  await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Post-Mortem' } });
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: '한국어' } })).json().data.post.slug, 'post-14', 'post-mortem is no number');

  const long = 'A very long title '.repeat(6);
  const longSlugs: string[] = [];
  for (let i = 0; i < 3; i++) longSlugs.push((await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: long } })).json().data.post.slug);
  t.equal(new Set(longSlugs).size, 3, 'long slugs stay unique');
  t.ok(longSlugs.every((slug) => slug.length <= 80), 'and within 80 characters');
  t.match(longSlugs[1], /-2$/);
});

t.test('PUT toggles the draft state, twice', async (t) => {
  const ctx = await buildTestApp(t);
  const created = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Toggle me' } })).json().data.post;
  const first = await ctx.call({ method: 'PUT', url: `/api/v1/posts/${created.id}` });
  t.equal(first.statusCode, 200);
  const one = first.json();
  t.equal(one.success, true);
  t.same(Object.keys(one.data).sort(), ['message', 'post']);
  t.same(Object.keys(one.data.post).sort(), ['id', 'isDraft', 'title', 'updatedAt']);
  t.equal(one.data.post.isDraft, false);
  t.ok(one.data.post.updatedAt > created.updatedAt, 'updatedAt strictly increases');
  const published = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${created.id}` })).json().data.post;
  t.match(published.publishedAt, ISO_MS);

  const second = (await ctx.call({ method: 'PUT', url: `/api/v1/posts/${created.id}`, headers: { 'content-type': 'application/json' }, payload: '' })).json();
  t.equal(second.data.post.isDraft, true);
  t.ok(second.data.post.updatedAt > one.data.post.updatedAt);
  const again = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${created.id}` })).json().data.post;
  t.equal(again.publishedAt, published.publishedAt, 'publishedAt keeps the first publication');

  const withBody = await ctx.call({ method: 'PUT', url: `/api/v1/posts/${created.id}`, payload: { title: 'edit' } });
  t.equal(withBody.statusCode, 400);
  t.match(withBody.json().error.message, /PATCH/);
  const empty = await ctx.call({ method: 'PUT', url: `/api/v1/posts/${created.id}`, payload: {} });
  t.equal(empty.statusCode, 200, 'an empty JSON object is no body');
  t.equal((await ctx.call({ method: 'PUT', url: '/api/v1/posts/does-not-exist' })).statusCode, 404);
});

t.test('PATCH edits fields', async (t) => {
  const ctx = await buildTestApp(t);
  const created = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Old title', tags: ['a'] } })).json().data.post;
  const res = await ctx.call({
    method: 'PATCH',
    url: `/api/v1/posts/${created.id}`,
    payload: { title: 'New title', tags: ['b', 'c'], description: null, visibility: 'unlisted', isDraft: false },
  });
  t.equal(res.statusCode, 200);
  const post = res.json().data.post;
  t.equal(post.title, 'New title');
  t.equal(post.slug, 'new-title');
  t.same(post.tags, ['b', 'c']);
  t.equal(post.visibility, 'unlisted');
  t.equal(post.isDraft, false);
  t.match(post.publishedAt, ISO_MS);
  t.ok(post.updatedAt > created.updatedAt);
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${created.id}`, payload: {} })).statusCode, 400, 'nothing to edit');
  const unknownOnly = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${created.id}`, payload: { foo: 1 } });
  t.equal(unknownOnly.statusCode, 400, 'only unknown fields: nothing to edit');
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${created.id}` })).json().data.post.updatedAt, post.updatedAt, 'untouched');
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${created.id}`, payload: { visibility: 'secret' } })).statusCode, 400);
  const sameSlug = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${created.id}`, payload: { title: 'New Title!' } });
  t.equal(sameSlug.json().data.post.slug, 'new-title', 'a title that slugs the same keeps its slug');
});

t.test('DELETE removes the post; a second delete is 404', async (t) => {
  const ctx = await buildTestApp(t);
  const created = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Bye' } })).json().data.post;
  const res = await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${created.id}` });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { success: true, data: { message: 'Post deleted successfully', postId: created.id } });
  const again = await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${created.id}` });
  t.equal(again.statusCode, 404);
  t.equal(again.json().error.code, 'NOT_FOUND');
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${created.id}` })).statusCode, 404);
});

t.test('list: pagination edges and filters', async (t) => {
  const ctx = await buildTestApp(t);
  for (let i = 1; i <= 5; i++) {
    await ctx.call({
      method: 'POST',
      url: '/api/v1/posts',
      payload: { title: `Post ${i}`, category: i % 2 ? 'odd' : 'even', tags: i === 3 ? ['Three'] : [], isDraft: i > 2 },
    });
  }
  const unlisted = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Hidden 100%_match' } })).json().data.post;
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${unlisted.id}`, payload: { visibility: 'unlisted', isDraft: false } });

  const page1 = (await ctx.call({ method: 'GET', url: '/api/v1/posts?limit=2' })).json().data;
  t.same(page1.pagination, { page: 1, limit: 2, total: 5, pages: 3 }, 'unlisted posts are left out by default');
  t.same(page1.posts.map((p: { title: string }) => p.title), ['Post 5', 'Post 4'], 'newest first');
  const past = (await ctx.call({ method: 'GET', url: '/api/v1/posts?page=9&limit=2' })).json().data;
  t.same(past.posts, []);
  t.same(past.pagination, { page: 9, limit: 2, total: 5, pages: 3 });
  for (const query of ['limit=0', 'limit=101', 'page=0', 'page=abc', 'status=bogus']) {
    const res = await ctx.call({ method: 'GET', url: `/api/v1/posts?${query}` });
    t.equal(res.statusCode, 400, query);
    t.equal(res.json().error.code, 'VALIDATION_ERROR', query);
  }
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts?limit=100' })).statusCode, 200);
  const count = async (query: string) => (await ctx.call({ method: 'GET', url: `/api/v1/posts?${query}` })).json().data.pagination.total;
  t.equal(await count('status=draft'), 3);
  t.equal(await count('status=published'), 2);
  t.equal(await count('status=unlisted'), 1);
  t.equal(await count('status=all'), 6);
  t.equal(await count('category=odd'), 3);
  t.equal(await count('tag=three'), 1);
  t.equal(await count('q=post%204'), 1);
  t.equal(await count('q=100%25_&status=all'), 1, 'LIKE wildcards in q are literal');
  t.equal(await count('q=%25'), 0);
});

t.test('sites are isolated', async (t) => {
  const ctx = await buildTestApp(t);
  const other = await ctx.addSite('Site B');
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Mine' } })).json().data.post;
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
    const res = await ctx.call({ method, url: `/api/v1/posts/${post.id}`, key: other.key, ...(method === 'PATCH' ? { payload: { title: 'x' } } : {}) });
    t.equal(res.statusCode, 404, method);
    t.equal(res.json().error.code, 'NOT_FOUND');
  }
  const list = (await ctx.call({ method: 'GET', url: '/api/v1/posts', key: other.key })).json().data;
  t.equal(list.pagination.total, 0);
  t.same(list.site, other.site);
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${post.id}` })).json().data.post.title, 'Mine', 'untouched');
});

t.test('a post read again is the same until a post of the site changes: every kind of write shows at once', async (t) => {
  const ctx = await buildTestApp(t);
  const other = await ctx.addSite('Other site');
  const created = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Kept', tags: ['a'] } })).json().data.post;
  const neighbour = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Neighbour' } })).json().data.post;
  const read = async (id = created.id, key?: string) => {
    const res = await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}`, key });
    return { status: res.statusCode, text: res.body, post: res.json().data?.post };
  };

  const first = await read();
  t.equal((await read()).text, first.text, 'read again: the same answer');
  t.match(first.post, { id: created.id, title: 'Kept', tags: ['a'], isDraft: true });

  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${created.id}`, payload: { title: 'Kept, edited', tags: ['b'] } });
  t.match((await read()).post, { title: 'Kept, edited', tags: ['b'], slug: 'kept-edited' }, 'an edit shows at once');
  await ctx.call({ method: 'PUT', url: `/api/v1/posts/${created.id}` });
  t.match((await read()).post, { isDraft: false, publishedAt: String }, 'a publish shows at once');
  await ctx.call({ method: 'PUT', url: `/api/v1/posts/${created.id}` });
  t.match((await read()).post, { isDraft: true }, 'and an unpublish');

  // A write to another post of the site is read anew too (the version moved), and answers the same.
  const beforeNeighbour = await read();
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${neighbour.id}`, payload: { title: 'Neighbour, edited' } });
  t.equal((await read()).text, beforeNeighbour.text);
  t.equal((await read(neighbour.id)).post.title, 'Neighbour, edited');

  // Another site cannot read it, kept or not, and its writes change nothing here.
  t.equal((await read(created.id, other.key)).status, 404);
  await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Elsewhere' }, key: other.key });
  t.equal((await read()).text, beforeNeighbour.text);

  await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${created.id}` });
  const gone = await ctx.call({ method: 'GET', url: `/api/v1/posts/${created.id}` });
  t.equal(gone.statusCode, 404, 'a delete shows at once');
  t.equal(gone.json().error.code, 'NOT_FOUND');
});

t.test('a post kept by one process is read anew after another connection writes it (the admin CLI, a second process)', { skip: SQLITE_ONLY }, async (t) => {
  const { openDatabase } = await import('../../src/db/sqlite.js');
  const { sqliteStores } = await import('../../src/stores/sqlite.js');
  const ctx = await buildTestApp(t);
  const created = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Before' } })).json().data.post;
  const title = async () => (await ctx.call({ method: 'GET', url: `/api/v1/posts/${created.id}` })).json().data.post.title;
  const listed = async () => (await ctx.call({ method: 'GET', url: '/api/v1/posts?status=all' })).json().data.posts.map((post: { title: string }) => post.title);
  t.equal(await title(), 'Before');
  t.same(await listed(), ['Before']);
  // A change behind the service's back that leaves the content version alone: the post and the page answer from what was kept.
  ctx.sqlite.prepare('update posts set title = ? where id = ?').run('Unseen', created.id);
  t.equal(await title(), 'Before', 'the post kept');
  t.same(await listed(), ['Before'], 'the page kept');
  const second = openDatabase(ctx.dataDir);
  t.teardown(() => second.close());
  await sqliteStores(second).posts.update(ctx.site.id, created.id, { title: 'After' });
  t.equal(await title(), 'After', "the other connection's write shows at once");
  t.same(await listed(), ['After'], 'in the list too');
  await sqliteStores(second).posts.delete(ctx.site.id, created.id);
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${created.id}` })).statusCode, 404);
});

t.test('a post kept stays kept while other posts of its site are written, and is read anew once it changes or the site moves otherwise', async (t) => {
  const ctx = await buildTestApp(t);
  const create = async (title: string) => (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title } })).json().data.post as { id: string };
  const kept = await create('Kept');
  const other = await create('Other');
  const title = async () => (await ctx.call({ method: 'GET', url: `/api/v1/posts/${kept.id}` })).json().data.post.title;
  t.equal(await title(), 'Kept');
  // A change behind the service's back that leaves the content version alone shows what answers: the post kept.
  // (`returning` lets one helper run it on both databases.)
  await ctx.rows('update posts set title = ? where id = ? returning id', 'Unseen', kept.id);
  t.equal(await title(), 'Kept');
  await create('Third');
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${other.id}`, payload: { title: 'Other, edited' } })).statusCode, 200);
  t.equal((await ctx.call({ method: 'PUT', url: `/api/v1/posts/${other.id}` })).statusCode, 200);
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${other.id}` })).statusCode, 200);
  t.equal(await title(), 'Kept', 'a create, an edit, a publish and a delete of other posts leave it kept');

  // A write of other posts that rolls back after moving the version is not taken for a change that committed.
  let refuse = true;
  ctx.app.posts.onChange(function* () {
    if (refuse) throw new Error('refused on purpose');
  });
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Refused' } })).statusCode, 500, 'the refused create was rolled back');
  refuse = false;
  // Another writer then takes the site to the version the rolled-back write had made, changing the post kept.
  await ctx.rows('update posts set title = ? where id = ? returning id', 'Changed elsewhere', kept.id);
  await ctx.rows('update sites set content_version = content_version + 1 where id = ? returning id', ctx.site.id);
  t.equal(await title(), 'Changed elsewhere', "a version this process did not see commit: read anew");

  await ctx.rows('update posts set title = ? where id = ? returning id', 'Unseen again', kept.id);
  t.equal(await title(), 'Changed elsewhere', 'kept again');
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${kept.id}`, payload: { title: 'Edited' } })).statusCode, 200);
  t.equal(await title(), 'Edited', 'a write of the post itself: read anew');
});

t.test('a list page read again is the same until a post of the site changes: every kind of write shows at once', async (t) => {
  const ctx = await buildTestApp(t);
  const other = await ctx.addSite('Other site');
  for (const title of ['First', 'Second', 'Third']) await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title, tags: ['kept'] } });
  const list = async (query = 'status=all&limit=10') => {
    const res = await ctx.call({ method: 'GET', url: `/api/v1/posts?${query}` });
    t.equal(res.statusCode, 200);
    return { text: res.body, ...(res.json().data as { posts: { id: string; title: string; isDraft: boolean; tags: string[] }[]; pagination: { total: number } }) };
  };
  const titles = async (query?: string) => (await list(query)).posts.map((post) => post.title);

  const first = await list();
  t.equal((await list()).text, first.text, 'read again: the same answer');
  t.same(await titles('tag=kept'), ['Third', 'Second', 'First']);

  const created = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Fourth' } })).json().data.post;
  const afterCreate = await list();
  t.same(afterCreate.posts.map((post) => post.title), ['Fourth', 'Third', 'Second', 'First'], 'a create shows at once');
  t.equal(afterCreate.pagination.total, 4);

  const third = afterCreate.posts[1]!;
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${third.id}`, payload: { title: 'Third, edited', tags: ['other'] } });
  t.same(await titles(), ['Fourth', 'Third, edited', 'Second', 'First'], 'an edit shows at once');
  t.same(await titles('tag=kept'), ['Second', 'First'], 'and in a filtered list');

  await ctx.call({ method: 'PUT', url: `/api/v1/posts/${created.id}` });
  t.same((await list('status=published')).posts.map((post) => post.id), [created.id], 'a publish shows at once');
  t.same(await titles('status=draft'), ['Third, edited', 'Second', 'First']);

  await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${created.id}` });
  t.same(await titles(), ['Third, edited', 'Second', 'First'], 'a delete shows at once');
  t.same(await titles('status=published'), []);

  // Another site's writes leave this site's pages as they were, and its own pages are its own.
  const before = await list();
  await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Elsewhere' }, key: other.key });
  t.equal((await list()).text, before.text, "another site's write changes nothing here");
  const theirs = await ctx.call({ method: 'GET', url: '/api/v1/posts?status=all&limit=10', key: other.key });
  t.same(theirs.json().data.posts.map((post: { title: string }) => post.title), ['Elsewhere']);
});
