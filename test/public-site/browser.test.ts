import t, { type Test } from 'tap';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { buildTestApp, tempDataDir, type TestApp } from '../helpers/app.js';
import { DESKTOP, launchChromium, noChromium, PHONE } from '../helpers/browser.js';

/**
 * The public pages in a real browser: what a reader sees, follows and scrolls, on a phone and on
 * a desktop. Needs a Chromium on this machine (Debian: `apt-get install chromium`, or point
 * CHROMIUM_PATH at one); without it the test is skipped, saying why.
 */

const POSTS = [
  {
    title: 'Herons at dawn',
    content: '# Spotting herons\n\nThey stand still in the shallows until the light comes up.\n',
    description: 'A grey shape in the reeds.',
    tags: ['birds', 'river'],
  },
  {
    title: 'Kingfisher by the weir',
    content:
      '# A flash of blue\n\nGone before the camera is out of the bag.\n\n' +
      '```\nnotes: a line of code that is far too long to fit on a phone screen and must scroll inside its own box\n```\n',
    description: 'Quick, and very blue.',
    tags: ['birds'],
  },
  {
    title: 'Mist on the water',
    content: '# Before sunrise\n\nThe far bank disappears for an hour.\n',
    description: 'Weather, mostly.',
    tags: ['weather'],
  },
];
const DRAFT = { title: 'Unfinished owl notes', content: '# Owls\n\nNot ready.\n', description: 'Draft.', tags: ['birds'] };

async function createPost(t: Test, ctx: TestApp, post: typeof DRAFT, isDraft: boolean): Promise<{ slug: string }> {
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { ...post, isDraft } });
  t.equal(res.statusCode, 201, `created “${post.title}”`);
  return res.json().data.post;
}

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(file: string): { width: number; height: number; bytes: number } {
  const data = fs.readFileSync(file);
  if (!data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) throw new Error(`${file} is not a PNG`);
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20), bytes: data.length };
}

async function noHorizontalScroll(page: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  return page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
}

t.test('public pages in Chromium', { skip: noChromium }, async (t) => {
  const ctx = await buildTestApp(t);
  const published = [];
  for (const post of POSTS) published.push({ ...post, ...(await createPost(t, ctx, post, false)) });
  await createPost(t, ctx, DRAFT, true);

  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const { site } = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data;
  const home = `${origin}/sites/${site.handle}/`;

  // A fresh profile in a temporary folder; the browser closes before the folder is removed
  // (teardowns run last-registered first).
  const tmp = tempDataDir(t);
  const shots = path.join(tmp, 'screenshots');
  fs.mkdirSync(shots);
  const { page } = await launchChromium(t, tmp);

  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    problems.push(`console error: ${message.text()} at ${message.location().url}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  page.on('request', (request) => requests.push(request.url()));

  // The index: the site's name, the published posts, never the draft.
  const first = await page.goto(home, { waitUntil: 'load' });
  t.equal(first?.status(), 200, 'index is 200');
  t.equal(await page.title(), site.name, 'index title is the site name');
  t.equal(await page.locator('h1').textContent(), site.name, 'index h1 is the site name');
  for (const post of published) {
    t.ok(await page.getByRole('link', { name: post.title, exact: true }).isVisible(), `“${post.title}” is listed`);
  }
  t.equal(await page.getByText(DRAFT.title).count(), 0, 'the draft is not listed');
  t.equal(await page.locator('ol.post-list > li').count(), published.length, 'one entry per published post');

  // Keyboard: the first Tab lands on the skip link, which then shows on screen.
  await page.keyboard.press('Tab');
  const focused = await page.evaluate(() => {
    const el = document.activeElement as HTMLAnchorElement | null;
    const box = el?.getBoundingClientRect();
    return { tag: el?.tagName, href: el?.getAttribute('href'), text: el?.textContent?.trim(), top: box?.top, bottom: box?.bottom };
  });
  t.same(
    { tag: focused.tag, href: focused.href, text: focused.text },
    { tag: 'A', href: '#main', text: 'Skip to content' },
    'the skip link is the first focusable element',
  );
  t.ok(focused.top! >= 0 && focused.bottom! <= DESKTOP.height, 'the focused skip link is inside the viewport');

  // Follow a post's link by clicking it.
  const target = published[1];
  const postUrl = `${home}${target.slug}/`;
  await page.getByRole('link', { name: target.title, exact: true }).click();
  await page.waitForURL(postUrl, { waitUntil: 'load' });
  t.equal(page.url(), postUrl, 'the link leads to the post URL');
  t.equal(await page.title(), `${target.title} – ${site.name}`, 'post page title');
  t.equal(await page.locator('h1').textContent(), target.title, 'post h1 is the title');
  const heading = page.locator('.post-body h2', { hasText: 'A flash of blue' });
  t.ok(await heading.isVisible(), 'the Markdown heading shows as an h2');
  t.ok(await page.getByText('Gone before the camera is out of the bag.').isVisible(), 'the Markdown paragraph shows');
  t.match(await page.locator('article.post header .meta').innerText(), /\b\d+ min read\b/, 'reading time shown');
  t.ok(await page.getByRole('link', { name: 'birds', exact: true }).isVisible(), 'tag link shown');

  // At phone width nothing is wider than the screen, even the long code line.
  await page.setViewportSize(PHONE);
  const phonePost = await noHorizontalScroll(page);
  t.ok(phonePost.scrollWidth <= phonePost.innerWidth, `post: no horizontal scroll at ${PHONE.width}px (${JSON.stringify(phonePost)})`);
  await page.screenshot({ path: path.join(shots, 'post-phone.png'), fullPage: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(shots, 'post-desktop.png'), fullPage: true });

  // Back to the index.
  await page.goBack({ waitUntil: 'load' });
  t.equal(page.url(), home, 'back on the index');
  t.equal(await page.locator('h1').textContent(), site.name, 'index heading shown again');
  t.ok(await page.getByRole('link', { name: target.title, exact: true }).isVisible(), 'post list shown again');

  await page.setViewportSize(PHONE);
  const phoneIndex = await noHorizontalScroll(page);
  t.ok(phoneIndex.scrollWidth <= phoneIndex.innerWidth, `index: no horizontal scroll at ${PHONE.width}px (${JSON.stringify(phoneIndex)})`);
  await page.screenshot({ path: path.join(shots, 'index-phone.png'), fullPage: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(shots, 'index-desktop.png'), fullPage: true });

  for (const [name, width] of [['index-phone', PHONE.width], ['index-desktop', DESKTOP.width], ['post-phone', PHONE.width], ['post-desktop', DESKTOP.width]] as const) {
    const png = pngSize(path.join(shots, `${name}.png`));
    t.equal(png.width, width, `${name}.png is ${width}px wide`);
    t.ok(png.height >= (width === PHONE.width ? PHONE.height : DESKTOP.height), `${name}.png is at least a screen high`);
    t.ok(png.bytes > 5_000, `${name}.png is not blank (${png.bytes} bytes)`);
  }

  t.same(problems, [], 'no console errors, page errors, failed requests or HTTP errors');
  t.ok(requests.length >= 3, `the pages made requests (${requests.length})`);
  t.same(requests.filter((url) => !url.startsWith(`${origin}/`)), [], 'every request goes to the server itself');
});
