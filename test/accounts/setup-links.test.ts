import t from 'tap';
import { buildTestApp, onPostgres, type TestApp } from '../helpers/app.js';
import { addUser, asUser, sessionCookie, signIn } from '../helpers/accounts.js';

const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, '');

const setup = (ctx: TestApp, token: string, password: string) => ctx.call({ method: 'POST', url: '/api/v1/auth/setup', key: null, payload: { token, password } });

t.test('a setup link works once and signs the new user in', async (t) => {
  const ctx = await buildTestApp(t, { PUBLIC_BASE_URL: 'https://blog.example.com' });
  const added = (await ctx.call({ method: 'POST', url: '/api/v1/users', payload: { email: 'new@example.com', role: 'editor' } })).json().data;
  t.match(added.setupUrl, /^https:\/\/blog\.example\.com\/admin\/setup#token=/, 'the token is in the fragment, under PUBLIC_BASE_URL');
  const token = tokenOf(added.setupUrl);
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
  const added = (await ctx.call({ method: 'POST', url: '/api/v1/users', payload: { email: 'late@example.com', role: 'editor' } })).json().data;
  const [row] = await ctx.rows<{ c: number | Date; e: number | Date }>('select created_at as c, expires_at as e from account_tokens');
  t.equal(new Date(row!.e).getTime() - new Date(row!.c).getTime(), 24 * 3_600_000, 'a link lasts 24 hours');
  // A day later (the row moved back, as the clock cannot be).
  const past = Date.now() - 1000;
  await ctx.rows('update account_tokens set expires_at = ? returning token_hash', onPostgres ? new Date(past) : past);
  const res = await setup(ctx, tokenOf(added.setupUrl), 'a good long password');
  t.equal(res.statusCode, 400);
  t.equal(res.json().error.code, 'INVALID_TOKEN');
});

t.test('a reset link replaces the password and ends every session; a newer link replaces an older one', async (t) => {
  const ctx = await buildTestApp(t);
  const user = await addUser(ctx, 'forgetful@example.com', 'editor');
  const session = await signIn(ctx, 'forgetful@example.com');
  const first = tokenOf((await ctx.call({ method: 'POST', url: `/api/v1/users/${user.id}/reset` })).json().data.setupUrl);
  const second = tokenOf((await ctx.call({ method: 'POST', url: `/api/v1/users/${user.id}/reset` })).json().data.setupUrl);
  t.equal((await setup(ctx, first, 'a new long password')).json().error.code, 'INVALID_TOKEN', 'the older link stopped working');
  const res = await setup(ctx, second, 'a new long password');
  t.equal(res.statusCode, 200, res.body);
  t.equal((await asUser(ctx, session, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 401, 'the old session ended');
  await t.rejects(signIn(ctx, 'forgetful@example.com'), 'the old password is gone');
  await signIn(ctx, 'forgetful@example.com', 'a new long password');
});
