import t from 'tap';
import { buildTestApp, onPostgres, waitFor, type TestApp } from '../helpers/app.js';
import { addUser, asUser, PASSWORD, sessionCookie, signIn } from '../helpers/accounts.js';
import { linkIn, startMailbox, type Received } from '../helpers/smtp.js';

// The takeovers a review found, replayed through the API: each fails, the victim's password,
// sessions and memberships are untouched, and the answers tell the attacker nothing. Then the
// ways people do get in: invitations they accept, and reset links mailed to them.

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, '');

/** What a victim has that a takeover would change: password hash, sessions, memberships. */
async function victimState(ctx: TestApp, email: string) {
  const [user] = await ctx.rows<{ id: string; password_hash: string }>('select id, password_hash from users where email = ?', email);
  const sessions = await ctx.rows('select id, site_id from sessions where user_id = ? order by id', user!.id);
  const memberships = await ctx.rows('select site_id, role from memberships where user_id = ? order by site_id', user!.id);
  return { hash: user!.password_hash, sessions, memberships };
}

/** An invitation answer with what differs between any two invitations (ids, times, the email, the token) blanked. */
function shapeOf(data: Json, email: string) {
  const text = JSON.stringify(data).replaceAll(email, '<email>');
  return JSON.parse(text.replace(/#token=[A-Za-z0-9_-]+/g, '#token=<token>').replace(/"id":"[0-9a-f-]{36}"/g, '"id":"<id>"').replace(/"\d{4}-\d{2}-\d{2}T[\d:.]+Z"/g, '"<time>"'));
}

const accept = (ctx: TestApp, token: string, password?: string, cookie?: string) =>
  cookie
    ? asUser(ctx, cookie, { method: 'POST', url: '/api/v1/auth/accept', payload: { token, ...(password ? { password } : {}) } })
    : ctx.call({ method: 'POST', url: '/api/v1/auth/accept', key: null, payload: { token, ...(password ? { password } : {}) } });

t.test("takeover 1: site A adds B's owner by email and asks for a reset link: no membership, no link, nothing changes", async (t) => {
  const ctx = await buildTestApp(t);
  const b = await ctx.addSite('Site B');
  await addUser(ctx, 'owner-b@example.com', 'owner', b.site.id);
  const victimSession = await signIn(ctx, 'owner-b@example.com');
  const before = await victimState(ctx, 'owner-b@example.com');
  const victimId = (await ctx.rows<{ id: string }>('select id from users where email = ?', 'owner-b@example.com'))[0]!.id;

  // A (its API key) invites B's owner, and an email nobody uses: the answers are alike.
  const known = await ctx.call({ method: 'POST', url: '/api/v1/users', payload: { email: 'owner-b@example.com', role: 'editor' } });
  const unknown = await ctx.call({ method: 'POST', url: '/api/v1/users', payload: { email: 'nobody@example.com', role: 'editor' } });
  t.equal(known.statusCode, 201, known.body);
  t.equal(unknown.statusCode, unknown.statusCode);
  t.same(shapeOf(known.json().data, 'owner-b@example.com'), shapeOf(unknown.json().data, 'nobody@example.com'), 'the same answer for an email with an account elsewhere and one with none');
  t.notMatch(known.body, /"active"|"created"|User created|User added/i);

  // No route hands A a reset link, for B's owner or anyone.
  t.equal((await ctx.call({ method: 'POST', url: `/api/v1/users/${victimId}/reset` })).statusCode, 404);
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/users/${victimId}` })).statusCode, 404, 'not a member of A: nothing to remove');
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/users/${victimId}`, payload: { role: 'owner' } })).statusCode, 404);
  // The invitation link A holds (no mail here) cannot set a password: it asks for the account's own.
  const token = tokenOf(known.json().data.inviteUrl);
  const tried = await accept(ctx, token, 'attacker chosen password');
  t.equal(tried.statusCode, 401);
  t.equal(tried.json().error.code, 'UNAUTHORIZED');
  t.equal(sessionCookie(tried), null);
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/auth/setup', key: null, payload: { token, password: 'attacker chosen password' } })).json().error.code, 'INVALID_TOKEN', 'nor is it a setup link');

  t.same(await victimState(ctx, 'owner-b@example.com'), before, "the victim's password, sessions and memberships are untouched");
  t.equal((await asUser(ctx, victimSession, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 200, 'B owner is still signed in');
  await signIn(ctx, 'owner-b@example.com');
});

t.test('takeover 2: an account A made through its own link cannot follow the email into site B', async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'no-reply@example.com' });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const b = await ctx.addSite('Site B');
  // A invites an email nobody uses yet; A (holding the mailbox in this replay) accepts with its own password.
  await ctx.call({ method: 'POST', url: '/api/v1/users', payload: { email: 'shared@example.com', role: 'editor' } });
  const invitationA = await mailbox.to('shared@example.com');
  const joinedA = await accept(ctx, tokenOf(linkIn(invitationA, 'http')), 'password A chose');
  t.equal(joinedA.statusCode, 200, joinedA.body);
  const attacker = sessionCookie(joinedA)!;
  t.same(joinedA.json().data.session.sites.map((s: Json) => s.id), [ctx.site.id], 'the new account belongs to A alone');

  // B invites the same email: nothing is issued to anyone but the mailbox, and A's session stays out of B.
  const invitedB = await ctx.call({ method: 'POST', url: '/api/v1/users', key: b.key, payload: { email: 'shared@example.com', role: 'owner' } });
  t.equal(invitedB.statusCode, 201);
  t.equal(invitedB.json().data.inviteUrl, null, 'mailed, not answered');
  t.equal((await asUser(ctx, attacker, { method: 'PUT', url: '/api/v1/auth/session/site', payload: { siteId: b.site.id } })).statusCode, 403);
  t.same((await ctx.rows('select site_id from memberships m join users u on u.id = m.user_id where u.email = ?', 'shared@example.com')).map((r: Json) => r.site_id), [ctx.site.id]);
  // The invitation went to the mailbox; its link joins only with that account's password (A's, in this replay: the person at the mailbox resets it first).
  const mailB = await mailbox.to('shared@example.com', (mail) => mail.parsed.subject === 'You are invited to Site B');
  t.match(linkIn(mailB, 'http'), /\/admin\/accept#token=/);
});

t.test('takeover 3: with mail, the answers and the mails are the same for an email with an account and one without', async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'no-reply@example.com' });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const b = await ctx.addSite('Site B');
  await addUser(ctx, 'elsewhere@example.com', 'owner', b.site.id);
  const known = await ctx.call({ method: 'POST', url: '/api/v1/users', payload: { email: 'elsewhere@example.com', role: 'editor' } });
  const unknown = await ctx.call({ method: 'POST', url: '/api/v1/users', payload: { email: 'fresh@example.com', role: 'editor' } });
  t.equal(known.statusCode, 201);
  t.equal(unknown.statusCode, 201);
  t.same(shapeOf(known.json().data, 'elsewhere@example.com'), shapeOf(unknown.json().data, 'fresh@example.com'));
  t.equal(known.json().data.mailed, true);
  const mails = [await mailbox.to('elsewhere@example.com'), await mailbox.to('fresh@example.com')];
  const body = (mail: Received) => (mail.parsed.text ?? '').replace(/#token=[A-Za-z0-9_-]+/g, '');
  t.equal(body(mails[0]!), body(mails[1]!), 'the mails say the same');
  const members = (await ctx.call({ method: 'GET', url: '/api/v1/users' })).json().data.users.map((u: Json) => u.email);
  t.notOk(members.includes('elsewhere@example.com') || members.includes('fresh@example.com'), 'nobody joined by being invited');
});

t.test("removing a user from site A never touches their other sites, password or sessions there", async (t) => {
  const ctx = await buildTestApp(t);
  const b = await ctx.addSite('Site B');
  await addUser(ctx, 'both@example.com', 'editor');
  await ctx.app.accounts.addMember(b.site.id, 'both@example.com', 'owner');
  const onA = await signIn(ctx, 'both@example.com');
  const onB = await signIn(ctx, 'both@example.com');
  t.equal((await asUser(ctx, onB, { method: 'PUT', url: '/api/v1/auth/session/site', payload: { siteId: b.site.id } })).statusCode, 200);
  const before = await victimState(ctx, 'both@example.com');
  const id = (await ctx.rows<{ id: string }>('select id from users where email = ?', 'both@example.com'))[0]!.id;
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/users/${id}` })).statusCode, 200);
  const after = await victimState(ctx, 'both@example.com');
  t.equal(after.hash, before.hash);
  t.same(after.memberships.map((m: Json) => m.site_id), [b.site.id]);
  t.equal((await asUser(ctx, onA, { method: 'GET', url: '/api/v1/posts' })).statusCode, 401, 'the session on A ended');
  t.equal((await asUser(ctx, onB, { method: 'GET', url: '/api/v1/posts' })).statusCode, 200, 'the session on B goes on');
});

t.test('an invitation joins an existing account only with its own password or its own session; a new email gets an account on that one site', async (t) => {
  const ctx = await buildTestApp(t);
  const b = await ctx.addSite('Site B');
  await addUser(ctx, 'member-b@example.com', 'editor', b.site.id);
  const invite = async (email: string) => tokenOf((await ctx.call({ method: 'POST', url: '/api/v1/users', payload: { email, role: 'editor' } })).json().data.inviteUrl);

  // Signed in as someone else: refused, and the invitation stays usable.
  await addUser(ctx, 'other@example.com', 'editor', b.site.id);
  const other = await signIn(ctx, 'other@example.com');
  const token = await invite('member-b@example.com');
  t.equal((await accept(ctx, token, undefined, other)).statusCode, 403);
  // Signed in as the invited person: joined, the session moves to the site.
  const own = await signIn(ctx, 'member-b@example.com');
  const joined = await accept(ctx, token, undefined, own);
  t.equal(joined.statusCode, 200, joined.body);
  t.equal(joined.json().data.session.site.id, ctx.site.id);
  t.equal((await accept(ctx, token, undefined, own)).json().error.code, 'INVALID_TOKEN', 'used once');

  // Not signed in, with the account's own password: joined and signed in.
  await addUser(ctx, 'second@example.com', 'editor', b.site.id);
  const second = await accept(ctx, await invite('second@example.com'), PASSWORD);
  t.equal(second.statusCode, 200, second.body);
  t.ok(sessionCookie(second));

  // A new email: the password chosen makes the account, a member of this site only.
  const fresh = await accept(ctx, await invite('brand.new@example.com'), 'short');
  t.equal(fresh.statusCode, 400, 'a new password is checked');
  const made = await accept(ctx, await invite('brand.new@example.com'), 'a new long password');
  t.equal(made.statusCode, 200, made.body);
  t.same(made.json().data.session.sites.map((s: Json) => s.id), [ctx.site.id]);
  await signIn(ctx, 'brand.new@example.com', 'a new long password');
  t.equal((await accept(ctx, 'made-up', 'whatever password')).json().error.code, 'INVALID_TOKEN');
});

t.test('invitations expire after 7 days, can be revoked and sent again, and list as pending', async (t) => {
  const ctx = await buildTestApp(t);
  const sent = (await ctx.call({ method: 'POST', url: '/api/v1/users', payload: { email: 'later@example.com', role: 'owner' } })).json().data;
  t.equal(new Date(sent.invitation.expiresAt).getTime() - new Date(sent.invitation.sentAt).getTime(), 7 * 24 * 3_600_000);
  const listed = (await ctx.call({ method: 'GET', url: '/api/v1/users' })).json().data.invitations;
  t.same(listed.map((i: Json) => [i.email, i.role, i.status]), [['later@example.com', 'owner', 'pending']]);

  // Sent again: a new link, the old one dead.
  const again = await ctx.call({ method: 'POST', url: `/api/v1/users/invitations/${sent.invitation.id}/resend` });
  t.equal(again.statusCode, 200, again.body);
  t.equal((await accept(ctx, tokenOf(sent.inviteUrl), 'a long new password')).json().error.code, 'INVALID_TOKEN');
  const fresh = tokenOf(again.json().data.inviteUrl);

  // Expired (the row moved back, as the clock cannot be).
  const past = Date.now() - 1000;
  await ctx.rows('update invitations set expires_at = ? returning id', onPostgres ? new Date(past) : past);
  t.equal((await accept(ctx, fresh, 'a long new password')).json().error.code, 'INVALID_TOKEN');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/users' })).json().data.invitations[0].status, 'expired');

  // Revoked: gone, and its link dead. Another site cannot see or revoke it.
  const renewed = (await ctx.call({ method: 'POST', url: `/api/v1/users/invitations/${sent.invitation.id}/resend` })).json().data;
  const b = await ctx.addSite('Site B');
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/users/invitations/${sent.invitation.id}`, key: b.key })).statusCode, 404);
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/users/invitations/${sent.invitation.id}` })).statusCode, 200);
  t.equal((await accept(ctx, tokenOf(renewed.inviteUrl), 'a long new password')).json().error.code, 'INVALID_TOKEN');
  t.same((await ctx.call({ method: 'GET', url: '/api/v1/users' })).json().data.invitations, []);
});

t.test('forgot password: 202 for any email; the link goes only to the mailbox, and sets the password', async (t) => {
  const mailbox = await startMailbox(t);
  const ctx = await buildTestApp(t, { SMTP_URL: mailbox.url, MAIL_FROM: 'no-reply@example.com' });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  await addUser(ctx, 'forgetful@example.com', 'editor');
  const old = await signIn(ctx, 'forgetful@example.com');
  const forgot = (email: string) => ctx.call({ method: 'POST', url: '/api/v1/auth/forgot', key: null, payload: { email } });
  const known = await forgot('Forgetful@example.com');
  const unknown = await forgot('stranger@example.com');
  t.equal(known.statusCode, 202);
  t.equal(unknown.statusCode, 202);
  t.same(known.json(), unknown.json(), 'the same answer');
  t.notMatch(known.body, /token/);
  const mail = await mailbox.to('forgetful@example.com');
  await ctx.app.mailLoop.whenIdle();
  await waitFor(async () => (await ctx.count("select count(*) as n from jobs where kind = 'mail-send' and status = 'pending'")) === 0, 'no mail pending');
  t.notOk(mailbox.received.some((m) => m.rcptTo.includes('stranger@example.com')), 'nothing for an unknown email');
  const link = linkIn(mail, 'http');
  t.match(link, /\/admin\/setup#token=/);
  const set = await ctx.call({ method: 'POST', url: '/api/v1/auth/setup', key: null, payload: { token: tokenOf(link), password: 'my brand new password' } });
  t.equal(set.statusCode, 200, set.body);
  t.equal((await asUser(ctx, old, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 401, 'other sessions ended');
  await signIn(ctx, 'forgetful@example.com', 'my brand new password');
  // A mailbox cannot be flooded: past 3 an hour, nothing more is sent (the answer is the same).
  for (let i = 0; i < 4; i++) t.equal((await forgot('forgetful@example.com')).statusCode, 202);
  await new Promise((resolve) => setTimeout(resolve, 200));
  await ctx.app.mailLoop.whenIdle();
  t.ok(mailbox.received.filter((m) => m.rcptTo.includes('forgetful@example.com')).length <= 3);
});

t.test('without mail: forgot says to ask the operator, for any email, and queues nothing', async (t) => {
  const ctx = await buildTestApp(t);
  await addUser(ctx, 'someone@example.com', 'editor');
  const links = await ctx.count('select count(*) as n from account_tokens');
  const res = await ctx.call({ method: 'POST', url: '/api/v1/auth/forgot', key: null, payload: { email: 'someone@example.com' } });
  t.equal(res.statusCode, 202);
  t.match(res.json().data.message, /blog-admin user reset-password/);
  t.same(res.json(), (await ctx.call({ method: 'POST', url: '/api/v1/auth/forgot', key: null, payload: { email: 'nobody@example.com' } })).json());
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(await ctx.count('select count(*) as n from account_tokens'), links, 'no link made');
});
