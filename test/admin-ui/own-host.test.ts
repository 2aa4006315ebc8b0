import t from 'tap';
import type { ResolveTxt } from '../../src/sites/domains.js';
import { buildTestApp } from '../helpers/app.js';
import { PASSWORD, addUser } from '../helpers/accounts.js';

const SERVICE = 'https://blogs.example.net';

t.test("on a tenant's own domain /admin/ goes to the service's address", async (t) => {
  const records = new Map<string, string[][]>();
  const resolveTxt: ResolveTxt = async (name) => {
    const found = records.get(name);
    if (!found) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return found;
  };
  const ctx = await buildTestApp(t, { PUBLIC_BASE_URL: SERVICE }, { resolveTxt });
  const patched = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { url: 'https://tenant.test' } });
  const get = (url: string, host: string) => ctx.app.inject({ method: 'GET', url, headers: { host } });

  // Pending: the host serves nothing of the tenant, and the admin is not sent anywhere.
  t.equal((await get('/admin/', 'tenant.test')).statusCode, 200, 'a host no site holds yet: the admin as anywhere');
  records.set('_blog-verify.tenant.test', [[patched.json().data.site.domain.verification.value]]);
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/site/domain/verify' })).statusCode, 200);
  t.equal((await get('/', 'tenant.test')).statusCode, 200, "the domain serves the tenant's pages");

  for (const [url, host] of [
    ['/admin/', 'tenant.test'],
    ['/admin/posts/new?x=1', 'TENANT.test'],
    ['/admin', 'tenant.test:443'],
    ['/admin/assets/app.js', 'tenant.test'],
  ] as const) {
    const res = await get(url, host);
    t.equal(res.statusCode, 302, `${host}${url}`);
    t.equal(res.headers.location, `${SERVICE}${url}`);
    t.equal(res.headers['set-cookie'], undefined, 'no cookie on the tenant domain');
  }
  const own = await get('/admin/', 'blogs.example.net');
  t.equal(own.statusCode, 200, "the service's own host shows the admin");
  t.match(own.body, /<html/);
});

t.test('with PUBLIC_BASE_URL https the session cookie is __Host-blog_session, always Secure; http keeps blog_session', async (t) => {
  const ctx = await buildTestApp(t, { PUBLIC_BASE_URL: SERVICE });
  await addUser(ctx, 'owner@example.com', 'owner');
  // Over plain HTTP to the service (a proxy terminating TLS without TRUST_PROXY): Secure all the same.
  const signIn = await ctx.app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', headers: { host: 'blogs.example.net', origin: SERVICE }, payload: { email: 'owner@example.com', password: PASSWORD } });
  t.equal(signIn.statusCode, 200, signIn.body);
  const [cookie] = signIn.cookies as { name: string; value: string; secure?: boolean; httpOnly?: boolean; path?: string; domain?: string; sameSite?: string }[];
  t.match(cookie, { name: '__Host-blog_session', secure: true, httpOnly: true, path: '/', sameSite: 'Lax' });
  t.equal(cookie!.domain, undefined, 'no Domain: this host only');
  const session = (name: string) => ctx.app.inject({ method: 'GET', url: '/api/v1/auth/session', headers: { host: 'blogs.example.net', cookie: `${name}=${cookie!.value}` } });
  t.equal((await session('__Host-blog_session')).statusCode, 200);
  t.equal((await session('blog_session')).statusCode, 401, 'the unprefixed name is not read');
  const shell = await ctx.app.inject({ method: 'GET', url: '/admin/', headers: { host: 'blogs.example.net', cookie: `__Host-blog_session=${cookie!.value}` } });
  t.notMatch(shell.body, /admin-session" content="none"/, 'the shell sees the prefixed cookie');
  const signOut = await ctx.app.inject({ method: 'POST', url: '/api/v1/auth/sign-out', headers: { host: 'blogs.example.net', origin: SERVICE, cookie: `__Host-blog_session=${cookie!.value}` } });
  t.equal(signOut.statusCode, 200);
  t.match(signOut.headers['set-cookie'], /^__Host-blog_session=;.*Secure/, 'cleared under the same name and flags');

  const dev = await buildTestApp(t);
  await addUser(dev, 'dev@example.com', 'owner');
  const devSignIn = await dev.app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', payload: { email: 'dev@example.com', password: PASSWORD } });
  t.equal(devSignIn.statusCode, 200);
  t.match(devSignIn.cookies[0], { name: 'blog_session', httpOnly: true });
  t.notOk((devSignIn.cookies[0] as { secure?: boolean }).secure, 'plain-HTTP development: not Secure, as before');
});
