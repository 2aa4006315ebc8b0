import t from 'tap';
import { buildTestApp } from '../helpers/app.js';
import { invite, noChromium, openBrowser, setUp, shoot } from '../helpers/browser.js';
import { multipart } from '../helpers/multipart.js';

const READER = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

/** The Stats screen in Chromium: a drawn chart with its table, top lists; views in the post list and the editor; subscribers over time. */
t.test('the stats screen, the views in the list and the chart in the editor', { skip: noChromium }, async (t) => {
  const ctx = await buildTestApp(t);
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Much read', isDraft: false } })).json().data.post;
  for (const agent of [READER, `${READER} other`, READER]) {
    await ctx.app.inject({ method: 'GET', url: `/sites/my-blog/${post.slug}/`, headers: { 'user-agent': agent, referer: 'https://news.example.org/x' } });
  }
  await ctx.app.analytics.flush();

  const token = await invite(t, ctx, 'owner@example.com');
  const b = await openBrowser(t, ctx);
  const { page } = b;
  await setUp(b, token);
  const nav = page.getByRole('navigation', { name: 'Main' });

  // The post list: each post's views.
  await page.getByText('3 views (30 days)').waitFor();
  t.pass('the list shows the views');

  await nav.getByRole('link', { name: 'Stats' }).click();
  await page.getByRole('heading', { level: 1, name: 'Stats' }).waitFor();
  const chart = page.getByRole('img', { name: /Views and visitors per day: 3 views over 30 days/ });
  await chart.waitFor();
  t.equal(await page.locator('svg.chart polyline.series').count(), 2, 'a line for views and one for visitors');
  await page.getByText('Numbers as a table').click();
  const today = (await ctx.call({ method: 'GET', url: '/api/v1/stats' })).json().data.to as string;
  const row = page.getByRole('row', { name: new RegExp(`^${today}`) });
  t.same(await row.getByRole('cell').allTextContents(), ['3', '2'], "today's views and visitors in the table");
  await page.getByRole('link', { name: 'Much read' }).waitFor();
  await page.getByRole('cell', { name: 'news.example.org' }).waitFor();
  await shoot(t, b, 'stats');

  await page.getByRole('combobox', { name: 'Range' }).selectOption('7');
  await page.getByRole('img', { name: /over 7 days/ }).waitFor();
  t.pass('the range changes the chart');

  // The editor: the post's own small chart.
  await page.getByRole('link', { name: 'Much read' }).click();
  await page.getByRole('heading', { name: 'Views, last 30 days: 3' }).waitFor();
  t.equal(await page.locator('svg.chart.small').count(), 1);

  // Subscribers over the same days, below the views: two imported today.
  const csv = multipart([{ name: 'file', filename: 'list.csv', content: 'email\nann@example.com\nben@example.com\n', contentType: 'text/csv' }]);
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/subscribers/import', payload: csv.payload, headers: csv.headers })).statusCode, 200);
  await nav.getByRole('link', { name: 'Stats' }).click();
  await page.getByRole('heading', { level: 2, name: 'Subscribers' }).waitFor();
  await page.getByRole('img', { name: /Sign-ups and unsubscribes per day: 2 sign-ups over 30 days/ }).waitFor();
  t.match(await page.getByRole('heading', { level: 2, name: 'Subscribers' }).locator('xpath=..').textContent(), /2 active now · 2 joined · 0 left/);
  t.same(b.problems, [], 'no console errors, failed requests or CSP refusals');
});
