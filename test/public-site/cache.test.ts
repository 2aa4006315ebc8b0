import t from 'tap';
import { SiteAnswerCache } from '../../src/public-site/pages.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const get = (ctx: TestApp, url: string, headers: Record<string, string> = {}) => ctx.call({ method: 'GET', url, key: null, headers });

async function publish(ctx: TestApp, title: string, key?: string) {
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title, isDraft: false, tags: ['Coffee'] }, key });
  return res.json().data.post as { slug: string };
}

t.test("a stranger's random paths and query strings neither fill the cache nor evict another site's pages", async (t) => {
  const ctx = await buildTestApp(t);
  const other = await ctx.addSite('Other Site');
  const post = await publish(ctx, 'Kept page');
  await publish(ctx, 'Other post', other.key);
  const handle = 'my-blog';
  const otherHandle = (await ctx.call({ method: 'GET', url: '/api/v1/site', key: other.key })).json().data.site.handle;
  const { publicPages } = ctx.app;

  for (const url of [`/sites/${handle}/`, `/sites/${handle}/${post.slug}/`, `/sites/${handle}/tag/coffee/`, `/content/v1/sites/${handle}/posts`]) {
    t.equal((await get(ctx, url)).statusCode, 200, url);
  }
  const kept = publicPages.keptFor(ctx.site.id);
  t.ok(kept >= 4, `the site's pages are kept (${kept})`);

  // Unknown paths, trailing-slash redirects, unknown tags, empty pages, any query string: answered, not kept.
  for (let i = 0; i < 150; i++) {
    await get(ctx, `/sites/${otherHandle}/no-such-post-${i}/`);
    await get(ctx, `/sites/${otherHandle}/no-slash-${i}`);
    await get(ctx, `/sites/${otherHandle}/tag/t-${i}/page/1/`);
    await get(ctx, `/content/v1/sites/${otherHandle}/posts?tag=t${i}`);
    await get(ctx, `/content/v1/sites/${otherHandle}/posts?page=${i + 2}`);
    await get(ctx, `/content/v1/sites/${otherHandle}/posts?utm=${i}`);
    await get(ctx, `/sites/${otherHandle}/?q=${i}`);
  }
  t.ok(publicPages.keptFor(other.site.id) <= 2, `the other site keeps only its real answers (${publicPages.keptFor(other.site.id)})`);
  t.equal(publicPages.keptFor(ctx.site.id), kept, "this site's pages were not evicted");

  // The content API is keyed by the parameters it reads: order, spelling and extras do not matter.
  const before = publicPages.keptFor(ctx.site.id);
  for (const query of ['', '?page=1', '?limit=20&page=1', '?page=1&limit=20&x=y', '?page=01']) {
    t.equal((await get(ctx, `/content/v1/sites/${handle}/posts${query}`)).statusCode, 200);
  }
  t.equal(publicPages.keptFor(ctx.site.id), before, 'one entry for the one answer');
});

t.test('the cache is bounded per site: a site churning its own pages evicts its own first', async (t) => {
  const cache = new SiteAnswerCache<string>(10, 4);
  for (let i = 0; i < 4; i++) cache.set('quiet', 1, `q${i}`, 'x');
  for (let i = 0; i < 100; i++) cache.set('busy', 1, `b${i}`, 'x');
  t.equal(cache.sizeOf('busy'), 4, 'the busy site keeps its bound');
  t.equal(cache.sizeOf('quiet'), 4, 'the quiet site lost nothing');
  t.equal(cache.get('busy', 1, 'b0'), undefined, 'the busy site lost its oldest');
  t.equal(cache.get('busy', 1, 'b99'), 'x');
  for (let i = 0; i < 5; i++) cache.set(`s${i}`, 1, 'k', 'x');
  t.ok(cache.size <= 10, `bounded in all (${cache.size})`);
  // A new content version drops the site's older answers; a late answer of an older one is not kept.
  cache.set('busy', 2, 'b-new', 'y');
  t.equal(cache.sizeOf('busy'), 1);
  cache.set('busy', 1, 'late', 'z');
  t.equal(cache.get('busy', 1, 'late'), undefined);
  t.equal(cache.get('busy', 2, 'b-new'), 'y');
});
