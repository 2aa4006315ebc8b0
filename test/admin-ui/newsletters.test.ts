import t from 'tap';
import { buildTestApp, waitFor } from '../helpers/app.js';
import { invite, noChromium, openBrowser, setUp } from '../helpers/browser.js';
import { startMailbox } from '../helpers/smtp.js';

/**
 * Newsletters in the admin UI, in Chromium: turned on in Settings; the Subscribers screen
 * (import, counts, search, export, remove); the editor's "Send as newsletter" switch, its
 * "Send a test", and the progress of the send once published.
 */
t.test('newsletters in the admin UI', { skip: noChromium }, async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'news@example.com', MAIL_RATE_PER_MINUTE: '100000' });
  const token = await invite(t, ctx, 'owner@example.com');
  const b = await openBrowser(t, ctx);
  const { page } = b;
  const nav = page.getByRole('navigation', { name: 'Main' });
  await setUp(b, token);

  await nav.getByRole('link', { name: 'Settings' }).click();
  await page.getByLabel('Readers can subscribe, and new posts are mailed to them').check();
  await page.getByLabel('Sender', { exact: true }).fill('The Heron');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Settings saved.').waitFor();
  t.match((await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site.newsletter, { enabled: true, senderName: 'The Heron' });

  await nav.getByRole('link', { name: 'Subscribers' }).click();
  await page.getByText('No subscribers yet.', { exact: false }).waitFor();
  await page.getByLabel('CSV file').setInputFiles({ name: 'list.csv', mimeType: 'text/csv', buffer: Buffer.from('email\nann@example.com\nbob@example.com\nnot-an-address\nann@example.com\n') });
  await page.getByLabel('These people agreed to receive the newsletter').check();
  await page.getByRole('button', { name: 'Import' }).click();
  await page.getByText('Imported 2 subscribers').waitFor();
  await page.getByText('Line 4: not-an-address (invalid)').waitFor();
  await page.getByText('Active: 2').waitFor();
  t.equal(await page.locator('a', { hasText: 'Export CSV' }).getAttribute('href'), '/api/v1/subscribers.csv');
  await page.getByLabel('Search').fill('bob');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/q=bob/);
  const bob = page.locator('li', { hasText: 'bob@example.com' });
  await bob.waitFor();
  t.equal(await page.locator('li', { hasText: 'ann@example.com' }).count(), 0, 'the search narrows the list');
  await bob.getByRole('button', { name: 'Remove' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
  await page.getByText('bob@example.com erased.').waitFor();
  await page.getByText('Active: 1').waitFor();

  // The editor: the switch, a test to oneself, and the send's progress once published.
  await nav.getByRole('link', { name: 'Posts' }).click();
  await page.getByRole('link', { name: 'New post' }).click();
  const sendSwitch = page.getByLabel('Send as newsletter');
  t.ok(await sendSwitch.isChecked(), 'on by default');
  await page.getByLabel('Title').fill('Heron spotted');
  await page.getByLabel('Content').fill('By the **river**.');
  await page.getByText('Saved', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Send a test' }).click();
  await page.getByText('A test is on its way to owner@example.com').waitFor();
  const test = await mailbox.to('owner@example.com');
  t.equal(test.parsed.subject, '[Test] Heron spotted');
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByText('Sent to 1 of 1 subscriber').waitFor();
  const mail = await mailbox.to('ann@example.com');
  t.equal(mail.parsed.subject, 'Heron spotted');
  await waitFor(() => mailbox.received.length === 2, 'the test and the newsletter');
  t.same(b.problems, [], 'no console errors or failed requests');
});
