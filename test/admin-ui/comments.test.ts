import path from 'node:path';
import { chromium } from 'playwright-core';
import t from 'tap';
import { buildTestApp, tempDataDir } from '../helpers/app.js';
import { PHONE, executablePath, invite, noChromium, noHorizontalScroll, openBrowser, setUp, shoot } from '../helpers/browser.js';

/**
 * Comments in Chromium, as readers and moderators meet them: a reader without JavaScript sends
 * the form and is told the comment waits; the owner sees the pending count, approves it on the
 * Comments screen and replies as the site; the page shows both. Then a reader with JavaScript
 * on a phone solves the proof of work and sends in place, without leaving the page.
 */
t.test('comments: the no-JavaScript form, the Comments screen, the JavaScript form at phone width', { skip: noChromium }, async (t) => {
  const ctx = await buildTestApp(t, { SPAM_GUARD_DIFFICULTY: '2000', SPAM_GUARD_MIN_FILL_SECONDS: '1' });
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Rain on the estuary', content: 'Grey, then silver.', isDraft: false } })).json().data.post;
  const token = await invite(t, ctx, 'owner@example.com');
  const b = await openBrowser(t, ctx);
  const { page, origin } = b;
  const postPage = `${origin}/sites/my-blog/${post.slug}/`;

  // A reader whose browser runs no script: the plain form, answered by the page again.
  const noScript = await chromium.launchPersistentContext(path.join(tempDataDir(t), 'profile'), {
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    javaScriptEnabled: false,
  });
  t.teardown(() => noScript.close());
  noScript.setDefaultTimeout(20_000);
  const reader = noScript.pages()[0] ?? (await noScript.newPage());
  await reader.goto(postPage);
  await reader.getByRole('heading', { name: 'No comments yet' }).waitFor();
  await reader.getByLabel('Name').fill('Ada Reader');
  await reader.getByLabel('Email (optional, never shown)').fill('ada@example.com');
  await reader.getByRole('textbox', { name: 'Comment' }).fill('Lovely light in the second photo.\n\nMore of the estuary, please.');
  await reader.getByRole('button', { name: 'Post comment' }).click();
  await reader.waitForURL(`${postPage}?comment=pending#comments`);
  await reader.getByText('Thanks: your comment waits for a moderator').waitFor();
  t.equal(await reader.getByText('Lovely light in the second photo.').count(), 0, 'not shown while it waits');

  // The owner: the pending count in the navigation, the Comments screen, Approve, Reply.
  await setUp(b, token);
  const nav = page.getByRole('navigation', { name: 'Main' });
  const comments = nav.getByRole('link', { name: /^Comments/ });
  await nav.getByRole('link', { name: 'Comments 1 pending' }).waitFor();
  await comments.click();
  await page.getByRole('heading', { level: 1, name: 'Comments' }).waitFor();
  const mailBox = page.getByLabel('Email me when comments wait (at most one mail per post an hour)');
  await mailBox.waitFor();
  t.ok(await mailBox.isChecked(), 'an owner is mailed by default');
  t.ok(await page.getByText('Mail is not set up on this service (SMTP_URL), so none is sent.').isVisible(), 'and told when mail is not set up');
  t.equal(await page.getByRole('navigation', { name: 'Comment status' }).getByRole('link', { name: 'Pending' }).getAttribute('aria-current'), 'page', 'Pending is the first tab');
  const row = page.locator('li.comment', { hasText: 'Ada Reader' });
  await row.getByText('held: no proof of work (sent without JavaScript)').waitFor();
  t.ok(await row.getByRole('link', { name: 'Rain on the estuary' }).isVisible(), 'the post it belongs to');
  t.match(await row.locator('.comment-text').textContent(), 'Lovely light in the second photo.\n\nMore of the estuary, please.');
  await shoot(t, b, 'comments-pending');
  await row.getByRole('button', { name: 'Approve' }).click();
  await page.getByText('Approved: Ada Reader.').waitFor();
  await page.getByText('Nothing waits for a moderator.').waitFor();
  await nav.getByRole('link', { name: 'Comments', exact: true }).waitFor();
  t.pass('the pending count is gone from the navigation');

  await page.getByRole('navigation', { name: 'Comment status' }).getByRole('link', { name: 'Approved' }).click();
  const approved = page.locator('li.comment', { hasText: 'Ada Reader' });
  await approved.getByRole('button', { name: 'Reply' }).click();
  await page.getByLabel('Reply to Ada Reader').fill('Thank you: more soon.');
  await page.getByRole('button', { name: 'Publish reply' }).click();
  await page.getByText('Reply published.').waitFor();
  await page.locator('li.comment', { hasText: 'Thank you: more soon.' }).waitFor();
  await shoot(t, b, 'comments-approved');

  // The editor shows the post's comments, linked to them.
  await page.goto(`${origin}/admin/posts/${post.id}`);
  const count = page.getByRole('link', { name: '2 comments' });
  await count.click();
  await page.locator('p.meta', { hasText: 'On Rain on the estuary' }).waitFor();
  t.match(page.url(), `postId=${post.id}`);

  // The page, the content API and the count show the approved comment and the reply.
  // (Reloaded: the browser may keep a page a minute, max-age=60; a reload asks the service again.)
  await reader.goto(postPage);
  await reader.reload();
  await reader.getByRole('heading', { name: '2 comments' }).waitFor();
  t.ok(await reader.locator('.comment-body', { hasText: 'More of the estuary, please.' }).isVisible());
  t.ok(await reader.locator('.comment-replies .comment', { hasText: 'Thank you: more soon.' }).isVisible(), 'the reply under its parent');
  t.equal(await reader.getByText('ada@example.com').count(), 0, 'the email is never shown');
  const api = (await ctx.call({ method: 'GET', url: `/content/v1/sites/my-blog/posts/${post.slug}/comments`, key: null })).json().data;
  t.equal(api.pagination.total, 2);

  // A reader with JavaScript, on a phone: the proof of work is solved, the comment sent in place.
  const phone = await b.context.newPage();
  await phone.setViewportSize(PHONE);
  await phone.goto(postPage);
  await phone.getByLabel('Name').fill('Bo on a phone');
  await phone.getByRole('textbox', { name: 'Comment' }).fill('Read this on the bus.');
  await new Promise((resolve) => setTimeout(resolve, 1100)); // a person takes longer than the minimum time
  await phone.getByRole('button', { name: 'Post comment' }).click();
  await phone.getByText('Thanks: your comment waits for a moderator').waitFor();
  t.equal(phone.url(), postPage, 'sent in place: the page stayed');
  t.equal(await phone.getByRole('textbox', { name: 'Comment' }).inputValue(), '', 'the form is emptied');
  const size = await noHorizontalScroll(phone);
  t.ok(size.scrollWidth <= size.innerWidth, `no horizontal scroll at ${PHONE.width}px (${JSON.stringify(size)})`);
  const sent = (await ctx.call({ method: 'GET', url: '/api/v1/comments?status=pending' })).json().data.comments;
  t.match(sent, [{ authorName: 'Bo on a phone', heldFor: null }], 'the proof of work was solved: waiting only for the moderator');

  // Reply on the page fills in the parent without leaving it.
  await phone.getByRole('link', { name: 'Reply' }).first().click();
  await phone.getByText('Replying to Ada Reader').waitFor();
  t.equal(await phone.locator('input[name="parentId"]').inputValue(), api.comments[0].id);

  t.same(b.problems, [], 'no console errors or failed requests');
});
