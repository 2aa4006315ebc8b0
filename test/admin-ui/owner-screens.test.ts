import t from 'tap';
import { buildTestApp, waitFor } from '../helpers/app.js';
import { startReceiver } from '../helpers/receiver.js';
import { PASSWORD, invite, noChromium, openBrowser, setUp, shoot, signIn } from '../helpers/browser.js';

/**
 * The owner's screens in Chromium: switching sites (and what an editor does not see), users,
 * webhooks with their deliveries, and the site settings.
 */
t.test('owner screens in Chromium', { skip: noChromium }, async (t) => {
  const ctx = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '50' });
  const email = 'owner@example.com';
  const token = await invite(t, ctx, email);
  const b = await openBrowser(t, ctx);
  const { page, origin } = b;
  const nav = page.getByRole('navigation', { name: 'Main' });
  await setUp(b, token);
  // The same person edits a second site (added once they have a password: it would send them a new link before).
  const second = await ctx.addSite('Second blog');
  await ctx.app.accounts.addMember(second.site.id, email, 'editor');
  await page.reload();

  // The site switcher: on the second site this person is an editor, and sees no owner screens.
  const switcher = page.getByLabel('Site', { exact: true });
  t.equal(await switcher.locator('option').count(), 2, 'both sites to choose from');
  await switcher.selectOption(second.site.id);
  await nav.getByRole('link', { name: 'Posts' }).waitFor();
  await page.waitForFunction(() => !document.querySelector('#nav a[href="/admin/keys"]'));
  for (const name of ['Webhooks', 'API keys', 'Users', 'Settings']) t.equal(await nav.getByRole('link', { name, exact: true }).count(), 0, `an editor does not see “${name}”`);
  for (const name of ['Posts', 'Knowledge', 'Generate', 'Batches']) t.ok(await nav.getByRole('link', { name, exact: true }).isVisible(), `an editor sees “${name}”`);
  await page.goto(`${origin}/admin/keys`);
  await page.getByRole('heading', { level: 1, name: 'Owners only' }).waitFor();
  await page.getByLabel('Site', { exact: true }).selectOption(ctx.site.id);
  await nav.getByRole('link', { name: 'Users' }).waitFor();

  // Users: invite (without mail, the invitation link shows and the invitation is pending), the
  // person accepts, then change the role, remove.
  await nav.getByRole('link', { name: 'Users' }).click();
  await page.getByLabel('Email').fill('editor@example.com');
  await page.getByLabel('Role', { exact: true }).selectOption('editor');
  await page.getByRole('button', { name: 'Invite' }).click();
  const link = (await page.locator('code.secret').textContent())!;
  t.match(link, /\/admin\/accept#token=\S+$/, 'the invitation link is shown');
  await page.locator('.invitations li', { hasText: 'editor@example.com' }).getByText('Pending').waitFor();
  const accepted = await ctx.call({ method: 'POST', url: '/api/v1/auth/accept', key: null, payload: { token: new URL(link).hash.slice('#token='.length), password: 'the editor password' } });
  t.equal(accepted.statusCode, 200, accepted.body);
  await nav.getByRole('link', { name: 'Posts' }).click();
  await nav.getByRole('link', { name: 'Users' }).click();
  await page.getByText('No pending invitations.').waitFor();
  const row = page.locator('li', { hasText: 'editor@example.com' });
  await row.getByText('Since').waitFor();
  await page.getByLabel('Role for editor@example.com').selectOption('owner');
  await page.getByText('editor@example.com', { exact: false }).first().waitFor();
  await waitFor(async () => {
    const users = (await ctx.call({ method: 'GET', url: '/api/v1/users' })).json().data.users as { email: string; role: string }[];
    return users.find((u) => u.email === 'editor@example.com')?.role === 'owner';
  }, 'the role change');
  t.pass('the role changed to owner');
  await shoot(t, b, 'users');
  await row.getByRole('button', { name: 'Remove' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
  await page.getByText('Removed editor@example.com.').waitFor();
  const users = (await ctx.call({ method: 'GET', url: '/api/v1/users' })).json().data.users as { email: string }[];
  t.notOk(users.some((u) => u.email === 'editor@example.com'), 'removed from the site');
  t.ok(users.some((u) => u.email === email), 'the owner stays');

  // Webhooks: add one (its secret shown once), see a delivery's attempts, retry it, rotate the secret.
  const receiver = await startReceiver(t, (_receipt, index, res) => res.writeHead(index === 0 ? 500 : 200).end(index === 0 ? 'not yet' : 'ok'));
  await nav.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByLabel('URL').fill(receiver.url);
  await page.getByLabel('Description').fill('Rebuild the static copy');
  t.ok(await page.getByLabel('post.created').isChecked(), 'post events are chosen by default');
  await page.getByRole('button', { name: 'Add webhook' }).click();
  const secret = (await page.locator('code.secret').textContent())!;
  t.match(secret, /^whsec_/, 'the signing secret is shown');
  await page.locator('li', { hasText: receiver.url }).waitFor();
  await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'A post to announce' } });
  await receiver.received(2);
  const hook = page.locator('li', { hasText: receiver.url });
  await hook.getByRole('button', { name: 'Deliveries' }).click();
  const delivery = hook.locator('.deliveries li', { hasText: 'post.created' });
  await delivery.waitFor();
  t.match(await delivery.textContent(), /2 attempts/, 'the delivery took two attempts');
  t.match(await delivery.locator('.attempts').textContent(), /#2 .*succeeded, HTTP 200.*#1 .*retry, HTTP 500/s, 'each attempt with its outcome, newest first');
  await delivery.getByRole('button', { name: 'Retry' }).click();
  await receiver.received(3);
  t.pass('retry delivers again');
  await hook.getByRole('button', { name: 'Rotate secret' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
  await page.getByText('New signing secret').waitFor();
  const rotated = (await page.locator('code.secret').textContent())!;
  t.ok(rotated.startsWith('whsec_') && rotated !== secret, 'a new secret is shown');
  await shoot(t, b, 'webhooks');

  // Settings.
  await nav.getByRole('link', { name: 'Settings' }).click();
  await page.getByLabel('Name').fill('Heron Weekly');
  await page.getByLabel('Posts per page').fill('7');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Settings saved.').waitFor();
  const site = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site;
  t.match(site, { name: 'Heron Weekly', postsPerPage: 7 }, 'the settings are saved');
  await page.getByLabel('Handle').fill('Not a handle!');
  await page.getByRole('button', { name: 'Save settings' }).click();
  t.ok((await page.getByRole('alert').textContent())!.length > 0, 'a refused change shows the API’s message');
  await shoot(t, b, 'settings');

  // A batch for the future stays pending; one of its tasks is cancelled.
  await nav.getByRole('link', { name: 'Batches' }).click();
  await page.getByLabel('Topics').fill('Winter herons\nSpring herons');
  await page.getByLabel('Start').fill('2099-01-01T09:00');
  await page.getByLabel('End').fill('2099-01-31T09:00');
  await page.getByRole('button', { name: 'Schedule' }).click();
  const progress = page.locator('section[aria-labelledby="progress-heading"]');
  await progress.getByText('0 of 2 done').waitFor();
  const winter = progress.locator('li', { hasText: 'Winter herons' });
  t.match(await winter.textContent(), /Pending.*due .*2099/, 'the task waits for its date');
  await winter.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel task' }).click();
  await progress.locator('li[data-status="cancelled"]', { hasText: 'Winter herons' }).waitFor();
  t.equal(await progress.locator('li[data-status="pending"]').count(), 1, 'the other task still waits');
  t.equal(await page.getByRole('progressbar').getAttribute('aria-valuenow'), '1', 'a cancelled task counts as done');

  // Their own account: a new password, which then signs in.
  await page.getByRole('link', { name: email }).click();
  await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
  await page.getByLabel('Current password').fill('wrong password here');
  await page.getByLabel('New password', { exact: true }).fill('a brand new password');
  await page.getByLabel('Repeat new password').fill('a brand new password');
  await page.getByRole('button', { name: 'Change password' }).click();
  t.ok((await page.getByRole('alert').textContent())!.length > 0, 'a wrong current password is refused');
  await page.getByLabel('Current password').fill(PASSWORD);
  await page.getByLabel('New password', { exact: true }).fill('a brand new password');
  await page.getByLabel('Repeat new password').fill('a brand new password');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByText('Password changed.', { exact: false }).waitFor();
  await shoot(t, b, 'account');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${origin}/admin/sign-in`);
  await signIn(b, email, 'a brand new password');
  await page.waitForURL(`${origin}/admin/posts`);
  t.pass('the new password signs in');

  t.same(b.problems.filter((p) => !/status of (400|401|403)/.test(p)), [], 'no console errors, page errors or failed requests');
  t.same(b.dialogs, [], 'no JavaScript dialogs');
  t.same(b.requests.filter((url) => !url.startsWith(`${origin}/`)), [], 'every request goes to the service itself');
});
