import fs from 'node:fs';
import path from 'node:path';
import { parseAtomFeed, parseJsonFeed, parseRssFeed } from 'feedsmith';
import { HtmlValidate } from 'html-validate';
import t from 'tap';
import { buildTestApp, fixturesDir, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

const validator = new HtmlValidate({ extends: ['html-validate:recommended'] });
const image = (name: string) => fs.readFileSync(path.join(fixturesDir, 'images', name));

async function uploadImage(ctx: TestApp, file: string, key?: string) {
  const form = multipart([{ name: 'file', filename: file, content: image(file) }]);
  const res = await ctx.call({ method: 'POST', url: '/api/v1/media', payload: form.payload, headers: form.headers, key });
  if (res.statusCode !== 201) throw new Error(`upload failed: ${res.body}`);
  return res.json().data.media as { id: string; url: string; width: number; height: number; variants: { url: string; width: number; format: string }[] };
}
const get = (ctx: TestApp, url: string) => ctx.call({ method: 'GET', url, key: null });
const attribute = (html: string, tag: RegExp, name: string) => new RegExp(`${name}="([^"]*)"`).exec(tag.exec(html)?.[0] ?? '')?.[1];

t.test('a post with a feature image: its page, the index and every feed show it', async (t) => {
  const ctx = await buildTestApp(t);
  const handle = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site.handle;
  const media = await uploadImage(ctx, 'photo.webp');

  const unknown = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'No such image', featureImage: '00000000-0000-4000-8000-000000000000' } });
  t.equal(unknown.statusCode, 400);
  t.equal(unknown.json().error.details[0].path, '/body/featureImage');

  const created = await ctx.call({
    method: 'POST',
    url: '/api/v1/posts',
    payload: { title: 'Sunrise over the bay', content: `Intro.\n\n![The bay](${media.url})\n`, isDraft: false, featureImage: media.id, featureImageAlt: 'The sun rising over the bay' },
  });
  t.equal(created.statusCode, 201);
  const { id, slug } = created.json().data.post;
  const detail = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}` })).json().data.post;
  t.equal(detail.featureImage, media.id);
  t.equal(detail.featureImageAlt, 'The sun rising over the bay');

  const page = await get(ctx, `/sites/${handle}/${slug}/`);
  t.equal(page.statusCode, 200);
  const html = page.body;
  const report = await validator.validateString(html);
  t.ok(report.valid, `valid HTML ${report.results.flatMap((r) => r.messages.map((m) => m.message)).join('; ')}`);
  const feature = /<figure class="feature-image">\s*<img [^>]*>/;
  t.equal(attribute(html, feature, 'width'), '1700');
  t.equal(attribute(html, feature, 'height'), String(media.height));
  t.equal(attribute(html, feature, 'alt'), 'The sun rising over the bay');
  t.equal(attribute(html, feature, 'fetchpriority'), 'high');
  t.notOk(attribute(html, feature, 'loading'), 'above the fold: not lazy');
  const srcset = attribute(html, feature, 'srcset')!;
  t.same(srcset.split(', ').map((entry) => entry.split(' ')[1]), ['600w', '1000w', '1600w', '1700w']);
  for (const entry of srcset.split(', ')) t.equal((await get(ctx, entry.split(' ')[0]!)).statusCode, 200, `${entry} is served`);
  t.match(attribute(html, feature, 'sizes'), /42rem/);
  // Link previews.
  t.match(html, /<meta name="twitter:card" content="summary_large_image">/);
  const ogImage = /<meta property="og:image" content="([^"]+)">/.exec(html)?.[1];
  t.ok(ogImage?.startsWith('http'), 'og:image is absolute');
  t.match(ogImage, /-1600\.webp$/, 'the widest file at most 1,600 px');
  t.match(html, /<meta property="og:image:width" content="1600">/);
  t.match(html, /<meta name="twitter:image" content="[^"]+-1600\.webp">/);
  t.match(html, /"image":\{"@type":"ImageObject"/, 'JSON-LD names the image');
  // The Markdown image of the site's media gets the same srcset, lazily.
  const inBody = /<div class="post-body">[\s\S]*?<img [^>]*>/;
  t.equal(attribute(html, inBody, 'loading'), 'lazy');
  t.equal(attribute(html, inBody, 'width'), '1700');
  t.match(attribute(html, inBody, 'srcset'), /-600\.webp 600w, .* 1700w$/);

  // The index shows it small.
  const index = (await get(ctx, `/sites/${handle}/`)).body;
  t.match(index, /<img class="thumbnail" [^>]*sizes="8rem"/);
  t.ok((await validator.validateString(index)).valid, 'index valid HTML');

  // Feeds carry it.
  const rss = parseRssFeed((await get(ctx, `/sites/${handle}/rss.xml`)).body);
  const enclosure = rss.items![0]!.enclosures?.[0] ?? (rss.items![0] as { enclosure?: { url: string; type: string; length: number } }).enclosure;
  t.match(enclosure, { url: ogImage, type: 'image/webp' });
  t.ok(Number(enclosure!.length) > 0, 'the enclosure has its length');
  const json = parseJsonFeed((await get(ctx, `/sites/${handle}/feed.json`)).body);
  t.equal(json.items![0]!.image, ogImage);
  const atom = parseAtomFeed((await get(ctx, `/sites/${handle}/atom.xml`)).body);
  t.ok(atom.entries![0]!.links!.some((link) => link.rel === 'enclosure' && link.href === ogImage), 'Atom links the enclosure');

  // Removing the feature image (PATCH null) takes it off the page.
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { featureImage: null } })).statusCode, 200);
  const after = (await get(ctx, `/sites/${handle}/${slug}/`)).body;
  t.notMatch(after, /feature-image/);
  t.match(after, /<meta name="twitter:card" content="summary">/);
});

t.test("deleting an image takes it off its posts; another site's image cannot be a feature image", async (t) => {
  const ctx = await buildTestApp(t);
  const handle = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site.handle;
  const media = await uploadImage(ctx, 'small.jpg');
  const { id, slug } = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Cup', isDraft: false, featureImage: media.id } })).json().data.post;
  t.match((await get(ctx, `/sites/${handle}/${slug}/`)).body, /feature-image/);
  // No alt text on the post: the image's own.
  await ctx.call({ method: 'PATCH', url: `/api/v1/media/${media.id}`, payload: { alt: 'A cup of coffee' } });
  t.match((await get(ctx, `/sites/${handle}/${slug}/`)).body, /<figure class="feature-image">\s*<img [^>]*alt="A cup of coffee"/);

  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/media/${media.id}` })).statusCode, 200);
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}` })).json().data.post.featureImage, null);
  t.notMatch((await get(ctx, `/sites/${handle}/${slug}/`)).body, /feature-image/);

  const other = await ctx.addSite('Other');
  const theirs = await uploadImage(ctx, 'small.jpg', other.key);
  const refused = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { featureImage: theirs.id } });
  t.equal(refused.statusCode, 400);
  // Their image's URL under this site's address is no file of this site.
  t.equal((await get(ctx, new URL(theirs.url).pathname.replace(/\/sites\/[^/]+\//, `/sites/${handle}/`))).statusCode, 404);
});
