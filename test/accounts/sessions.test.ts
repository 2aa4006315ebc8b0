import t from 'tap';
import { buildTestApp, onPostgres } from '../helpers/app.js';
import { OWN_ORIGIN, PASSWORD, addUser, asUser, sessionCookie, signIn } from '../helpers/accounts.js';

t.test('sign in, the session on the API, sign out', async (t) => {
  const ctx = await buildTestApp(t);
  const owner = await addUser(ctx, 'Owner@Example.com', 'owner');
  t.equal(owner.email, 'owner@example.com', 'emails are folded to lower case');

  const res = await ctx.call({ method: 'POST', url: '/api/v1/auth/sign-in', key: null, payload: { email: ' OWNER@example.com ', password: PASSWORD } });
  t.equal(res.statusCode, 200, res.body);
  const cookie = res.cookies.find((c) => c.name === 'blog_session')!;
  t.ok(cookie, 'a session cookie is set');
  t.equal(cookie.httpOnly, true);
  t.equal(cookie.sameSite, 'Lax');
  t.equal(cookie.path, '/');
  t.notOk(cookie.secure, 'not Secure over plain HTTP');
  t.ok(cookie.maxAge! > 29 * 86400 && cookie.maxAge! <= 30 * 86400, 'kept for the absolute lifetime');
  const session = res.json().data.session;
  t.same(session.user, { id: owner.id, email: 'owner@example.com', displayName: null });
  t.same(session.site, { id: ctx.site.id, name: ctx.site.name, handle: session.site.handle });
  t.equal(session.role, 'owner');
  t.equal(session.sites.length, 1);

  // Only the hash of the token is stored.
  t.equal(await ctx.count('select count(*) as n from sessions where token_hash = ?', cookie.value), 0);
  t.equal(await ctx.count('select count(*) as n from sessions'), 1);

  const me = await asUser(ctx, cookie.value, { method: 'GET', url: '/api/v1/auth/session' });
  t.equal(me.statusCode, 200);
  t.same(me.json().data.session, session);

  // The REST API takes the cookie as it takes a key.
  const created = await asUser(ctx, cookie.value, { method: 'POST', url: '/api/v1/posts', payload: { title: 'By a person' } });
  t.equal(created.statusCode, 201, created.body);
  const listed = await asUser(ctx, cookie.value, { method: 'GET', url: '/api/v1/posts' });
  t.equal(listed.json().data.posts[0].title, 'By a person');

  const out = await asUser(ctx, cookie.value, { method: 'POST', url: '/api/v1/auth/sign-out' });
  t.equal(out.statusCode, 200, out.body);
  const cleared = out.cookies.find((c) => c.name === 'blog_session')!;
  t.equal(cleared.value, '', 'the cookie is cleared');
  t.equal(await ctx.count('select count(*) as n from sessions'), 0, 'the session is gone from the server');
  // The old cookie, replayed, no longer works.
  t.equal((await asUser(ctx, cookie.value, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 401);
  t.equal((await asUser(ctx, cookie.value, { method: 'GET', url: '/api/v1/posts' })).statusCode, 401);
  const again = await asUser(ctx, cookie.value, { method: 'POST', url: '/api/v1/auth/sign-out' });
  t.equal(again.statusCode, 200, 'signing out of an ended session still clears the cookie');
  t.equal(sessionCookie(again), '');
});

t.test('a wrong password and an unknown email answer the same', async (t) => {
  const ctx = await buildTestApp(t);
  await addUser(ctx, 'editor@example.com', 'editor');
  await ctx.app.accounts.addMember(ctx.site.id, 'pending@example.com', 'editor');
  const attempt = (email: string, password: string) => ctx.call({ method: 'POST', url: '/api/v1/auth/sign-in', key: null, payload: { email, password } });
  const wrong = await attempt('editor@example.com', 'not the password');
  const unknown = await attempt('nobody@example.com', 'not the password');
  const pending = await attempt('pending@example.com', '');
  for (const res of [wrong, unknown, pending]) {
    t.equal(res.statusCode, 401);
    t.same(res.json().error.code, 'UNAUTHORIZED');
    t.equal(res.json().error.message, 'Email or password is wrong');
    t.equal(sessionCookie(res), null);
  }
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/auth/session', key: null })).statusCode, 401, 'no session without a cookie');
  t.equal((await asUser(ctx, 'made-up', { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 401, 'nor with a made-up one');
});

t.test('Secure cookie over HTTPS: behind a trusted proxy only', async (t) => {
  const trusted = await buildTestApp(t, { TRUST_PROXY: 'true' });
  await addUser(trusted, 'a@example.com', 'owner');
  const viaProxy = await trusted.call({ method: 'POST', url: '/api/v1/auth/sign-in', key: null, headers: { 'x-forwarded-proto': 'https' }, payload: { email: 'a@example.com', password: PASSWORD } });
  t.equal(viaProxy.cookies.find((c) => c.name === 'blog_session')!.secure, true);

  const direct = await buildTestApp(t);
  await addUser(direct, 'a@example.com', 'owner');
  const spoofed = await direct.call({ method: 'POST', url: '/api/v1/auth/sign-in', key: null, headers: { 'x-forwarded-proto': 'https' }, payload: { email: 'a@example.com', password: PASSWORD } });
  t.notOk(spoofed.cookies.find((c) => c.name === 'blog_session')!.secure, 'X-Forwarded-Proto is ignored without TRUST_PROXY');
});

t.test('CSRF: state-changing cookie requests only from the own origin', async (t) => {
  const ctx = await buildTestApp(t);
  await addUser(ctx, 'owner@example.com', 'owner');
  const cookie = await signIn(ctx, 'owner@example.com');
  const create = (origin: string | null, headers: Record<string, string> = {}) =>
    asUser(ctx, cookie, { method: 'POST', url: '/api/v1/posts', payload: { title: 'x' }, origin, headers });

  const foreign = await create('https://evil.example');
  t.equal(foreign.statusCode, 403);
  t.equal(foreign.json().error.code, 'FORBIDDEN');
  t.equal((await create(null, { referer: 'https://evil.example/page' })).statusCode, 403, 'a foreign Referer without Origin');
  t.equal((await create(null)).statusCode, 403, 'neither Origin nor Referer');
  t.equal((await create('null')).statusCode, 403, 'an opaque origin');
  t.equal((await create('http://localhost:8080')).statusCode, 403, 'another port is another origin');
  t.equal((await create(OWN_ORIGIN)).statusCode, 201, 'the own origin');
  t.equal((await create(null, { referer: `${OWN_ORIGIN}/admin/posts` })).statusCode, 201, 'the own origin by Referer');
  t.equal((await create('http://localhost:80')).statusCode, 201, 'the default port written out');
  // Reads are not state-changing.
  t.equal((await asUser(ctx, cookie, { method: 'GET', url: '/api/v1/posts', origin: 'https://evil.example' })).statusCode, 200);
  // Sign-out is state-changing too.
  t.equal((await asUser(ctx, cookie, { method: 'POST', url: '/api/v1/auth/sign-out', origin: 'https://evil.example' })).statusCode, 403);

  // Bearer requests are unaffected, with or without a cookie beside the key.
  const bearer = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'y' }, headers: { origin: 'https://evil.example' } });
  t.equal(bearer.statusCode, 201, bearer.body);
  const both = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'z' }, headers: { origin: 'https://evil.example', cookie: `blog_session=${cookie}` } });
  t.equal(both.statusCode, 201, 'a request with both uses the key');

  // With PUBLIC_BASE_URL, that origin is the own one, whatever the Host.
  const behind = await buildTestApp(t, { PUBLIC_BASE_URL: 'https://blog.example.com/' });
  await addUser(behind, 'owner@example.com', 'owner');
  const c2 = await signIn(behind, 'owner@example.com');
  t.equal((await asUser(behind, c2, { method: 'POST', url: '/api/v1/posts', payload: { title: 'x' } })).statusCode, 403, 'the Host is not the public origin');
  t.equal((await asUser(behind, c2, { method: 'POST', url: '/api/v1/posts', payload: { title: 'x' }, origin: 'https://blog.example.com' })).statusCode, 201);
  // A foreign page cannot sign a browser in either.
  const loginCsrf = await behind.call({ method: 'POST', url: '/api/v1/auth/sign-in', key: null, headers: { origin: 'https://evil.example' }, payload: { email: 'owner@example.com', password: PASSWORD } });
  t.equal(loginCsrf.statusCode, 403);
});

t.test('switching site; removal and password change end sessions', async (t) => {
  const ctx = await buildTestApp(t);
  const other = await ctx.addSite('Second Blog');
  const user = await addUser(ctx, 'both@example.com', 'editor');
  await ctx.app.accounts.addMember(other.site.id, 'both@example.com', 'owner');
  const cookie = await signIn(ctx, 'both@example.com');
  let session = (await asUser(ctx, cookie, { method: 'GET', url: '/api/v1/auth/session' })).json().data.session;
  t.equal(session.site.id, ctx.site.id);
  t.equal(session.role, 'editor');
  t.same(session.sites.map((s: { id: string; role: string }) => [s.id, s.role]), [[ctx.site.id, 'editor'], [other.site.id, 'owner']]);

  const switched = await asUser(ctx, cookie, { method: 'PUT', url: '/api/v1/auth/session/site', payload: { siteId: other.site.id } });
  t.equal(switched.statusCode, 200, switched.body);
  session = switched.json().data.session;
  t.equal(session.site.id, other.site.id);
  t.equal(session.role, 'owner');
  const site = await asUser(ctx, cookie, { method: 'GET', url: '/api/v1/site' });
  t.equal(site.json().data.site.id, other.site.id, 'the API acts on the current site');
  const stranger = await ctx.addSite('Not Mine');
  const refused = await asUser(ctx, cookie, { method: 'PUT', url: '/api/v1/auth/session/site', payload: { siteId: stranger.site.id } });
  t.equal(refused.statusCode, 403);

  // Removed from the site it is on: the session ends.
  const second = await signIn(ctx, 'both@example.com');
  await asUser(ctx, second, { method: 'PUT', url: '/api/v1/auth/session/site', payload: { siteId: ctx.site.id } });
  const removed = await ctx.call({ method: 'DELETE', url: `/api/v1/users/${user.id}` });
  t.equal(removed.statusCode, 200, removed.body);
  t.equal((await asUser(ctx, second, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 401, 'the session on the site left has ended');
  t.equal((await asUser(ctx, cookie, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 200, 'the one on the other site stays');

  // A password change ends the user's other sessions, not this one.
  const third = await signIn(ctx, 'both@example.com');
  const wrong = await asUser(ctx, cookie, { method: 'POST', url: '/api/v1/auth/password', payload: { currentPassword: 'nope nope nope', newPassword: 'a brand new password' } });
  t.equal(wrong.statusCode, 400);
  const short = await asUser(ctx, cookie, { method: 'POST', url: '/api/v1/auth/password', payload: { currentPassword: PASSWORD, newPassword: 'short' } });
  t.equal(short.statusCode, 400);
  const changed = await asUser(ctx, cookie, { method: 'POST', url: '/api/v1/auth/password', payload: { currentPassword: PASSWORD, newPassword: 'a brand new password' } });
  t.equal(changed.statusCode, 200, changed.body);
  t.equal((await asUser(ctx, third, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 401, 'the other session ended');
  t.equal((await asUser(ctx, cookie, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 200, 'this one goes on');
  await t.rejects(signIn(ctx, 'both@example.com'), 'the old password no longer works');
  await signIn(ctx, 'both@example.com', 'a brand new password');
});

t.test('idle and absolute ends, through the API', async (t) => {
  const ctx = await buildTestApp(t);
  await addUser(ctx, 'idle@example.com', 'editor');
  const at = (ms: number) => (onPostgres ? new Date(ms) : ms);
  const idle = await signIn(ctx, 'idle@example.com');
  const old = await signIn(ctx, 'idle@example.com');
  const fresh = await signIn(ctx, 'idle@example.com');
  const hashes = await ctx.rows<{ token_hash: string }>('select token_hash from sessions order by created_at');
  t.equal(hashes.length, 3);
  const [idleHash, oldHash] = [hashes[0]!.token_hash, hashes[1]!.token_hash];
  // Last seen 7 days ago (the default SESSION_IDLE_HOURS), and one past its absolute end.
  await ctx.rows('update sessions set last_seen_at = ? where token_hash = ? returning id', at(Date.now() - 7 * 86_400_000 - 1000), idleHash);
  await ctx.rows('update sessions set expires_at = ? where token_hash = ? returning id', at(Date.now() - 1000), oldHash);
  t.equal((await asUser(ctx, idle, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 401, 'idle too long');
  t.equal(await ctx.count('select count(*) as n from sessions where token_hash = ?', idleHash), 0, 'and deleted');
  t.equal((await asUser(ctx, fresh, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 200);
  // A new sign-in clears the user's ended sessions (the one past its end, never used since).
  await signIn(ctx, 'idle@example.com');
  t.equal(await ctx.count('select count(*) as n from sessions where token_hash = ?', oldHash), 0);
  t.equal((await asUser(ctx, old, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 401, 'past its absolute end');
  t.equal(await ctx.count('select count(*) as n from sessions'), 2);
});

t.test('ended sessions nobody comes back to, and used or expired links, are swept', async (t) => {
  const ctx = await buildTestApp(t);
  await addUser(ctx, 'gone@example.com', 'editor');
  await addUser(ctx, 'here@example.com', 'editor');
  const at = (ms: number) => (onPostgres ? new Date(ms) : ms);
  await signIn(ctx, 'gone@example.com');
  const here = await signIn(ctx, 'here@example.com');
  // The first never comes back: idle past SESSION_IDLE_HOURS.
  await ctx.rows("update sessions set last_seen_at = ? where user_id = (select id from users where email = 'gone@example.com') returning id", at(Date.now() - 8 * 86_400_000));
  const linksBefore = await ctx.count('select count(*) as n from account_tokens');
  const usedOrExpired = await ctx.count('select count(*) as n from account_tokens where used_at is not null or expires_at < ?', at(Date.now()));
  const purged = await ctx.app.accounts.purgeEnded();
  t.equal(purged, 1 + usedOrExpired, 'the idle session and the links that can no longer be used');
  t.equal(await ctx.count("select count(*) as n from sessions where user_id = (select id from users where email = 'gone@example.com')"), 0);
  t.equal(await ctx.count('select count(*) as n from account_tokens'), linksBefore - usedOrExpired, 'links still usable stay');
  t.equal((await asUser(ctx, here, { method: 'GET', url: '/api/v1/auth/session' })).statusCode, 200, 'a live session stays');
  t.equal(await ctx.app.accounts.purgeEnded(), 0, 'nothing more the second time');
});
