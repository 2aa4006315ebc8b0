import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { PUBLIC_FILE_CSP, ownOrigins, previewCsp, publicPageCsp } from '../../plugins/public-site.js';
import { DOCS_CSP } from '../../plugins/openapi.js';
import { ADMIN_CSP } from '../../plugins/admin-ui.js';
import { buildTestApp, fixturesDir, type TestApp } from '../helpers/app.js';
import { noChromium, openBrowser } from '../helpers/browser.js';
import { multipart } from '../helpers/multipart.js';

async function publishedPost(ctx: TestApp) {
  const form = multipart([{ name: 'file', filename: 'photo.webp', content: fs.readFileSync(path.join(fixturesDir, 'images', 'photo.webp')) }]);
  const media = (await ctx.call({ method: 'POST', url: '/api/v1/media', payload: form.payload, headers: form.headers })).json().data.media as { id: string; url: string };
  const created = await ctx.call({
    method: 'POST',
    url: '/api/v1/posts',
    payload: { title: 'Herons', content: `Grey in the reeds.\n\n![A heron](${media.url})\n\n![Elsewhere](https://images.example.net/heron.jpg)\n`, isDraft: false, featureImage: media.id, featureImageAlt: 'A heron' },
  });
  return { post: created.json().data.post as { id: string; slug: string }, media };
}

t.test('public pages, feeds, files and /docs: nosniff, a Referrer-Policy and a policy that fits each', async (t) => {
  const ctx = await buildTestApp(t);
  const { post, media } = await publishedPost(ctx);
  const handle = 'my-blog';
  const own = ownOrigins(ctx.config.publicBaseUrl, null);
  t.same(own, ['http://localhost:3000'], 'the service names itself at PUBLIC_BASE_URL (http in tests)');
  const PUBLIC_PAGE_CSP = publicPageCsp(own);
  const get = (url: string) => ctx.app.inject({ method: 'GET', url });
  const expect = async (url: string, csp: string | RegExp, status = 200) => {
    const res = await get(url);
    t.equal(res.statusCode, status, url);
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${url}: nosniff`);
    t.match(res.headers['referrer-policy'], /^(strict-origin-when-cross-origin|no-referrer|same-origin)$/, `${url}: Referrer-Policy`);
    if (typeof csp === 'string') t.equal(res.headers['content-security-policy'], csp, `${url}: CSP`);
    else t.match(res.headers['content-security-policy'], csp, `${url}: CSP`);
    return res;
  };
  for (const url of [`/sites/${handle}/`, `/sites/${handle}/${post.slug}/`, `/sites/${handle}/tag/none/`]) {
    const res = await expect(url, PUBLIC_PAGE_CSP, url.endsWith('none/') ? 404 : 200);
    t.equal(res.headers['referrer-policy'], 'strict-origin-when-cross-origin');
  }
  for (const url of [`/sites/${handle}/rss.xml`, `/sites/${handle}/atom.xml`, `/sites/${handle}/feed.json`, `/sites/${handle}/sitemap.xml`, `/sites/${handle}/robots.txt`, media.url]) {
    await expect(url, PUBLIC_FILE_CSP);
  }
  await expect('/sites/no-such-site/', PUBLIC_PAGE_CSP, 404);
  const docs = await expect('/docs/', DOCS_CSP);
  t.match(docs.body, /swagger-ui/);
  await expect('/docs/json', DOCS_CSP);
  t.match(PUBLIC_PAGE_CSP, /frame-ancestors 'self'/);
  t.match(PUBLIC_PAGE_CSP, /img-src 'self' https: data: http:\/\/localhost:3000;/, "images also from the service's own http origin");
  t.match(DOCS_CSP, /frame-ancestors 'none'/);
  t.match(PUBLIC_FILE_CSP, /frame-ancestors 'none'/);
  t.notMatch(PUBLIC_PAGE_CSP, /unsafe/, 'no inline script or style on public pages');
  t.equal(publicPageCsp(['https://blog.example.com']), publicPageCsp(), 'an https origin is among https: already');

  // The editor's preview: images from the service only (a draft must not call out to whoever wants to know who opened it).
  const preview = await ctx.call({ method: 'GET', url: `/api/v1/posts/${post.id}/page` });
  t.equal(preview.statusCode, 200);
  t.equal(preview.headers['content-security-policy'], previewCsp(own));
  t.match(preview.headers['content-security-policy'], /img-src 'self' http:\/\/localhost:3000;/);
  t.notMatch(preview.headers['content-security-policy'], /https:|data:/);
  t.equal(preview.headers['x-content-type-options'], 'nosniff');
  t.match(ADMIN_CSP, /img-src 'self';/, 'the admin UI that frames it loads images from the service only too');

  // A draft's share link: the page's policy, and no referrer at all.
  const draft = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Draft', content: 'Soon.' } })).json().data.post as { id: string };
  const share = await ctx.call({ method: 'POST', url: `/api/v1/posts/${draft.id}/share` });
  t.equal(share.statusCode, 200, share.body);
  const shared = await get(share.json().data.url);
  t.equal(shared.statusCode, 200);
  t.equal(shared.headers['content-security-policy'], PUBLIC_PAGE_CSP);
  t.equal(shared.headers['referrer-policy'], 'no-referrer');
  t.equal(shared.headers['x-content-type-options'], 'nosniff');
});

t.test('in Chromium: the public page, the editor preview and /docs run under their policies without a violation', { skip: noChromium }, async (t) => {
  const ctx = await buildTestApp(t);
  const { post } = await publishedPost(ctx);
  const b = await openBrowser(t, ctx);
  const violations: string[] = [];
  await b.page.exposeFunction('reportViolation', (text: string) => violations.push(text));
  await b.context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { reportViolation(text: string): void }).reportViolation(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });

  await b.page.goto(`${b.origin}/sites/my-blog/${post.slug}/`);
  await b.page.getByRole('heading', { name: 'Herons' }).waitFor();
  const loaded = await b.page.evaluate(() => [...document.images].map((img) => ({ src: img.currentSrc || img.src, ok: img.complete && img.naturalWidth > 0 })));
  t.ok(loaded.some((img) => img.ok && img.src.startsWith(b.origin)), `the site's own image shows (${JSON.stringify(loaded)})`);
  // The comment form's proof of work runs under the page's policy: its module, worker and challenge fetch.
  await b.page.getByLabel('Name').focus();
  await b.page.getByLabel('Name').fill('Ann');
  await b.page.locator('altcha-widget [data-state="verified"], altcha-widget input[name="altcha"]').first().waitFor({ state: 'attached' });
  await b.page.waitForFunction(() => (document.querySelector('input[name="altcha"]') as HTMLInputElement | null)?.value?.length ?? 0 > 0, undefined, { timeout: 20_000 });
  t.same(violations, [], 'no violation on the public page and its comment form (an image elsewhere may load there)');

  await b.page.goto(`${b.origin}/docs/`);
  await b.page.locator('.swagger-ui .info .title').waitFor();
  await b.page.waitForTimeout(500);
  t.same(violations, [], 'no violation on /docs');
  t.same(b.problems.filter((p) => /Content Security Policy/i.test(p)), [], 'nor in the console');
});
