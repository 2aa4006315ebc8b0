import t from 'tap';
import { buildTestApp } from '../helpers/app.js';
import { invite, noChromium, openBrowser, setUp, type Browser } from '../helpers/browser.js';
import { linkIn, startMailbox } from '../helpers/smtp.js';

/** A mailed link opened on the address the browser uses (the mail's host is PUBLIC_BASE_URL's). */
const onThisServer = (b: Browser, link: string) => {
  const url = new URL(link);
  return `${b.origin}${url.pathname}${url.hash}`;
};

/**
 * Mail that reaches the person, in Chromium: an owner invites a new email on the Users screen,
 * the invitation arrives at a real SMTP server, its link opens the accept screen where the
 * person chooses a password and is signed in; later "Forgot password?" mails a reset link that
 * sets a new one, and the person signs in with it.
 */
t.test('an invitation and a reset link, mailed and followed in the browser', { skip: noChromium }, async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'no-reply@example.com' });
  const b = await openBrowser(t, ctx);
  const { page, origin } = b;
  await setUp(b, await invite(t, ctx, 'owner@example.com'));

  // The owner invites a newcomer as an editor; nothing in the page is a link to use.
  await page.getByRole('link', { name: 'Users' }).first().click();
  await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
  await page.getByLabel('Email').fill('newcomer@example.com');
  await page.getByLabel('Role', { exact: true }).selectOption('editor');
  await page.getByRole('button', { name: 'Invite' }).click();
  await page.getByText('newcomer@example.com').first().waitFor();
  const invitation = await mailbox.to('newcomer@example.com');
  t.match(invitation.parsed.subject, /invit/i, 'an invitation mail');
  const acceptLink = linkIn(invitation, 'http');
  t.match(acceptLink, /\/admin\/accept#token=/);
  t.notMatch(await page.content(), /#token=/, 'the owner never sees the link');

  // The newcomer, signed out, follows the link: a password of their own, and they are in.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${origin}/admin/sign-in`);
  await page.goto(onThisServer(b, acceptLink));
  await page.getByRole('heading', { level: 1, name: 'Accept the invitation' }).waitFor();
  t.notMatch(page.url(), /token/, 'the token leaves the address bar');
  await page.getByLabel('Password').fill('the newcomer chose this');
  await page.getByRole('button', { name: 'Accept the invitation' }).click();
  await page.waitForURL(`${origin}/admin/posts`);
  await page.getByRole('heading', { level: 1, name: 'Posts' }).waitFor();
  const [membership] = await ctx.rows<{ role: string }>('select m.role from memberships m join users u on u.id = m.user_id where u.email = ?', 'newcomer@example.com');
  t.equal(membership?.role, 'editor', 'a member of the site with the role given');

  // Forgot password: the sign-in screen's link, an email, a mailed reset link, a new password.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${origin}/admin/sign-in`);
  await page.getByRole('link', { name: 'Forgot password?' }).click();
  await page.getByLabel('Email').fill('newcomer@example.com');
  await page.getByRole('button', { name: 'Send me a link' }).click();
  await page.getByRole('status').or(page.locator('.message')).filter({ hasText: /./ }).first().waitFor();
  const reset = await mailbox.to('newcomer@example.com', (mail) => (mail.parsed.text ?? '').includes('/admin/setup#token='));
  await page.goto(onThisServer(b, linkIn(reset, 'http')));
  await page.getByRole('heading', { level: 1, name: 'Choose your password' }).waitFor();
  await page.getByLabel('Password', { exact: true }).fill('a newer password still');
  await page.getByLabel('Repeat password').fill('a newer password still');
  await page.getByRole('button', { name: 'Set password' }).click();
  await page.waitForURL(`${origin}/admin/posts`);

  // Signed out, the new password signs in; the old one does not.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${origin}/admin/sign-in`);
  await page.getByLabel('Email').fill('newcomer@example.com');
  await page.getByLabel('Password').fill('the newcomer chose this');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: /./ }).first().waitFor();
  t.equal(page.url(), `${origin}/admin/sign-in`, 'the old password is refused');
  await page.getByLabel('Password').fill('a newer password still');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${origin}/admin/posts`);
  t.pass('signed in with the password the reset link set');

  t.same(b.problems.filter((problem) => !/status of 40[01]/.test(problem)), [], 'no console errors or failed requests');
});
