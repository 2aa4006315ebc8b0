import t from 'tap';
import { buildTestApp } from '../helpers/app.js';

// Paths a browser would read as another host if they came back in a Location: `//host`, `/\host`
// (browsers treat `\` as `/`), a decimal IPv4 (`//3232235777` is 192.168.1.1), encoded forms.
const HOSTILE = [
  '//x',
  '/\\x',
  '//3232235777',
  '///x',
  '/\\/x',
  '//x/y',
  '/%2F%2Fx',
  '/%2f3232235777',
  '/%5Cx',
  '/%5C%5Cx',
  '//%5Cx',
  '/%09/x',
  '//x.example.com',
  '//x?y=1',
];

t.test('public redirects are path-only on a site own domain and under /sites/<handle>/', async (t) => {
  const ctx = await buildTestApp(t);
  const patched = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { url: 'https://tenant.test' } });
  t.equal(patched.statusCode, 200);
  await ctx.app.sites.verifyDomain(ctx.site.id, { dns: false });
  // The own domain serves the site (a sanity check that the hostile paths reach the pages).
  t.equal((await ctx.call({ method: 'GET', url: '/', key: null, headers: { host: 'tenant.test' } })).statusCode, 200);

  const modes = [
    { name: 'own domain', prefix: '', headers: { host: 'tenant.test' } },
    { name: '/sites/<handle>/', prefix: '/sites/my-blog', headers: {} },
  ];
  for (const mode of modes) {
    for (const path of HOSTILE) {
      const res = await ctx.call({ method: 'GET', url: `${mode.prefix}${path}`, key: null, headers: mode.headers });
      t.not(res.statusCode >= 500, true, `${mode.name} ${path}: no 5xx (${res.statusCode})`);
      const location = res.headers.location;
      if (location !== undefined) {
        t.match(String(location), /^\/(?![/\\])/, `${mode.name} ${path}: Location ${location} is a path on this host`);
      } else t.pass(`${mode.name} ${path}: ${res.statusCode}, no redirect`);
    }
    // Ordinary redirects still work.
    const plain = await ctx.call({ method: 'GET', url: `${mode.prefix}/tag/coffee`, key: null, headers: mode.headers });
    t.equal(plain.statusCode, 301);
    t.equal(plain.headers.location, `${mode.prefix}/tag/coffee/`);
  }
});
