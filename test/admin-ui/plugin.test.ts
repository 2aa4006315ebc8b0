import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import t from 'tap';
import { ADMIN_CSP, acceptedEncoding, encodedBody, loadAdminAssets } from '../../plugins/admin-ui.js';
import { buildTestApp } from '../helpers/app.js';

/** The admin UI's static side: the shell, its fingerprinted assets and the headers on both. */

const ASSET = /\/admin\/assets\/([\w-]+)\.([0-9a-f]{10})\.(js|css|svg)/g;

t.test('the shell and its assets', async (t) => {
  const ctx = await buildTestApp(t);
  const get = (url: string) => ctx.call({ method: 'GET', url, key: null });

  const shell = await get('/admin/');
  t.equal(shell.statusCode, 200);
  t.match(shell.headers['content-type'], /^text\/html/);
  t.equal(shell.headers['cache-control'], 'no-store', 'the shell is never cached');
  const csp = String(shell.headers['content-security-policy']);
  t.equal(csp, ADMIN_CSP);
  const directives = Object.fromEntries(csp.split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
  t.same(directives['script-src'], ["'self'"], 'scripts only from the service: no unsafe-inline, no eval');
  t.same(directives['frame-ancestors'], ["'none'"], 'no page may frame the UI');
  t.notOk(csp.includes('unsafe-inline'), 'nothing inline at all');
  t.equal(shell.headers['referrer-policy'], 'same-origin');
  t.equal(shell.headers['x-content-type-options'], 'nosniff');
  t.notMatch(shell.body, /<script(?![^>]*\bsrc=)[^>]*>/i, 'no inline script in the shell');
  t.notMatch(shell.body, /\sstyle=|\son[a-z]+=/i, 'no inline style or handler attributes');
  t.notMatch(shell.body, /https?:\/\//, 'no external URL in the shell');

  // Without a session cookie the shell says so (the UI then asks for no session); with one it does not.
  t.match(shell.body, /<meta name="admin-session" content="none">/);
  const withCookie = await ctx.call({ method: 'GET', url: '/admin/', key: null, headers: { cookie: 'theme=dark; blog_session=abc' } });
  t.notMatch(withCookie.body, /admin-session/, 'a browser with a session cookie gets the plain shell');
  t.equal(withCookie.headers['cache-control'], 'no-store');
  // Every module is preloaded from the shell: no waterfall of imports.
  const preloaded = [...shell.body.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]);
  const modules = fs.readdirSync(path.join(process.cwd(), 'admin')).filter((name) => name.endsWith('.js') && name !== 'app.js');
  t.equal(preloaded.length, modules.length, `every module but the entry is preloaded (${preloaded.length})`);

  // Every path the client router shows is the same shell.
  for (const url of ['/admin/posts', '/admin/posts/123', '/admin/setup', '/admin/sign-in?next=%2Fadmin%2Fkeys']) {
    const res = await get(url);
    t.equal(res.statusCode, 200, `${url} is the shell`);
    t.equal(res.body, shell.body);
    t.equal(res.headers['cache-control'], 'no-store');
    t.equal(res.headers['content-security-policy'], ADMIN_CSP);
  }
  const bare = await get('/admin');
  t.equal(bare.statusCode, 308);
  t.equal(bare.headers.location, '/admin/');

  // The shell names the stylesheet, the icon and the main module by content hash.
  const referenced = [...shell.body.matchAll(ASSET)].map((m) => m[0]);
  t.ok(referenced.some((url) => url.includes('/app.')) && referenced.some((url) => url.endsWith('.css')), `shell references fingerprinted assets: ${referenced.join(' ')}`);

  // Walk every module the shell loads, following imports: each is served immutable, its name
  // holds the hash of its body, and imports name fingerprinted files only.
  const seen = new Set<string>();
  const queue = [...referenced];
  let jsGzipBytes = 0;
  while (queue.length) {
    const url = queue.shift()!;
    if (seen.has(url)) continue;
    seen.add(url);
    const res = await get(url);
    t.equal(res.statusCode, 200, `${url} served`);
    t.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable', `${url} cached for a year`);
    t.equal(res.headers['content-security-policy'], ADMIN_CSP);
    const hash = url.match(/\.([0-9a-f]{10})\.\w+$/)![1];
    t.equal(createHash('sha256').update(res.rawPayload).digest('hex').slice(0, 10), hash, `${url}: the name is the content hash`);
    if (url.endsWith('.css')) t.notMatch(res.body, /url\(|@import/, 'the stylesheet loads nothing (no fonts, no images)');
    if (url.endsWith('.js')) {
      t.match(res.headers['content-type'], /^text\/javascript/);
      jsGzipBytes += zlib.gzipSync(res.rawPayload).length;
      const imports = [...res.body.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
      for (const spec of imports) {
        t.match(spec, /^\.\/[\w-]+\.[0-9a-f]{10}\.js$/, `${url} imports ${spec} by its fingerprinted name`);
        queue.push(`/admin/assets/${spec.slice(2)}`);
      }
      t.notMatch(res.body, /\bfetch\(\s*(?!`\/api\/v1)/, `${url}: fetch only asks the API (the browser test checks every request stays on the service)`);
      t.notMatch(res.body, /\beval\s*\(|new Function\s*\(/, `${url} has no eval`);
    }
  }
  const served = fs.readdirSync(path.join(process.cwd(), 'admin')).filter((name) => name !== 'index.html');
  t.equal(seen.size, served.length, `every admin/ file is reached from the shell (${seen.size} of ${served.length})`);
  t.ok(jsGzipBytes < 150 * 1024, `all JavaScript is ${jsGzipBytes} bytes gzipped (at most 150 KB)`);

  // Compressed on the first request that asks (not at start-up), sent as the browser accepts.
  const entry = referenced.find((url) => url.includes('/app.'))!;
  const plain = await get(entry);
  t.equal(plain.headers['content-encoding'], undefined, 'no encoding unless asked');
  t.equal(plain.headers.vary, 'Accept-Encoding');
  const gz = await ctx.call({ method: 'GET', url: entry, key: null, headers: { 'accept-encoding': 'gzip, deflate' } });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.same(zlib.gunzipSync(gz.rawPayload), plain.rawPayload, 'gzip holds the same bytes');
  const br = await ctx.call({ method: 'GET', url: entry, key: null, headers: { 'accept-encoding': 'gzip, deflate, br' } });
  t.equal(br.headers['content-encoding'], 'br');
  t.same(zlib.brotliDecompressSync(br.rawPayload), plain.rawPayload, 'brotli holds the same bytes');
  t.ok(br.rawPayload.length < plain.rawPayload.length / 2, 'and is much smaller');
  const again = await ctx.call({ method: 'GET', url: entry, key: null, headers: { 'accept-encoding': 'br' } });
  t.same(again.rawPayload, br.rawPayload, 'the same compressed bytes on the next request');
  const refused = await ctx.call({ method: 'GET', url: entry, key: null, headers: { 'accept-encoding': 'br;q=0, gzip;q=0' } });
  t.equal(refused.headers['content-encoding'], undefined, 'q=0 refuses an encoding');

  const missing = await get('/admin/assets/app.0000000000.js');
  t.equal(missing.statusCode, 404, 'an unknown (or stale) asset name is 404');
  t.equal(missing.json().success, false);
  t.equal(missing.headers['cache-control'], 'no-store', 'and that answer is not cached');
  t.equal(missing.headers['content-security-policy'], ADMIN_CSP);
  const unhashed = await get('/admin/assets/app.js');
  t.equal(unhashed.statusCode, 404, 'only fingerprinted names are served');

  // The API and the public pages keep their own headers.
  const api = await ctx.call({ method: 'GET', url: '/api/v1/site' });
  t.equal(api.headers['content-security-policy'], undefined, 'API answers are not given the admin policy');
});

t.test('fingerprinting follows imports and refuses cycles', async (t) => {
  const dir = t.testdir({
    'index.html': '<link rel="stylesheet" href="/admin/assets/a.css"><script type="module" src="/admin/assets/main.js"></script>',
    'a.css': 'body{}',
    'main.js': "import { x } from './leaf.js';\nconst later = () => import('./leaf.js');\nexport { x, later };\n",
    'leaf.js': 'export const x = 1;\n',
  });
  const assets = loadAdminAssets(dir);
  const leaf = assets.names.get('leaf.js')!;
  const main = assets.names.get('main.js')!;
  t.match(leaf, /^leaf\.[0-9a-f]{10}\.js$/);
  const body = assets.files.get(main)!.body.toString();
  t.ok(body.includes(`from './${leaf}'`) && body.includes(`import('./${leaf}')`), 'both static and dynamic imports are rewritten');
  t.ok(assets.shell.includes(`/admin/assets/${main}`) && assets.shell.includes(`/admin/assets/${assets.names.get('a.css')}`));

  // A change in the leaf changes the name of its importer too (its body names the leaf's hash).
  fs.writeFileSync(path.join(dir, 'leaf.js'), 'export const x = 2;\n');
  const changed = loadAdminAssets(dir);
  t.not(changed.names.get('leaf.js'), leaf);
  t.not(changed.names.get('main.js'), main, 'the importer is renamed with its dependency');
  t.equal(changed.names.get('a.css'), assets.names.get('a.css'), 'an unchanged file keeps its name');

  // Compressed once per process and content, whichever load it was found by.
  const css = assets.files.get(assets.names.get('a.css')!)!;
  const gz = encodedBody(css, 'gzip');
  t.same(zlib.gunzipSync(gz), css.body);
  t.equal(encodedBody(changed.files.get(changed.names.get('a.css')!)!, 'gzip'), gz, 'the same content is not compressed again');
  t.same(zlib.brotliDecompressSync(encodedBody(css, 'br')), css.body);

  const cyclic = t.testdir({ 'index.html': '', 'a.js': "import './b.js';", 'b.js': "import './a.js';" });
  t.throws(() => loadAdminAssets(cyclic), /import cycle/);
  const dangling = t.testdir({ 'index.html': '<script src="/admin/assets/gone.js"></script>' });
  t.throws(() => loadAdminAssets(dangling), /gone\.js/);
});

t.test('accepted encodings', async (t) => {
  t.equal(acceptedEncoding(undefined), null);
  t.equal(acceptedEncoding(''), null);
  t.equal(acceptedEncoding('gzip'), 'gzip');
  t.equal(acceptedEncoding('gzip, br'), 'br');
  t.equal(acceptedEncoding('BR;q=0.5, gzip;q=1'), 'br');
  t.equal(acceptedEncoding('br;q=0, gzip'), 'gzip');
  t.equal(acceptedEncoding('br; q=0.0, gzip;q=0'), null);
  t.equal(acceptedEncoding('identity, deflate'), null);
});
