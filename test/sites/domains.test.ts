import t from 'tap';
import { runAdmin } from '../../src/admin/cli.js';
import { canonicalHost, reservedHosts, type ResolveTxt } from '../../src/sites/domains.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/** A DNS of TXT records the test sets, answering as Node's resolver does (ENODATA/ENOTFOUND, or a failure). */
function fakeDns() {
  const records = new Map<string, string[][] | Error>();
  const resolveTxt: ResolveTxt = async (name) => {
    const found = records.get(name);
    if (found instanceof Error) throw found;
    if (!found) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { records, resolveTxt };
}

const site = async (ctx: TestApp, key?: string) => (await ctx.call({ method: 'GET', url: '/api/v1/site', key })).json().data.site;
const patch = (ctx: TestApp, payload: object, key?: string) => ctx.call({ method: 'PATCH', url: '/api/v1/site', payload, key });
const verify = (ctx: TestApp, key?: string) => ctx.call({ method: 'POST', url: '/api/v1/site/domain/verify', key });
const home = (ctx: TestApp, host: string) => ctx.call({ method: 'GET', url: '/', key: null, headers: { host } });

t.test('a new domain is pending until its TXT record holds the token; only then does it serve the site', async (t) => {
  const dns = fakeDns();
  const ctx = await buildTestApp(t, {}, { resolveTxt: dns.resolveTxt });
  await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Hello', isDraft: false } });

  const patched = await patch(ctx, { url: 'https://Tenant.test' });
  t.equal(patched.statusCode, 200);
  const pending = patched.json().data.site;
  t.match(pending, { url: 'https://tenant.test', publicUrl: 'http://localhost:3000/sites/my-blog', domain: { host: 'tenant.test', status: 'pending', verification: { type: 'TXT', name: '_blog-verify.tenant.test', value: /^blog-verify-/ } } });
  t.same((await site(ctx)).domain, pending.domain, 'GET /api/v1/site shows the state');
  const token = pending.domain.verification.value as string;
  t.equal((await home(ctx, 'tenant.test')).statusCode, 404, 'not served while pending');
  t.notMatch((await ctx.call({ method: 'GET', url: '/sites/my-blog/', key: null })).body, /tenant\.test/, 'no link to an unproven domain');

  const missing = await verify(ctx);
  t.equal(missing.statusCode, 409);
  t.match(missing.json().error.message, /no TXT record _blog-verify\.tenant\.test/);
  dns.records.set('_blog-verify.tenant.test', [['blog-verify-someone-else']]);
  t.match((await verify(ctx)).json().error.message, /does not hold the site's token/);
  dns.records.set('_blog-verify.tenant.test', Object.assign(new Error('queryTxt ETIMEOUT'), { code: 'ETIMEOUT' }));
  const outage = await verify(ctx);
  t.equal(outage.statusCode, 409, 'a DNS failure is no proof, and no 5xx');
  t.match(outage.json().error.message, /could not be looked up \(ETIMEOUT\)/);
  t.equal((await home(ctx, 'tenant.test')).statusCode, 404);

  // A long value comes in several strings.
  dns.records.set('_blog-verify.tenant.test', [['v=spf1 -all'], [token.slice(0, 10), token.slice(10)]]);
  const verified = await verify(ctx);
  t.equal(verified.statusCode, 200, verified.body);
  t.match(verified.json().data.site, { publicUrl: 'https://tenant.test', domain: { host: 'tenant.test', status: 'verified', verification: null } });
  const served = await home(ctx, 'tenant.test');
  t.equal(served.statusCode, 200, 'served once proven');
  t.match(served.body, /<link rel="canonical" href="https:\/\/tenant\.test\/">/);
  t.equal((await verify(ctx)).statusCode, 200, 'verifying again is harmless');

  // Another scheme on the same host stays proven; a new host starts over; none removes it.
  t.match((await patch(ctx, { url: 'http://tenant.test' })).json().data.site.domain, { status: 'verified' });
  t.match((await patch(ctx, { url: 'https://other.test' })).json().data.site.domain, { host: 'other.test', status: 'pending' });
  t.equal((await home(ctx, 'tenant.test')).statusCode, 404);
  t.equal((await patch(ctx, { url: null })).json().data.site.domain, null);
});

t.test("the service's own hosts can never be claimed", async (t) => {
  const ctx = await buildTestApp(t, { PUBLIC_BASE_URL: 'https://blogs.example.net', HOST: '203.0.113.7' });
  for (const url of ['https://blogs.example.net', 'http://BLOGS.example.net:8080', 'http://203.0.113.7', 'https://203.0.113.7:3000']) {
    const res = await patch(ctx, { url });
    t.equal(res.statusCode, 400, `${url}: ${res.body}`);
    t.match(res.json().error, { code: 'VALIDATION_ERROR', details: [{ path: '/body/url', message: /service's own address/ }] });
  }
  // Other spellings of the same hosts: upper case with a trailing dot, IPv6 spellings of the IPv4 address.
  for (const url of ['https://BLOGS.EXAMPLE.NET.', 'http://blogs.example.net.:8080', 'http://[::ffff:203.0.113.7]', 'http://[0:0:0:0:0:ffff:cb00:7107]:3000', 'http://203.0.113.7.']) {
    const res = await patch(ctx, { url });
    t.equal(res.statusCode, 400, `${url}: ${res.body}`);
    t.match(res.json().error, { code: 'VALIDATION_ERROR', details: [{ path: '/body/url', message: /service's own address/ }] });
  }
  t.equal((await home(ctx, 'blogs.example.net')).statusCode, 404, 'the platform host still serves no tenant');
  // Nor through the admin CLI.
  await t.rejects(runAdmin(['site', 'update', ctx.site.id, '--url', 'https://blogs.example.net'], ctx.config, () => {}), { code: 'VALIDATION_ERROR' });
});

t.test('on loopback, every loopback name and address is the service\'s own, however spelled', async (t) => {
  const ctx = await buildTestApp(t, { PUBLIC_BASE_URL: 'http://localhost:3000', HOST: '127.0.0.1' });
  for (const url of ['http://LOCALHOST.', 'http://localhost.:3000', 'http://app.localhost', 'http://127.0.0.2', 'http://[::1]:3000', 'http://[0:0:0:0:0:0:0:1]', 'http://[::ffff:127.0.0.1]', 'http://2130706433']) {
    const res = await patch(ctx, { url });
    t.equal(res.statusCode, 400, `${url}: ${res.body}`);
  }
  t.equal((await patch(ctx, { url: 'https://tenant.test' })).statusCode, 200, 'a real domain may be claimed');
});

t.test('reservedHosts compares canonical hosts; a wildcard listener owns its interfaces\' addresses', (t) => {
  const spelled = reservedHosts({ publicBaseUrl: 'https://Blogs.Example.NET./', host: '2001:DB8:0:0::7' }, () => []);
  for (const host of ['blogs.example.net', 'BLOGS.example.net..', '2001:db8::7', '[2001:0db8:0000:0000:0000:0000:0000:0007]']) t.ok(spelled.has(host), host);
  for (const host of ['blogs.example.org', 'example.net', 'localhost', '127.0.0.1', '2001:db8::8']) t.notOk(spelled.has(host), `${host} is not the service's`);

  const wildcard = reservedHosts({ publicBaseUrl: 'https://blogs.example.net', host: '0.0.0.0' }, () => ['192.0.2.10', 'fe80::1%eth0', '127.0.0.1']);
  for (const host of ['192.0.2.10', '[::ffff:c000:20a]', 'fe80::1', 'localhost', '127.1.2.3']) t.ok(wildcard.has(host), host);
  t.notOk(wildcard.has('192.0.2.11'));
  t.equal(canonicalHost('[::FFFF:7F00:1]'), '127.0.0.1');
  t.equal(canonicalHost('0x7f.1'), '127.0.0.1');
  t.equal(canonicalHost('Tenant.Test.'), 'tenant.test');
  t.end();
});

t.test('a pending claim cannot keep the owner out; the first to prove a host keeps it', async (t) => {
  const dns = fakeDns();
  const ctx = await buildTestApp(t, {}, { resolveTxt: dns.resolveTxt });
  const squatter = await ctx.addSite('Squatter');
  t.equal((await patch(ctx, { url: 'https://shared.test' }, squatter.key)).statusCode, 200, 'a squatter may claim, pending');
  const owner = await patch(ctx, { url: 'https://shared.test' });
  t.equal(owner.statusCode, 200, 'the owner may claim the same host: a pending claim holds nothing');
  dns.records.set('_blog-verify.shared.test', [[owner.json().data.site.domain.verification.value]]);
  t.equal((await verify(ctx)).statusCode, 200, 'the owner proves it');
  t.equal((await verify(ctx, squatter.key)).statusCode, 409, "the squatter's token is not there");
  // An operator's word cannot hand a proven host to a second site either.
  await t.rejects(runAdmin(['site', 'verify-domain', squatter.site.id], ctx.config, () => {}), { code: 'CONFLICT' });
  t.equal((await patch(ctx, { url: 'https://shared.test' }, squatter.key)).statusCode, 200, 'the same value again changes nothing');
  const third = await ctx.addSite('Third');
  t.equal((await patch(ctx, { url: 'https://shared.test' }, third.key)).statusCode, 409, 'a proven host is taken');
  const served = await home(ctx, 'shared.test');
  t.equal(served.statusCode, 200);
  t.match(served.body, /My Blog/);

  // The operator's word proves a domain without DNS.
  const lines: string[] = [];
  await runAdmin(['site', 'update', third.site.id, '--url', 'https://ops.test'], ctx.config, (line) => lines.push(line));
  t.match(lines.join('\n'), /ops\.test is pending: it serves the site once the TXT record _blog-verify\.ops\.test holds "blog-verify-/);
  t.equal((await home(ctx, 'ops.test')).statusCode, 404);
  await runAdmin(['site', 'verify-domain', third.site.id], ctx.config, (line) => lines.push(line));
  t.match(lines.join('\n'), /ops\.test is proven/);
  t.equal((await home(ctx, 'ops.test')).statusCode, 200);
  t.match((await site(ctx, third.key)).domain, { status: 'verified' });
  await t.rejects(runAdmin(['site', 'verify-domain', '00000000-0000-4000-8000-000000000000'], ctx.config, () => {}), { code: 'NOT_FOUND' });
});
