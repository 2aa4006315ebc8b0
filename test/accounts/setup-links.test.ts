import t from 'tap';
import { buildTestApp, onPostgres, type TestApp } from '../helpers/app.js';
import { addUser, asUser, sessionCookie, signIn } from '../helpers/accounts.js';

const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, '');

const setup = (ctx: TestApp, token: string, password: string) => ctx.call({ method: 'POST', url: '/api/v1/auth/setup', key: null, payload: { token, password } });

t.test('a setup link works once and signs the new user in', async (t) => {
  const ctx = await buildTestApp(t, { PUBLIC_BASE_URL: 'https://blog.example.com' });
  // The operator's CLI makes a user with a setup link (owners invite instead: see invitations.test.ts).
  const added = await ctx.app.accounts.addMember(ctx.site.id, 'new@example.com', 'editor');
  const setupUrl = `https://blog.example.com/admin/setup#token=${added.setupToken}`;
  const token = tokenOf(setupUrl);
  t.equal(await ctx.count('select count(*) as n from account_tokens where token_hash = ?', token), 0, 'only its hash is stored');

  const short = await setup(ctx, token, 'short');
  t.equal(short.statusCode, 400);
  t.equal(short.json().error.code, 'VALIDATION_ERROR');

  const used = await setup(ctx, token, 'a good long password');
  t.equal(used.statusCode, 200, used.body);
  t.ok(sessionCookie(used), 'signed in');
  t.equal(used.json().data.session.user.email, 'new@example.com');
  t.equal(used.json().data.session.role, 'editor');

  const again = await setup(ctx, token, 'another long password');
  t.equal(again.statusCode, 400);
  t.equal(again.json().error.code, 'INVALID_TOKEN');
  t.equal((await setup(ctx, 'made-up-token', 'another long password')).json().error.code, 'INVALID_TOKEN');
  await signIn(ctx, 'new@example.com', 'a good long password');
});

t.test('an expired link is refused', async (t) => {
  const ctx = await buildTestApp(t);
  const added = await ctx.app.accounts.addMember(ctx.site.id, 'late@example.com', 'editor');
  const [row] = await ctx.rows<{ c: number | Date; e: number | Date }>('select created_at as c, expires_at as e from account_tokens');
  t.equal(new Date(row!.e).getTime() - new Date(row!.c).getTime(), 24 * 3_600_000, 'a link lasts 24 hours');
  // A day later (the row moved back, as the clock cannot be).
  const past = Date.now() - 1000;
  await ctx.rows('update account_tokens set expires_at = ? returning token_hash', onPostgres ? new Date(past) : past);
  const res = await setup(ctx, added.setupToken!, 'a good long password');
  t.equal(res.statusCode, 400);
  t.equal(res.json().error.code, 'INVALID_TOKEN');
});

t.test('a reset link replaces the password and ends every session; a newer link replaces an older one', async (t) => {
  const ctx = await buildTestApp(t);
  const user = await addUser(ctx, 'forgetful@example.com', 'editor');
  const session = await signIn(ctx, 'forgetful@example.com');
  t.ok(user.id);
  // As the operator's CLI prints them (blog-admin user reset-password).
  const first = await ctx.app.accounts.resetLinkByEmail('forgetful@example.com');
  const second = await ctx.app.accounts.resetLinkByEmail('forgetful@example.com');
  t.equal((await setup(ctx, first, 'a new long password')).json().error.code, 'INVALID_TOKEN', 'the older link stopped working');
  const res = await setup(ctx, second, 'a new long password');
  t.equal(res.statusCode, 200, res.body);
  t.equal((await asUser(ctx, session, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 401, 'the old session ended');
  await t.rejects(signIn(ctx, 'forgetful@example.com'), 'the old password is gone');
  await signIn(ctx, 'forgetful@example.com', 'a new long password');
});
