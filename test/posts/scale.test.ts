import t from 'tap';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const create = async (ctx: TestApp, body: Record<string, unknown>) => (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: body })).json().data.post;

t.test('a repeated title takes the next suffix from its counter, stepping past slugs set by hand', async (t) => {
  const ctx = await buildTestApp(t);
  const slugs: string[] = [];
  for (let i = 0; i < 12; i++) slugs.push((await create(ctx, { title: 'Same title' })).slug);
  t.same(slugs, ['same-title', ...Array.from({ length: 11 }, (_, i) => `same-title-${i + 2}`)]);
  const byHand = await create(ctx, { title: 'Another' });
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${byHand.id}`, payload: { slug: 'same-title-13' } });
  t.equal((await create(ctx, { title: 'Same title' })).slug, 'same-title-14', 'a slug set by hand is stepped over');
  t.equal((await create(ctx, { title: '同じタイトル' })).slug, 'post');
  t.equal((await create(ctx, { title: '另一个标题' })).slug, 'post-2', 'titles with no ASCII share the base "post"');

  const counter = ctx.sqlite.prepare('select last from slug_counters where site_id = ? and base = ?').get(ctx.site.id, 'same-title') as { last: number };
  t.equal(counter.last, 14);
  const plan = ctx.sqlite
    .prepare('explain query plan select last from slug_counters where site_id = ? and base = ?')
    .all(ctx.site.id, 'same-title')
    .map((row) => (row as { detail: string }).detail)
    .join('\n');
  t.match(plan, /SEARCH slug_counters USING (INDEX sqlite_autoindex_slug_counters_1|PRIMARY KEY) \(site_id=\? AND base=\?\)/, 'the suffix is one index lookup');
});

t.test('a slug base collided with before the counters existed is counted once from the index', async (t) => {
  const ctx = await buildTestApp(t);
  await create(ctx, { title: 'Legacy' });
  await create(ctx, { title: 'Legacy' });
  await create(ctx, { title: 'Legacy' });
  ctx.sqlite.prepare('delete from slug_counters').run();
  t.equal((await create(ctx, { title: 'Legacy' })).slug, 'legacy-4');
  t.equal((await create(ctx, { title: 'Legacy' })).slug, 'legacy-5');
});

t.test('list totals come from counts every write keeps, equal to counting the rows', async (t) => {
  const ctx = await buildTestApp(t);
  const other = await ctx.addSite('Other');
  await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Elsewhere', isDraft: false }, key: other.key });
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push((await create(ctx, { title: `Post ${i}`, isDraft: i % 2 === 0 })).id);
  await ctx.call({ method: 'PUT', url: `/api/v1/posts/${ids[0]}` });
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${ids[1]}`, payload: { visibility: 'unlisted' } });
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${ids[2]}`, payload: { isDraft: false, visibility: 'unlisted' } });
  await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${ids[3]}` });
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${ids[4]}`, payload: { title: 'Only a new title' } });

  const scan = (where: string) => (ctx.sqlite.prepare(`select count(*) as n from posts where site_id = ? and (${where})`).get(ctx.site.id) as { n: number }).n;
  const expected: Record<string, number> = {
    '': scan("is_draft = 1 or visibility = 'public'"),
    draft: scan('is_draft = 1'),
    published: scan("is_draft = 0 and visibility = 'public'"),
    unlisted: scan("is_draft = 0 and visibility = 'unlisted'"),
    all: scan('1'),
  };
  t.same(expected, { '': 3, draft: 1, published: 2, unlisted: 2, all: 5 }, 'the scenario as counted from the rows');
  for (const [status, total] of Object.entries(expected)) {
    const res = await ctx.call({ method: 'GET', url: `/api/v1/posts${status ? `?status=${status}` : ''}` });
    t.equal(res.json().data.pagination.total, total, `status=${status || '(none)'}`);
  }
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts?status=all&q=post' })).json().data.pagination.total, 4, 'a filtered list counts its rows (one was retitled)');
});

t.test('posts created in one millisecond get distinct creation times, and a list page needs no sort', async (t) => {
  const ctx = await buildTestApp(t);
  const future = Date.now() + 60_000;
  const first = await create(ctx, { title: 'From the future' });
  ctx.sqlite.prepare('update posts set created_at = ? where id = ?').run(future, first.id);
  const burst = await Promise.all(Array.from({ length: 5 }, (_, i) => create(ctx, { title: `Burst ${i}`, isDraft: i % 2 === 0 })));
  const times = burst.map((post) => Date.parse(post.createdAt)).sort((a, b) => a - b);
  t.same(times, [future + 1, future + 2, future + 3, future + 4, future + 5], 'each a millisecond past the newest post');
  const listed = (await ctx.call({ method: 'GET', url: '/api/v1/posts?limit=10' })).json().data.posts.map((post: { createdAt: string }) => Date.parse(post.createdAt));
  t.same(listed, [...times].reverse().concat(future), 'newest first');

  const { listPageQuery } = await import('../../src/posts/sqlite.js');
  for (const status of [undefined, 'draft', 'published', 'unlisted', 'all'] as const) {
    const { sql, params } = listPageQuery(ctx.app.database.db, ctx.site.id, { page: 1, limit: 20, status }, 5000).toSQL();
    const plan = ctx.sqlite
      .prepare(`explain query plan ${sql}`)
      .all(...params)
      .map((row) => (row as { detail: string }).detail);
    t.ok(plan.some((line) => /SEARCH posts USING COVERING INDEX posts_site_list_idx \(site_id=\?\)/.test(line)), `status ${status}: the page is found in the list index`);
    t.equal(plan.filter((line) => line.includes('TEMP B-TREE')).length, 0, `status ${status}: nothing is sorted (the page's rows are read in the index's order)`);
  }
});
