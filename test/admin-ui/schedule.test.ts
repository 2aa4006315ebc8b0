import t from 'tap';
import { buildTestApp } from '../helpers/app.js';
import { invite, noChromium, openBrowser, setUp, shoot } from '../helpers/browser.js';

/** Scheduling a post in the editor: a date and time in the person's zone, kept in UTC; marked in the list; cancelled. */
t.test('the editor schedules a draft, the list marks it, and the schedule can be cancelled', { skip: noChromium }, async (t) => {
  const ctx = await buildTestApp(t);
  const token = await invite(t, ctx, 'owner@example.com');
  const b = await openBrowser(t, ctx);
  const { page, origin } = b;
  await setUp(b, token);

  await page.goto(`${origin}/admin/posts/new`);
  await page.getByLabel('Title').fill('Out next week');
  await page.getByLabel('Content').fill('Soon.');
  // What the browser shows for a time a week ahead, in its own zone, to the minute.
  const local = await page.evaluate(() => {
    const at = new Date(Date.now() + 7 * 86_400_000);
    at.setSeconds(0, 0);
    return { input: new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16), iso: at.toISOString() };
  });
  t.match(await page.getByText(/In your time zone \(/).textContent(), /In your time zone \([^)]+\); kept in UTC/, 'the editor names the zone the time is read in');
  await page.getByLabel('Publish at').fill(local.input);
  await page.getByRole('button', { name: 'Schedule', exact: true }).click();
  await page.getByText(/^Scheduled for /).first().waitFor();
  await page.waitForURL(/\/admin\/posts\/[0-9a-f-]{36}$/);
  const postId = page.url().split('/').pop()!;
  const stored = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${postId}` })).json().data.post;
  t.match(stored, { isDraft: true, publishAt: local.iso }, 'stored as a draft with publishAt in UTC');
  t.equal(await page.getByLabel('Publish at').inputValue(), local.input, 'the field shows the time again in the person’s zone');
  await shoot(t, b, 'editor-scheduled');

  // The list marks it, and its Scheduled filter finds it.
  await page.goto(`${origin}/admin/posts?status=scheduled`);
  const row = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'Out next week' }) });
  await row.waitFor();
  t.match(await row.textContent(), /Scheduled for /, 'marked as scheduled in the list');

  // Cancelled: a draft again, and no job left to publish it.
  await page.getByRole('link', { name: 'Out next week' }).click();
  await page.getByRole('button', { name: 'Cancel schedule' }).click();
  await page.getByText('Schedule cancelled: a draft again.').waitFor();
  t.match((await ctx.call({ method: 'GET', url: `/api/v1/posts/${postId}` })).json().data.post, { isDraft: true, publishAt: null });
  t.equal(await ctx.count("select count(*) as n from jobs where kind = 'publish-post' and status = 'pending'"), 0);
  t.same(b.problems, [], 'no console errors or failed requests');
  t.same(b.dialogs, [], 'no JavaScript dialogs');
});
