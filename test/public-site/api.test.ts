import { XMLParser } from 'fast-xml-parser';
import { parseAtomFeed, parseJsonFeed, parseRssFeed } from 'feedsmith';
import { HtmlValidate } from 'html-validate';
import t, { type Test } from 'tap';
import { runAdmin } from '../../src/admin/cli.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const validator = new HtmlValidate({ extends: ['html-validate:recommended'] });

async function valid(t: Test, html: string, what: string) {
  const report = await validator.validateString(html);
  t.ok(report.valid, `${what} is valid HTML${report.valid ? '' : `: ${report.results.flatMap((r) => r.messages.map((m) => `${m.ruleId} ${m.message}`)).join('; ')}`}`);
}

async function post(ctx: TestApp, body: Record<string, unknown>, key?: string) {
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { isDraft: false, ...body }, key });
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.body}`);
  return res.json().data.post as { id: string; slug: string };
}

// A real event attribute: inside a tag, after other attributes with quoted values (escaped
// text such as `&lt;img onerror=` or an attribute value holding it is inert).
const EVENT_ATTRIBUTE = /<[a-z][a-z0-9]*(?:\s+[a-z:-]+(?:="[^"]*")?)*\s+on\w+\s*=/i;
const SERVICE_SCRIPTS = ['<script type="module" src="/spam-guard/spam-guard.js">', '<script type="module" src="/spam-guard/comments.js">'];
const SCRIPT_URL = /(?:href|src|action)\s*=\s*["']?\s*javascript:/i;

const get = (ctx: TestApp, url: string, headers: Record<string, string> = {}) => ctx.call({ method: 'GET', url, key: null, headers });

async function handleOf(ctx: TestApp, key?: string): Promise<string> {
  return (await ctx.call({ method: 'GET', url: '/api/v1/site', key })).json().data.site.handle;
}

/** A site with published, unlisted and draft posts, and a second site with its own post. */
async function setup(t: Test) {
  const ctx = await buildTestApp(t);
  const other = await ctx.addSite('Other Site');
  const published = await post(ctx, { title: 'Brewing with a V60', content: '# Ratio\n\nUse 1:16.', description: 'Pour-over basics.', tags: ['Coffee Gear'], category: 'How To' });
  const unlisted = await post(ctx, { title: 'Secret roast', content: 'Hidden.' });
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${unlisted.id}`, payload: { visibility: 'unlisted' } });
  const draft = await post(ctx, { title: 'Unfinished draft', isDraft: true });
  const foreign = await post(ctx, { title: 'Other site post' }, other.key);
  return { ctx, base: `/sites/${await handleOf(ctx)}`, otherBase: `/sites/${await handleOf(ctx, other.key)}`, published, unlisted, draft, foreign };
}

t.test('pages show published public posts only, each site its own', async (t) => {
  const { ctx, base, otherBase, published, unlisted, draft, foreign } = await setup(t);
  const index = await get(ctx, `${base}/`);
  t.equal(index.statusCode, 200);
  t.match(index.headers['content-type'], /^text\/html/);
  await valid(t, index.body, 'index');
  t.match(index.body, /Brewing with a V60/);
  t.notMatch(index.body, /Secret roast|Unfinished draft|Other site post/, 'no unlisted, draft or foreign post');
  t.match(index.body, /<html lang="en">/);
  t.match(index.body, /<link rel="alternate" type="application\/rss\+xml"/);

  const page = await get(ctx, `${base}/${published.slug}/`);
  t.equal(page.statusCode, 200);
  await valid(t, page.body, 'post page');
  t.match(page.body, /<h1[^>]*>Brewing with a V60<\/h1>/);
  t.match(page.body, /<h2 id="ratio">Ratio<\/h2>/, 'Markdown headings shift below the title and get ids');
  t.match(page.body, /"@type":"BlogPosting"/);
  t.match(page.body, /<link rel="canonical" href="http:\/\/localhost:3000\/sites\/my-blog\/brewing-with-a-v60\/">/);
  t.match(page.body, /<meta property="og:type" content="article">/);
  t.notMatch(page.body, /noindex/);

  const hidden = await get(ctx, `${base}/${unlisted.slug}/`);
  t.equal(hidden.statusCode, 200, 'unlisted opens by its URL');
  t.match(hidden.body, /<meta name="robots" content="noindex">/);
  t.equal((await get(ctx, `${base}/${draft.slug}/`)).statusCode, 404, 'a draft is nowhere');
  const missing = await get(ctx, `${base}/${foreign.slug}/`);
  t.equal(missing.statusCode, 404, "another site's post is not under this site");
  t.match(missing.headers['content-type'], /^text\/html/);
  await valid(t, missing.body, '404 page');
  t.equal((await get(ctx, `${otherBase}/${foreign.slug}/`)).statusCode, 200);
  t.notMatch((await get(ctx, `${otherBase}/`)).body, /Brewing with a V60/);

  const tag = await get(ctx, `${base}/tag/coffee-gear/`);
  t.equal(tag.statusCode, 200);
  t.match(tag.body, /Coffee Gear/);
  t.match(tag.body, /Brewing with a V60/);
  await valid(t, tag.body, 'tag page');
  t.equal((await get(ctx, `${base}/category/how-to/`)).statusCode, 200);
  t.equal((await get(ctx, `${base}/tag/nothing-here/`)).statusCode, 404);
  await post(ctx, { title: 'Without a category', isDraft: false });
  t.equal((await get(ctx, `${base}/category/null/`)).statusCode, 404, 'posts without a category are in no category page');
  t.equal((await get(ctx, `/sites/no-such-site/`)).statusCode, 404);
});

t.test('addresses: trailing slashes, page numbers, redirects', async (t) => {
  const { ctx, base, published } = await setup(t);
  const bare = await get(ctx, `/sites/${await handleOf(ctx)}`);
  t.equal(bare.statusCode, 301);
  t.equal(bare.headers.location, `${base}/`);
  const noSlash = await get(ctx, `${base}/${published.slug}`);
  t.equal(noSlash.statusCode, 301);
  t.equal(noSlash.headers.location, `${base}/${published.slug}/`);
  const first = await get(ctx, `${base}/page/1/`);
  t.equal(first.statusCode, 301);
  t.equal(first.headers.location, `${base}/`);
  t.equal((await get(ctx, `${base}/page/2/`)).statusCode, 404, 'past the last page');
  for (let i = 0; i < 10; i++) await post(ctx, { title: `Filler ${i}` });
  const second = await get(ctx, `${base}/page/2/`);
  t.equal(second.statusCode, 200, 'ten per page by default: the oldest post moves to page 2');
  t.match(second.body, /Brewing with a V60/);
  t.equal((await get(ctx, '/api/v1/nothing')).json().error.code, 'NOT_FOUND', 'the API keeps its JSON 404');
});

t.test('feeds, sitemap and robots.txt list published public posts with absolute links', async (t) => {
  const { ctx, base, published } = await setup(t);
  const rss = await get(ctx, `${base}/rss.xml`);
  t.match(rss.headers['content-type'], /^application\/rss\+xml/);
  const rssFeed = parseRssFeed(rss.body);
  t.same(rssFeed.items?.map((item) => item.title), ['Brewing with a V60']);
  t.equal(rssFeed.items?.[0].link, `http://localhost:3000${base}/${published.slug}/`);
  t.equal(rssFeed.items?.[0].guid?.value, `urn:uuid:${published.id}`);
  t.match(rssFeed.items?.[0].content?.encoded, /<h2 id="ratio">/, 'full HTML content');

  const atom = parseAtomFeed((await get(ctx, `${base}/atom.xml`)).body);
  t.same(atom.entries?.map((entry) => entry.id), [`urn:uuid:${published.id}`]);
  const json = parseJsonFeed((await get(ctx, `${base}/feed.json`)).body);
  t.same(json.items?.map((item) => item.id), [published.id]);
  t.equal(json.items?.[0].url, `http://localhost:3000${base}/${published.slug}/`);

  const sitemap = new XMLParser().parse((await get(ctx, `${base}/sitemap.xml`)).body);
  const urls = [sitemap.urlset.url].flat().map((u: { loc: string; lastmod?: string }) => u.loc);
  t.same(urls.sort(), [`http://localhost:3000${base}/`, `http://localhost:3000${base}/${published.slug}/`].sort());
  t.ok([sitemap.urlset.url].flat().every((u: { lastmod?: string }) => u.lastmod), 'every URL has a lastmod');
  t.match((await get(ctx, `${base}/robots.txt`)).body, new RegExp(`Sitemap: http://localhost:3000${base}/sitemap.xml`));
});

t.test('an unpublish, edit or delete shows on every page and feed at once', async (t) => {
  const { ctx, base, published } = await setup(t);
  const urls = [`${base}/`, `${base}/rss.xml`, `${base}/atom.xml`, `${base}/feed.json`, `${base}/sitemap.xml`, `${base}/tag/coffee-gear/`];
  for (const url of urls) t.match((await get(ctx, url)).body, /brewing-with-a-v60|Brewing with a V60/, `${url} lists it (cached now)`);
  await ctx.call({ method: 'PUT', url: `/api/v1/posts/${published.id}` });
  for (const url of urls) t.notMatch((await get(ctx, url)).body, /brewing-with-a-v60|Brewing with a V60/, `${url} after unpublish`);
  t.equal((await get(ctx, `${base}/${published.slug}/`)).statusCode, 404);
  await ctx.call({ method: 'PUT', url: `/api/v1/posts/${published.id}` });
  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${published.id}`, payload: { content: 'Now about **grind size**.' } });
  t.match((await get(ctx, `${base}/${published.slug}/`)).body, /<strong>grind size<\/strong>/, 'an edit is rendered at once');
  await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${published.id}` });
  for (const url of urls) t.notMatch((await get(ctx, url)).body, /brewing-with-a-v60|Brewing with a V60/, `${url} after delete`);
});

t.test('slugs of published posts stay put; old slugs redirect; reserved words are never slugs', async (t) => {
  const { ctx, base, published } = await setup(t);
  const retitled = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${published.id}`, payload: { title: 'A new title' } });
  t.equal(retitled.json().data.post.slug, published.slug, 'a published post keeps its slug');
  const draft = await post(ctx, { title: 'Draft title', isDraft: true });
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${draft.id}`, payload: { title: 'Better draft title' } })).json().data.post.slug, 'better-draft-title');

  const moved = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${published.id}`, payload: { slug: 'v60-guide' } });
  t.equal(moved.json().data.post.slug, 'v60-guide');
  const old = await get(ctx, `${base}/${published.slug}/`);
  t.equal(old.statusCode, 301);
  t.equal(old.headers.location, `${base}/v60-guide/`);
  t.equal((await get(ctx, `${base}/v60-guide/`)).statusCode, 200);
  const back = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${published.id}`, payload: { slug: published.slug } });
  t.equal(back.statusCode, 200, 'the old slug can be taken back');
  t.equal((await get(ctx, `${base}/${published.slug}/`)).statusCode, 200);
  t.equal((await get(ctx, `${base}/v60-guide/`)).headers.location, `${base}/${published.slug}/`);

  const other = await post(ctx, { title: 'Another post' });
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${other.id}`, payload: { slug: published.slug } })).statusCode, 409, 'a slug in use is a conflict');
  for (const slug of ['Not A Slug', 'tag', '-x', 'a'.repeat(81)]) {
    t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${other.id}`, payload: { slug } })).statusCode, 400, `slug ${slug.slice(0, 10)} refused`);
  }
  t.equal((await post(ctx, { title: 'Tag' })).slug, 'tag-2', 'a reserved word gets a suffix');
  t.equal((await post(ctx, { title: 'API' })).slug, 'api-2');
});

t.test('caching: ETag, Last-Modified, 304 and Cache-Control on every public response', async (t) => {
  const { ctx, base, published } = await setup(t);
  for (const url of [`${base}/`, `${base}/${published.slug}/`, `${base}/rss.xml`, `${base}/sitemap.xml`, `${base}/robots.txt`, `${base}/assets/style.css`, `${base}/assets/favicon.svg`, `/favicon.ico`, `/content/v1/sites/${base.split('/')[2]}/posts`]) {
    const first = await get(ctx, url);
    t.equal(first.headers['cache-control'], 'public, max-age=60', url);
    t.ok(first.headers.etag, `${url} ETag`);
    t.ok(first.headers['last-modified'], `${url} Last-Modified`);
    const again = await get(ctx, url, { 'if-none-match': String(first.headers.etag) });
    t.equal(again.statusCode, 304, `${url} If-None-Match`);
    t.equal(again.body, '');
    t.equal((await get(ctx, url, { 'if-modified-since': String(first.headers['last-modified']) })).statusCode, 304, `${url} If-Modified-Since`);
  }
  const before = await get(ctx, `${base}/`);
  await post(ctx, { title: 'Fresh post' });
  const after = await get(ctx, `${base}/`, { 'if-none-match': String(before.headers.etag) });
  t.equal(after.statusCode, 200, 'a write makes the old ETag stale');
  t.match(after.body, /Fresh post/);
});

t.test('hostile content renders inert on every page and feed', async (t) => {
  const ctx = await buildTestApp(t);
  const base = `/sites/${await handleOf(ctx)}`;
  const hostile = await post(ctx, {
    title: 'Tom &amp; Jerry <script>alert(1)</script>',
    description: '<img src=x onerror=alert(1)>',
    content: '<script>alert(1)</script>\n\n[click](javascript:alert(1))\n\n<a href="javascript:alert(2)" onclick="x()">raw</a>\n\n<img src=x onerror=alert(3)>',
    tags: ['<b>bold</b>', '&amp;'],
    category: '<i>cat</i>',
  });
  for (const url of [`${base}/`, `${base}/${hostile.slug}/`, `${base}/tag/b-bold-b/`, `${base}/category/i-cat-i/`]) {
    const res = await get(ctx, url);
    t.equal(res.statusCode, 200, url);
    await valid(t, res.body, url);
    const scripts = res.body.match(/<script\b[^>]*>/g) ?? [];
    // Only data and the service's own same-origin comment-form modules, nothing from the content.
    t.ok(scripts.every((tag) => tag === '<script type="application/ld+json">' || SERVICE_SCRIPTS.includes(tag)), `${url}: no executable script`);
    t.notMatch(res.body, SCRIPT_URL, `${url}: no javascript: URL`);
    t.notMatch(res.body, EVENT_ATTRIBUTE, `${url}: no event attribute`);
  }
  for (const url of [`${base}/rss.xml`, `${base}/atom.xml`]) {
    const xml = (await get(ctx, url)).body;
    t.notMatch(xml, /<script/i, `${url}: no raw script`);
    t.notMatch(xml, /href="javascript:/i, url);
  }
  const feed = JSON.parse((await get(ctx, `${base}/feed.json`)).body);
  for (const pattern of [/<script/i, SCRIPT_URL, EVENT_ATTRIBUTE]) t.notMatch(feed.items[0].content_html, pattern);
  t.equal(feed.items[0].title, 'Tom &amp; Jerry <script>alert(1)</script>', 'the title is text, kept exactly');
});

t.test('content API: published posts as JSON with CORS, unlisted by slug, envelope errors', async (t) => {
  const { ctx, base, published, unlisted, draft } = await setup(t);
  const handle = base.split('/')[2];
  const list = await get(ctx, `/content/v1/sites/${handle}/posts`, { origin: 'https://front.example' });
  t.equal(list.statusCode, 200);
  t.equal(list.headers['access-control-allow-origin'], '*');
  const body = list.json();
  t.same(body.data.pagination, { page: 1, limit: 20, total: 1, pages: 1 });
  const [item] = body.data.posts;
  t.equal(item.id, published.id);
  t.equal(item.url, `http://localhost:3000${base}/${published.slug}/`);
  t.match(item.html, /<h2 id="ratio">/);
  t.equal(item.readingTime, 1);
  t.same(Object.keys(body.data.site).sort(), ['description', 'handle', 'language', 'name', 'url']);
  t.equal((await get(ctx, `/content/v1/sites/${handle}/posts?tag=coffee%20gear`)).json().data.pagination.total, 1);
  t.equal((await get(ctx, `/content/v1/sites/${handle}/posts?category=Nope`)).json().data.pagination.total, 0);

  const one = await get(ctx, `/content/v1/sites/${handle}/posts/${unlisted.slug}`);
  t.equal(one.statusCode, 200, 'unlisted by slug');
  t.equal(one.json().data.post.visibility, 'unlisted');
  const hidden = await get(ctx, `/content/v1/sites/${handle}/posts/${draft.slug}`);
  t.equal(hidden.statusCode, 404);
  t.equal(hidden.json().error.code, 'NOT_FOUND');
  t.equal(hidden.headers['access-control-allow-origin'], '*');
  t.equal((await get(ctx, `/content/v1/sites/nobody/posts`)).statusCode, 404);
  const preflight = await ctx.call({ method: 'OPTIONS', url: `/content/v1/sites/${handle}/posts`, key: null, headers: { origin: 'https://front.example', 'access-control-request-method': 'GET' } });
  t.equal(preflight.statusCode, 204);
  t.equal(preflight.headers['access-control-allow-origin'], '*');
});

t.test('site settings: GET and PATCH /api/v1/site, a custom domain, the admin CLI', async (t) => {
  const ctx = await buildTestApp(t);
  const other = await ctx.addSite('Second blog');
  const site = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site;
  t.same(site, { id: ctx.site.id, name: 'My Blog', description: null, handle: 'my-blog', url: null, language: 'en', postsPerPage: 10, timeZone: 'UTC', newsletter: { enabled: false, senderName: null, replyTo: null, footer: null }, publicUrl: 'http://localhost:3000/sites/my-blog', domain: null, comments: 'moderated', blockedWords: [] });
  t.equal(await handleOf(ctx, other.key), 'second-blog', 'a handle from the name');

  const patched = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { url: 'https://Blog.Example.com/', language: 'en-GB', description: 'Notes', postsPerPage: 5 } });
  t.equal(patched.statusCode, 200);
  t.match(patched.json().data.site, { url: 'https://blog.example.com', language: 'en-GB', publicUrl: 'http://localhost:3000/sites/my-blog', postsPerPage: 5, domain: { status: 'pending' } });
  // A new domain serves the site once proven (here on the operator's word; see test/sites/domains.test.ts).
  await runAdmin(['site', 'verify-domain', ctx.site.id], ctx.config, () => {});
  const published = await post(ctx, { title: 'On my own domain' });
  const home = await get(ctx, '/', { host: 'blog.example.com' });
  t.equal(home.statusCode, 200, 'served at / on its own host');
  t.match(home.body, /<html lang="en-GB">/);
  t.match(home.body, /href="\/on-my-own-domain\/"/, 'links at the root');
  t.match(home.body, /<link rel="canonical" href="https:\/\/blog.example.com\/">/);
  t.equal((await get(ctx, `/${published.slug}/`, { host: 'blog.example.com' })).statusCode, 200);
  t.equal((await get(ctx, '/', { host: 'elsewhere.example.com' })).statusCode, 404);
  t.match((await get(ctx, `/sites/my-blog/${published.slug}/`)).body, /href="https:\/\/blog.example.com\/on-my-own-domain\/"/, 'canonical on the own domain from /sites/ too');

  for (const payload of [{ handle: 'Bad Handle' }, { handle: 'api' }, { url: 'ftp://x.example' }, { url: 'https://x.example/path' }, { language: 'english!' }, { postsPerPage: 0 }, {}]) {
    const res = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload });
    t.equal(res.statusCode, 400, JSON.stringify(payload));
    t.equal(res.json().error.code, 'VALIDATION_ERROR');
  }
  t.equal((await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { handle: 'second-blog' } })).statusCode, 409, 'a taken handle');
  t.equal((await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { url: 'https://blog.example.com' }, key: other.key })).statusCode, 409, 'a taken domain');
  t.equal((await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { handle: 'renamed' } })).statusCode, 200);
  t.equal((await get(ctx, '/sites/renamed/')).statusCode, 200);
  t.equal((await get(ctx, '/sites/my-blog/')).statusCode, 404);

  const lines: string[] = [];
  await runAdmin(['site', 'update', other.site.id, '--handle', 'from-cli', '--name', 'CLI name'], ctx.config, (line) => lines.push(line));
  t.match(lines.join('\n'), /from-cli/);
  t.equal(await handleOf(ctx, other.key), 'from-cli');
  await t.rejects(runAdmin(['site', 'update', other.site.id, '--handle', 'renamed'], ctx.config), { code: 'CONFLICT' });
  await t.rejects(runAdmin(['site', 'update', 'no-such-site', '--name', 'x'], ctx.config), { code: 'NOT_FOUND' });
});
