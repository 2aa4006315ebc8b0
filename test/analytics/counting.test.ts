import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildTestApp, loggedApp, onPostgres, type TestApp } from '../helpers/app.js';

// A reader as a test makes one up: neither may reach the database or the log.
const ADDRESS = '203.0.113.77';
const READER = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0 Reader7f3a';
const OTHER_READER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const DAY = 86_400_000;
const START = Date.parse('2026-03-10T12:00:00.000Z');

interface Clock {
  now: number;
}

async function setUp(t: Parameters<typeof buildTestApp>[0], env: Record<string, string> = {}) {
  const clock: Clock = { now: START };
  const ctx = await buildTestApp(t, env, { analytics: { clock: () => clock.now } });
  const created = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Counted post', isDraft: false, tags: ['Coffee'], category: 'Notes' } });
  const post = created.json().data.post as { id: string; slug: string };
  return { ctx, clock, post, url: `/sites/my-blog/${post.slug}/` };
}

const read = (ctx: TestApp, url: string, headers: Record<string, string> = {}, remoteAddress = ADDRESS) =>
  ctx.app.inject({ method: 'GET', url, remoteAddress, headers: { 'user-agent': READER, ...headers } });

async function stats(ctx: TestApp, query = 'from=2026-03-01&to=2026-03-31') {
  const res = await ctx.call({ method: 'GET', url: `/api/v1/stats?${query}` });
  if (res.statusCode !== 200) throw new Error(`stats: ${res.statusCode} ${res.body}`);
  return res.json().data as {
    days: { day: string; views: number; visitors: number }[];
    totals: { views: number; visitors: number };
    topPosts: { postId: string; title: string | null; views: number; visitors: number }[];
    topPages: { path: string; views: number }[];
    topReferrers: { referrer: string; views: number }[];
  };
}

const dayOf = (data: Awaited<ReturnType<typeof stats>>, day: string) => data.days.find((d) => d.day === day)!;

t.test('views and visitors: one reader thrice, another agent, the next day, bots, prefetches, 304s and drafts', async (t) => {
  const { ctx, clock, post, url } = await setUp(t);
  const draft = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Secret draft', isDraft: true } })).json().data.post;

  for (let i = 0; i < 3; i++) t.equal((await read(ctx, url)).statusCode, 200);
  await ctx.app.analytics.flush();
  let data = await stats(ctx);
  t.same(dayOf(data, '2026-03-10'), { day: '2026-03-10', views: 3, visitors: 1 }, 'three views, one visitor');
  t.equal(data.days.length, 31, 'every day of the range');
  t.same(data.topPosts, [{ postId: post.id, title: 'Counted post', slug: post.slug, views: 3, visitors: 1 }]);

  await read(ctx, url, { 'user-agent': OTHER_READER });
  await ctx.app.analytics.flush();
  t.same(dayOf(await stats(ctx), '2026-03-10'), { day: '2026-03-10', views: 4, visitors: 2 }, 'another agent is another visitor');

  // Not readers: tools, crawlers, headless browsers, previews, monitors, prefetches; no agent at all.
  const bots = [
    'curl/8.5.0',
    'Wget/1.21.4',
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36',
    'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
    'UptimeRobot/2.0',
  ];
  for (const agent of bots) t.equal((await read(ctx, url, { 'user-agent': agent })).statusCode, 200, agent);
  await read(ctx, url, { 'sec-purpose': 'prefetch' });
  await read(ctx, url, { purpose: 'prefetch' });
  await ctx.app.inject({ method: 'GET', url, remoteAddress: ADDRESS });
  // Not pages: feeds, the sitemap, assets, the content API; HEAD; a draft's URL (404).
  for (const other of ['/sites/my-blog/rss.xml', '/sites/my-blog/atom.xml', '/sites/my-blog/feed.json', '/sites/my-blog/sitemap.xml', '/sites/my-blog/robots.txt', '/sites/my-blog/assets/style.css', '/content/v1/sites/my-blog/posts']) {
    t.equal((await read(ctx, other)).statusCode, 200, other);
  }
  t.equal((await ctx.app.inject({ method: 'HEAD', url, remoteAddress: ADDRESS, headers: { 'user-agent': READER } })).statusCode, 200);
  t.equal((await read(ctx, `/sites/my-blog/${draft.slug}/`)).statusCode, 404, "a draft's URL is a 404");
  t.equal((await read(ctx, '/sites/my-blog/no-such-post/')).statusCode, 404);
  await ctx.app.analytics.flush();
  t.same(dayOf(await stats(ctx), '2026-03-10'), { day: '2026-03-10', views: 4, visitors: 2 }, 'none of them counted');

  // A 304 is a view.
  const first = await read(ctx, url);
  const revalidated = await read(ctx, url, { 'if-none-match': first.headers.etag as string });
  t.equal(revalidated.statusCode, 304);
  await ctx.app.analytics.flush();
  t.same(dayOf(await stats(ctx), '2026-03-10'), { day: '2026-03-10', views: 6, visitors: 2 }, 'the 200 and the 304 counted, the same reader');

  // The next day the same reader is a new visitor of that day.
  clock.now = START + DAY;
  await read(ctx, url);
  await ctx.app.analytics.flush();
  data = await stats(ctx);
  t.same(dayOf(data, '2026-03-11'), { day: '2026-03-11', views: 1, visitors: 1 });
  t.same(data.totals, { views: 7, visitors: 3 });

  const perPost = await ctx.call({ method: 'GET', url: `/api/v1/posts/${post.id}/stats?from=2026-03-09&to=2026-03-11` });
  t.equal(perPost.statusCode, 200);
  t.same(perPost.json().data.days, [
    { day: '2026-03-09', views: 0, visitors: 0 },
    { day: '2026-03-10', views: 6, visitors: 2 },
    { day: '2026-03-11', views: 1, visitors: 1 },
  ]);
  const list = await ctx.call({ method: 'GET', url: `/api/v1/stats/posts?ids=${post.id},${draft.id}&from=2026-03-01&to=2026-03-31` });
  t.same(list.json().data.posts, [
    { postId: post.id, views: 7, visitors: 3 },
    { postId: draft.id, views: 0, visitors: 0 },
  ]);
});

t.test('the index, tag and category pages count views of the site by path; referrers are hosts', async (t) => {
  const { ctx, url } = await setUp(t);
  for (const page of ['/sites/my-blog/', '/sites/my-blog/tag/coffee/', '/sites/my-blog/category/notes/']) t.equal((await read(ctx, page)).statusCode, 200, page);
  await read(ctx, url, { referer: 'https://news.example.org/item?id=123&secret=x' });
  await read(ctx, url, { referer: 'http://localhost:3000/sites/my-blog/' });
  await read(ctx, url, { referer: 'https://localhost/sites/my-blog/tag/coffee/' });
  await read(ctx, `${url}?utm_source=Newsletter&utm_medium=email`);
  await read(ctx, url, { referer: 'not a url' });
  await ctx.app.analytics.flush();
  const data = await stats(ctx);
  t.same(dayOf(data, '2026-03-10'), { day: '2026-03-10', views: 8, visitors: 1 });
  t.same(
    data.topPages.map((p) => [p.path, p.views]),
    [
      ['/', 1],
      ['/category/notes/', 1],
      ['/tag/coffee/', 1],
    ],
  );
  t.same(
    data.topReferrers.map((r) => [r.referrer, r.views]),
    [
      ['', 6],
      ['news.example.org', 1],
      ['newsletter', 1],
    ],
    'hosts only, the own host is direct / internal, utm_source when present',
  );
  const stored = await ctx.rows<{ referrer: string }>('select referrer from analytics_referrers');
  t.notOk(stored.some((r) => r.referrer.includes('/') || r.referrer.includes('?')), 'no path or query is stored');
});

t.test('distinct referrers per site and day are capped (the rest count as other) and bounded in length', async (t) => {
  const clock: Clock = { now: START };
  const ctx = await buildTestApp(t, {}, { analytics: { clock: () => clock.now, maxReferrersPerDay: 3 } });
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Counted post', isDraft: false } })).json().data.post as { slug: string };
  const url = `/sites/my-blog/${post.slug}/`;
  const from = (host: string) => read(ctx, url, { referer: `https://${host}/page` });
  await from('a.example');
  await from('b.example');
  await read(ctx, url);
  await ctx.app.analytics.flush();
  // One more fits (the busiest new one first), then the day is full.
  await from('c.example');
  await from('c.example');
  await from('d.example');
  await read(ctx, `${url}?utm_source=${'x'.repeat(300)}`);
  await ctx.app.analytics.flush();
  await from('a.example');
  await from('e.example');
  await ctx.app.analytics.flush();

  const rows = async (day: string) =>
    (await ctx.rows<{ referrer: string; views: number }>(`select referrer, views from analytics_referrers where day = '${day}' order by referrer`)).map((r) => [r.referrer, Number(r.views)]);
  t.same(
    await rows('2026-03-10'),
    [
      ['', 1],
      ['(other)', 3],
      ['a.example', 2],
      ['b.example', 1],
      ['c.example', 2],
    ],
    'three referrers kept, known ones keep counting, direct and other beside them',
  );
  t.equal(dayOf(await stats(ctx), '2026-03-10').views, 9, 'every view counted all the same');

  clock.now += DAY;
  const long = `${'sub.'.repeat(60)}example.com`;
  await from(long);
  await read(ctx, `${url}?utm_source=${'y'.repeat(300)}`);
  await ctx.app.analytics.flush();
  const next = await rows('2026-03-11');
  t.same(next.map(([referrer]) => String(referrer).length), [100, 100], 'a new day has room again; hosts and sources cut to 100 characters');
});

t.test('no cookie on any public response', async (t) => {
  const { ctx, url } = await setUp(t);
  for (const page of [url, '/sites/my-blog/', '/sites/my-blog/tag/coffee/', '/sites/my-blog/rss.xml', '/sites/my-blog/nope/', '/content/v1/sites/my-blog/posts']) {
    const res = await read(ctx, page);
    t.equal(res.headers['set-cookie'], undefined, page);
    // JSON-LD is data; the forms' spam guard (comments, newsletter sign-up) is the service's own module, with no cookie and no tracking.
    t.notMatch(res.body, /<script(?![^>]*(?:application\/ld\+json|src="\/spam-guard\/))/i, `${page}: no tracking script`);
  }
});

t.test('the time zone decides the day; bad ranges are 400; another site is not found', async (t) => {
  const { ctx, clock, post, url } = await setUp(t);
  t.equal((await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { timeZone: 'Mars/Olympus' } })).statusCode, 400);
  const patched = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { timeZone: 'pacific/auckland' } });
  t.equal(patched.statusCode, 200);
  t.equal(patched.json().data.site.timeZone, 'Pacific/Auckland', 'stored as Intl spells it');
  // 2026-03-10T12:00Z is already the 11th in Auckland (UTC+13).
  clock.now = Date.parse('2026-03-10T12:00:00.000Z');
  await read(ctx, url);
  await ctx.app.analytics.flush();
  t.same(dayOf(await stats(ctx), '2026-03-11'), { day: '2026-03-11', views: 1, visitors: 1 });

  for (const query of ['from=2026-02-30&to=2026-03-01', 'from=2026-03-05&to=2026-03-01', 'from=2025-01-01&to=2026-03-01', 'from=yesterday', 'to=2026-3-1']) {
    const res = await ctx.call({ method: 'GET', url: `/api/v1/stats?${query}` });
    t.equal(res.statusCode, 400, query);
    t.equal(res.json().error.code, 'VALIDATION_ERROR');
  }
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/stats?from=2025-03-11&to=2026-03-11' })).statusCode, 200, '366 days');
  const defaults = await ctx.call({ method: 'GET', url: '/api/v1/stats' });
  t.equal(defaults.json().data.days.length, 30);
  t.equal(defaults.json().data.to, '2026-03-11', "today in the site's time zone");

  const other = await ctx.addSite('Other');
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${post.id}/stats`, key: other.key })).statusCode, 404);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/stats', key: null })).statusCode, 401);
});

t.test('a database that fails loses only the buffer: the page is served, the flush logs', async (t) => {
  const { ctx, url } = await setUp(t);
  const { store } = ctx.app.analytics;
  const record = store.record;
  store.record = async () => {
    throw new Error('database is down');
  };
  t.equal((await read(ctx, url)).statusCode, 200);
  t.equal(await ctx.app.analytics.flush(), 0, 'nothing written, nothing thrown');
  store.record = record;
  await read(ctx, url);
  t.equal(await ctx.app.analytics.flush(), 1, 'the next batch is written');
});

t.test("a site's stats go with it; finished days' visitor hashes go after their day; old days are pruned", async (t) => {
  const { ctx, clock } = await setUp(t, { STATS_RETENTION_DAYS: '30' });
  const other = await ctx.addSite('Other Blog');
  const otherPost = (await ctx.call({ method: 'POST', url: '/api/v1/posts', key: other.key, payload: { title: 'Elsewhere', isDraft: false } })).json().data.post;
  const handle = (await ctx.call({ method: 'GET', url: '/api/v1/site', key: other.key })).json().data.site.handle;
  await read(ctx, `/sites/${handle}/${otherPost.slug}/`);
  await read(ctx, '/sites/my-blog/');
  await ctx.app.analytics.flush();
  t.ok((await ctx.count('select count(*) as n from analytics_visitors where site_id = ?', other.site.id)) > 0);
  await ctx.rows('delete from sites where id = ? returning id', other.site.id);
  for (const table of ['analytics_days', 'analytics_pages', 'analytics_referrers', 'analytics_visitors']) {
    t.equal(await ctx.count(`select count(*) as n from ${table} where site_id = ?`, other.site.id), 0, `${table}: gone with the site`);
  }

  // The day is still on somewhere (UTC-12 is in it until the next day's noon UTC): the hashes stay.
  clock.now = Date.parse('2026-03-11T11:00:00.000Z');
  await ctx.app.analytics.sweep();
  t.ok((await ctx.count('select count(*) as n from analytics_visitors')) > 0, 'kept while the day lasts anywhere');
  t.equal(await ctx.count('select count(*) as n from analytics_salts'), 1);
  clock.now = Date.parse('2026-03-11T12:00:00.000Z');
  await ctx.app.analytics.sweep();
  t.equal(await ctx.count('select count(*) as n from analytics_visitors'), 0, 'hashes deleted once the day is over everywhere');
  t.equal(await ctx.count('select count(*) as n from analytics_salts'), 0, 'and the salt');
  t.equal(dayOf(await stats(ctx), '2026-03-10').visitors, 1, 'the counts stay');

  clock.now = START + 31 * DAY;
  await ctx.app.analytics.sweep();
  t.equal(await ctx.count('select count(*) as n from analytics_days'), 0, 'days past STATS_RETENTION_DAYS pruned');
  t.equal(await ctx.count('select count(*) as n from analytics_pages'), 0);
});

t.test('TRUST_PROXY decides whether X-Forwarded-For names the reader', async (t) => {
  for (const [trust, visitors] of [['false', 1], ['true', 2]] as const) {
    const { ctx, url } = await setUp(t, { TRUST_PROXY: trust });
    for (const forwarded of ['198.51.100.1', '198.51.100.2']) await read(ctx, url, { 'x-forwarded-for': forwarded });
    await ctx.app.analytics.flush();
    t.same(dayOf(await stats(ctx), '2026-03-10'), { day: '2026-03-10', views: 2, visitors }, `TRUST_PROXY=${trust}`);
  }
});

t.test('ANALYTICS=off counts nothing', async (t) => {
  const { ctx, url } = await setUp(t, { ANALYTICS: 'off' });
  await read(ctx, url);
  t.equal(await ctx.app.analytics.flush(), 0);
  t.same((await stats(ctx)).totals, { views: 0, visitors: 0 });
});

t.test('neither the database file nor the log holds the address or the user agent; closing writes what is counted', { skip: onPostgres && 'looks into the SQLite file' }, async (t) => {
  const { app, dataDir, text } = await loggedApp(t);
  const key = 'blog_test-bootstrap-key-0123456789abcdef';
  const post = (await app.inject({ method: 'POST', url: '/api/v1/posts', headers: { authorization: `Bearer ${key}` }, payload: { title: 'Private reader', isDraft: false } })).json().data.post;
  for (let i = 0; i < 3; i++) {
    const res = await app.inject({ method: 'GET', url: `/sites/my-blog/${post.slug}/`, remoteAddress: ADDRESS, headers: { 'user-agent': READER } });
    t.equal(res.statusCode, 200);
  }
  // Not flushed yet: the close writes it.
  await app.close();
  const log = text();
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(path.join(dataDir, 'blog.db'), { readonly: true });
  t.same(db.prepare('select views, visitors from analytics_days').all(), [{ views: 3, visitors: 1 }], 'written on close');
  db.close();
  for (const file of fs.readdirSync(dataDir).filter((name) => name.startsWith('blog.db'))) {
    const bytes = fs.readFileSync(path.join(dataDir, file));
    t.notOk(bytes.includes(ADDRESS), `${file}: no address`);
    t.notOk(bytes.includes('Reader7f3a'), `${file}: no user agent`);
  }
  t.ok(log.includes('incoming request'), 'requests are logged');
  t.notOk(log.includes(ADDRESS), 'the log has no address');
  t.notOk(log.includes('Reader7f3a'), 'the log has no user agent');
});
