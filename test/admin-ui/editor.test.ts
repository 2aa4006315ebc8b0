import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildTestApp, fixturesDir } from '../helpers/app.js';
import { DESKTOP, PHONE, invite, noChromium, openBrowser, setUp } from '../helpers/browser.js';
import { asUser } from '../helpers/accounts.js';

const image = (name: string) => path.join(fixturesDir, 'images', name);

/**
 * The editor a blogger expects, in Chromium at 127.0.0.1 (the address the first start prints),
 * by accessible names: nothing lost, images in the text, the real preview, revisions, roles
 * and share links.
 */
t.test('the editor: autosave, leaving, images, the real preview, revisions, roles, share links', { skip: noChromium }, async (t) => {
  const ctx = await buildTestApp(t);
  const b = await openBrowser(t, ctx);
  const { page, origin } = b;
  t.match(origin, /^http:\/\/127\.0\.0\.1:/);
  await setUp(b, await invite(t, ctx, 'owner@example.com'));
  const saved = page.getByRole('status').filter({ hasText: /^Saved/ });

  // Autosave: typing stops, the draft saves itself, and survives a reload. The heading follows the title.
  await page.getByRole('link', { name: 'New post' }).click();
  await page.getByLabel('Title').fill('Kingfishers');
  t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Kingfishers', 'the heading follows the title');
  await page.getByLabel('Content').fill('A flash of blue over the water.');
  await saved.waitFor();
  await page.waitForURL(/\/admin\/posts\/[0-9a-f-]{36}$/);
  const postId = page.url().split('/').pop()!;
  await page.reload();
  t.equal(await page.getByLabel('Content').inputValue(), 'A flash of blue over the water.', 'autosaved text survives a reload');
  t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Kingfishers');

  // Ctrl+S saves at once.
  await page.getByLabel('Content').fill('A flash of blue over the water. Then a splash.');
  await page.keyboard.press('Control+s');
  await saved.waitFor();
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${postId}` })).json().data.post.content, 'A flash of blue over the water. Then a splash.');

  // A pasted image is uploaded, its alt text asked, its Markdown put at the cursor; the preview shows it.
  const png = fs.readFileSync(image('photo.png')).toString('base64');
  await page.getByLabel('Content').evaluate((area: HTMLTextAreaElement, data: string) => {
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
    const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
    const transfer = new DataTransfer();
    transfer.items.add(new File([bytes], 'pasted.png', { type: 'image/png' }));
    area.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }));
  }, png);
  const altDialog = page.getByRole('dialog');
  await altDialog.getByLabel('Alt text').fill('A kingfisher on a branch');
  await altDialog.getByRole('button', { name: 'Insert' }).click();
  t.match(await page.getByLabel('Content').inputValue(), /Then a splash\.\n\n!\[A kingfisher on a branch\]\(\/sites\/[\w-]+\/media\/[0-9a-f-]{36}\/[^)]+\)\n$/, 'the Markdown, with a path on this server, at the cursor');
  await saved.waitFor();
  const frame = page.getByRole('region', { name: 'Preview' }).frameLocator('iframe');
  const pictured = frame.locator('.post-body img[alt="A kingfisher on a branch"]');
  await pictured.waitFor();
  await page.waitForFunction(() => {
    const img = document.querySelector('iframe')?.contentDocument?.querySelector('.post-body img') as HTMLImageElement | null;
    return Boolean(img && img.complete && img.naturalWidth > 0);
  });
  t.ok(await pictured.evaluate((img: HTMLImageElement) => img.naturalWidth > 0), 'the pasted image loads in the preview at 127.0.0.1');

  // The preview is the public page: title and feature image.
  await page.getByLabel('Or upload one').setInputFiles(image('small.jpg'));
  await page.getByText('Uploaded small.jpg').waitFor();
  await saved.waitFor();
  await frame.locator('.feature-image img').waitFor();
  t.equal(await frame.locator('h1').textContent(), 'Kingfishers', 'the preview shows the title');
  t.ok(await frame.locator('.feature-image img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'and the feature image');

  // A revision restores (as a new revision).
  await page.getByText('Revisions', { exact: true }).click();
  const restoreButtons = page.getByRole('button', { name: /^Restore the revision of/ });
  await restoreButtons.first().waitFor();
  await restoreButtons.last().click();
  await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
  await page.getByText('Revision restored.').waitFor();
  t.equal(await page.getByLabel('Content').inputValue(), 'A flash of blue over the water.', 'the oldest text is back');
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${postId}` })).json().data.post.content, 'A flash of blue over the water.');

  // Leaving with text that cannot be saved (no title) asks first; "Stay" stays.
  await page.getByRole('link', { name: '← Posts' }).click();
  await page.getByRole('heading', { level: 1, name: 'Posts' }).waitFor();
  await page.getByRole('link', { name: 'New post' }).click();
  await page.getByLabel('Content').fill('Words without a title yet');
  await page.getByRole('link', { name: '← Posts' }).click();
  const leave = page.getByRole('dialog');
  t.match(await leave.textContent(), /not saved.*a post needs a title/s, 'asks, saying why');
  await leave.getByRole('button', { name: 'Stay' }).click();
  t.match(page.url(), /\/admin\/posts\/new$/, 'stayed');
  t.equal(await page.getByLabel('Content').inputValue(), 'Words without a title yet');
  await page.getByRole('link', { name: '← Posts' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Leave without saving' }).click();
  await page.getByRole('heading', { level: 1, name: 'Posts' }).waitFor();

  // A share link opens the draft signed out, and stops once it is published.
  await page.goto(`${origin}/admin/posts/${postId}`);
  await page.getByRole('button', { name: 'Share preview' }).click();
  const shareLink = page.getByRole('link', { name: /\/preview\// });
  const shared = (await shareLink.getAttribute('href'))!;
  const signedOut = await fetch(`${origin}${shared}`);
  t.equal(signedOut.status, 200, 'the link opens the draft without a session');
  const body = await signedOut.text();
  t.match(body, /<h1>Kingfishers<\/h1>/);
  t.match(body, /Preview/);
  t.match(body, /<meta name="robots" content="noindex">/);
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByText('Published.', { exact: true }).waitFor();
  t.equal((await fetch(`${origin}${shared}`)).status, 404, 'published: the link stops');

  // Phone width: a "Menu" button opens the navigation; "Write" and "Preview" tabs switch the editor.
  await page.setViewportSize(PHONE);
  const nav = page.getByRole('navigation', { name: 'Main' });
  t.notOk(await nav.isVisible(), 'the navigation is folded');
  await page.getByRole('button', { name: 'Menu' }).click();
  t.ok(await nav.getByRole('link', { name: 'Posts' }).isVisible(), 'Menu opens it');
  await page.getByRole('button', { name: 'Menu' }).click();
  t.notOk(await page.getByRole('region', { name: 'Preview' }).isVisible(), 'Write shows the form only');
  await page.getByRole('tab', { name: 'Preview' }).click();
  await page.getByRole('region', { name: 'Preview' }).waitFor();
  t.notOk(await page.getByLabel('Title').isVisible(), 'Preview shows the page only');
  await page.getByRole('tab', { name: 'Write' }).click();
  await page.setViewportSize(DESKTOP);

  // A contributor: no "Publish", "Submit for review" instead; the API answers 403 to publishing.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${origin}/admin/sign-in`);
  await setUp(b, await invite(t, ctx, 'contributor@example.com', 'contributor'));
  await page.getByRole('link', { name: 'New post' }).click();
  await page.getByLabel('Title').fill('My first contribution');
  await saved.waitFor();
  t.equal(await page.getByRole('button', { name: 'Publish' }).count(), 0, 'a contributor has no Publish');
  await page.getByRole('button', { name: 'Submit for review' }).click();
  await page.getByText('Submitted for review: an editor can publish it.').waitFor();
  const draftId = page.url().split('/').pop()!;
  const cookie = (await b.context.cookies()).find((c) => c.name === 'blog_session')!.value;
  const refusedPublish = await asUser(ctx, cookie, { method: 'PUT', url: `/api/v1/posts/${draftId}` });
  t.equal(refusedPublish.statusCode, 403, "the contributor's publish is 403");
  t.match(refusedPublish.json().error.message, /contributor cannot publish/);
  t.equal((await asUser(ctx, cookie, { method: 'PATCH', url: `/api/v1/posts/${draftId}`, payload: { content: 'Still mine' } })).statusCode, 200, 'while editing the draft is allowed');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${origin}/admin/sign-in`);
  await setUp(b, await invite(t, ctx, 'author@example.com', 'author'));
  const authorCookie = (await b.context.cookies()).find((c) => c.name === 'blog_session')!.value;
  const byAuthor = await asUser(ctx, authorCookie, { method: 'PATCH', url: `/api/v1/posts/${postId}`, payload: { title: 'Mine now' } });
  t.equal(byAuthor.statusCode, 403, "an author cannot edit another's post");
  t.match(byAuthor.json().error.message, /only your own posts/);

  t.same(b.problems.filter((problem) => !/status of 40[34]/.test(problem)), [], 'no console errors or failed requests');
});
