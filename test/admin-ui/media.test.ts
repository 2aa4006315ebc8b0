import path from 'node:path';
import t from 'tap';
import { buildTestApp, fixturesDir } from '../helpers/app.js';
import { invite, noChromium, openBrowser, setUp, shoot } from '../helpers/browser.js';

const image = (name: string) => path.join(fixturesDir, 'images', name);

/** The media screen uploads, describes and deletes images; the editor picks one as the post's feature image. */
t.test('the media library and the feature image picker', { skip: noChromium }, async (t) => {
  const ctx = await buildTestApp(t);
  const token = await invite(t, ctx, 'owner@example.com');
  const b = await openBrowser(t, ctx);
  const { page, origin } = b;
  await setUp(b, token);

  await page.goto(`${origin}/admin/media`);
  await page.getByLabel('Upload an image').setInputFiles([image('small.jpg'), image('photo.png')]);
  await page.getByText('Uploaded photo.png.').waitFor();
  const cards = page.locator('.media-card');
  t.equal(await cards.count(), 2, 'both images listed');
  // Newest first: the PNG.
  const png = cards.first();
  t.match(await png.textContent(), /photo\.png.*700 × 467 · PNG/s);
  t.ok(await png.locator('img.thumb').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the thumbnail loads');
  await png.getByLabel('Alt text').fill('Blurred colours');
  await png.getByRole('button', { name: 'Save alt text' }).click();
  await page.getByText('Saved the alt text of photo.png.').waitFor();
  const listed = (await ctx.call({ method: 'GET', url: '/api/v1/media' })).json().data.items;
  t.equal(listed[0].alt, 'Blurred colours');
  // A path on this server, not an absolute URL: it works on whatever address the admin is opened at.
  t.match(await png.getByLabel('Markdown').inputValue(), /^!\[Blurred colours\]\(\/sites\/[\w-]+\/media\/.*\.png\)$/);
  await shoot(t, b, 'media-library');

  // A refused file says why.
  await page.getByLabel('Upload an image').setInputFiles(image('drawing.svg'));
  await page.getByText(/drawing\.svg: SVG images are not accepted/).waitFor();

  // The editor: the PNG as the feature image, with its own alt text for this post.
  await page.goto(`${origin}/admin/posts/new`);
  await page.getByLabel('Title').fill('A post with a picture');
  await page.getByLabel('Image', { exact: true }).selectOption({ label: 'photo.png (700 × 467)' });
  await page.locator('.feature-preview img').waitFor();
  await page.getByLabel('Alt text').fill('Colours of a sunset');
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByText('Published.', { exact: true }).waitFor();
  const postId = page.url().split('/').pop()!;
  const stored = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${postId}` })).json().data.post;
  t.match(stored, { featureImage: listed[0].id, featureImageAlt: 'Colours of a sunset' });
  // Reopened, the editor shows the choice again.
  await page.reload();
  t.equal(await page.getByLabel('Image', { exact: true }).inputValue(), listed[0].id);
  t.equal(await page.getByLabel('Alt text').inputValue(), 'Colours of a sunset');

  // Deleting the image from the library takes it off the post.
  await page.goto(`${origin}/admin/media`);
  await page.locator('.media-card').first().getByRole('button', { name: /Delete/ }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.getByText('Deleted photo.png.').waitFor();
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${postId}` })).json().data.post.featureImage, null);
  // The SVG's refusal is the one failed request.
  t.same(b.problems.filter((problem) => !/status of 415/.test(problem)), [], 'no other console errors or failed requests');
  t.same(b.dialogs, [], 'no JavaScript dialogs');
});
