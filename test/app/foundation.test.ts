import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config.js';
import { runAdmin } from '../../src/admin/cli.js';
import { buildTestApp, failedStart, onPostgres, spawnServer, SQLITE_ONLY, tempDataDir, waitFor } from '../helpers/app.js';

t.test('authentication failures are 401 with the envelope', async (t) => {
  const ctx = await buildTestApp(t);
  const cases: [string, Record<string, string>][] = [
    ['missing', {}],
    ['malformed scheme', { authorization: `Basic ${ctx.key}` }],
    ['empty bearer', { authorization: 'Bearer ' }],
    ['unknown key', { authorization: 'Bearer blog_unknown-key-unknown-key-unknown' }],
    ['key without scheme', { authorization: ctx.key }],
  ];
  for (const [name, headers] of cases) {
    const res = await ctx.call({ method: 'GET', url: '/api/v1/posts', key: null, headers });
    t.equal(res.statusCode, 401, name);
    t.equal(res.headers['www-authenticate'], 'Bearer', name);
    t.ok(res.headers['x-request-id'], name);
    const body = res.json();
    t.equal(body.success, false);
    t.equal(body.error.code, 'UNAUTHORIZED');
    t.equal(body.error.requestId, res.headers['x-request-id']);
  }
});

t.test('the Bearer scheme name is case-insensitive', async (t) => {
  const ctx = await buildTestApp(t);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts', key: null, headers: { authorization: `bearer ${ctx.key}` } })).statusCode, 200);
});

t.test('a revoked key stops working at once, also when revoked by the CLI in another connection', async (t) => {
  const ctx = await buildTestApp(t);
  const extra = await ctx.addSite('Revocable');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts', key: extra.key })).statusCode, 200, 'works and is cached');
  const keyId = (await ctx.app.sites.authenticate(extra.key))!.keyId;
  await runAdmin(['key', 'revoke', keyId], ctx.config, () => {});
  // The next request arrives in a later turn of the event loop (the server reads whether the
  // database changed once per turn: requests of the same turn arrived with the revocation).
  await new Promise(setImmediate);
  // On PostgreSQL another connection's revocation reaches the key cache within a second (the
  // change counter is polled); on SQLite at once.
  if (onPostgres) await waitFor(async () => (await ctx.call({ method: 'GET', url: '/api/v1/posts', key: extra.key })).statusCode === 401, 'the revocation to be seen', 2000);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts', key: extra.key })).statusCode, 401, 'revoked through the CLI');

  const second = await ctx.addSite('Second');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts', key: second.key })).statusCode, 200);
  t.equal(await ctx.app.sites.revokeKey((await ctx.app.sites.authenticate(second.key))!.keyId), true);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts', key: second.key })).statusCode, 401, 'revoked in process');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts' })).statusCode, 200, 'other keys unaffected');
});

t.test('the admin CLI creates sites and keys that work over HTTP', async (t) => {
  const ctx = await buildTestApp(t);
  const lines: string[] = [];
  await runAdmin(['site', 'create', '--name', 'CLI Site'], ctx.config, (line) => lines.push(line));
  const siteId = lines[0].match(/^site (\S+) "CLI Site" \(handle cli-site\)$/)![1];
  const firstKey = lines[1].match(/^key\s+(blog_\S+)/)![1];
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', key: firstKey, payload: { title: 'From the CLI site' } });
  t.equal(res.statusCode, 201);
  t.same(res.json().data.site, { id: siteId, name: 'CLI Site' });

  lines.length = 0;
  await runAdmin(['key', 'create', '--site', siteId], ctx.config, (line) => lines.push(line));
  const secondKey = lines[1].split(' ')[0];
  t.match(secondKey, /^blog_[A-Za-z0-9_-]{43}$/);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts', key: secondKey })).json().data.pagination.total, 1);

  lines.length = 0;
  await runAdmin(['key', 'list', '--site', siteId], ctx.config, (line) => lines.push(line));
  t.equal(lines.length, 3, 'a header and two keys');
  t.notOk(lines.join('\n').includes(firstKey), 'keys are listed by prefix only');
  t.ok(lines.slice(1).every((line) => line.endsWith('active')));

  lines.length = 0;
  await runAdmin(['site', 'list'], ctx.config, (line) => lines.push(line));
  t.equal(lines.length, 3, 'a header and two sites');
  await t.rejects(runAdmin(['key', 'create'], ctx.config), { name: 'UsageError' });
  await t.rejects(runAdmin(['bogus', 'thing'], ctx.config), { name: 'UsageError' });
  await t.rejects(runAdmin(['site', 'list', '--wat'], ctx.config), { name: 'UsageError' });
  await t.rejects(runAdmin(['key', 'create', '--site', 'missing'], ctx.config), { code: 'NOT_FOUND' });
});

t.test('error contract: unknown routes, bad JSON, wrong content type, big bodies, crashes', { skip: SQLITE_ONLY }, async (t) => {
  const ctx = await buildTestApp(t);
  const unknown = await ctx.call({ method: 'GET', url: '/api/v1/nothing-here' });
  t.equal(unknown.statusCode, 404);
  t.equal(unknown.json().error.code, 'NOT_FOUND');
  t.ok(unknown.headers['x-request-id']);

  const badJson = await ctx.call({ method: 'POST', url: '/api/v1/posts', headers: { 'content-type': 'application/json' }, payload: '{"title": ' });
  t.equal(badJson.statusCode, 400);
  t.equal(badJson.json().error.code, 'INVALID_JSON');

  const emptyPost = await ctx.call({ method: 'POST', url: '/api/v1/posts', headers: { 'content-type': 'application/json' }, payload: '' });
  t.equal(emptyPost.statusCode, 400);

  const wrongType = await ctx.call({ method: 'POST', url: '/api/v1/posts', headers: { 'content-type': 'text/plain' }, payload: 'title=x' });
  t.equal(wrongType.statusCode, 415);
  t.equal(wrongType.json().error.code, 'UNSUPPORTED_MEDIA_TYPE');

  const big = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'big', content: 'x'.repeat(1024 * 1024 + 10) } });
  t.equal(big.statusCode, 413);
  t.equal(big.json().error.code, 'PAYLOAD_TOO_LARGE');

  for (const url of ['/api/v1/posts/%zz', `/api/v1/posts/${'a'.repeat(300)}`, '/api/v1/posts?page=1e20', '/api/v1/posts?page=461168601842738791', '/api/v1/tasks?page=1000001', '/api/v1/knowledge?page=99999999999']) {
    const res = await ctx.call({ method: 'GET', url });
    t.equal(res.statusCode, 400, url);
    t.equal(res.json().success, false, url);
    t.ok(res.headers['x-request-id'], `${url}: X-Request-Id`);
  }
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts?page=1000000' })).statusCode, 200, 'the highest page is fine');

  const echoed = await ctx.call({ method: 'GET', url: '/health', headers: { 'x-request-id': 'trace-123' } });
  t.equal(echoed.headers['x-request-id'], 'trace-123');
  const unsafe = await ctx.call({ method: 'GET', url: '/health', headers: { 'x-request-id': 'bad id\u0001' } });
  t.not(unsafe.headers['x-request-id'], 'bad id\u0001');

  // A broken database is an unexpected failure: 500 with no internals in the body.
  ctx.app.database.close();
  const crash = await ctx.call({ method: 'GET', url: '/api/v1/posts' });
  t.equal(crash.statusCode, 500);
  t.same(Object.keys(crash.json().error).sort(), ['code', 'message', 'requestId']);
  t.equal(crash.json().error.code, 'INTERNAL_ERROR');
  t.notMatch(crash.body, /database|sqlite|stack|at /i);
  const ready = await ctx.call({ method: 'GET', url: '/ready' });
  t.equal(ready.statusCode, 503);
});

t.test('health, readiness and the OpenAPI document', async (t) => {
  const ctx = await buildTestApp(t);
  const health = await ctx.call({ method: 'GET', url: '/health', key: null });
  t.same(health.json(), { status: 'ok' });
  const ready = await ctx.call({ method: 'GET', url: '/ready', key: null });
  t.equal(ready.statusCode, 200);
  t.equal(ready.json().database, 'ok');
  const doc = (await ctx.call({ method: 'GET', url: '/docs/json', key: null })).json();
  t.match(doc.openapi, /^3\./);
  for (const route of ['/api/v1/posts', '/api/v1/posts/{id}']) t.ok(doc.paths[route], route);
  t.ok(doc.paths['/api/v1/posts'].post.requestBody, 'request bodies come from the TypeBox schemas');
  const ui = await ctx.call({ method: 'GET', url: '/docs', key: null });
  t.ok([200, 302].includes(ui.statusCode));
});

t.test('configuration is validated and names the bad variable', async (t) => {
  t.throws(() => loadConfig({ PORT: 'abc' }), new ConfigError('PORT', 'expected an integer, got "abc"'));
  t.throws(() => loadConfig({ PORT: '70000' }), { name: 'ConfigError', message: /PORT/ });
  t.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), { name: 'ConfigError', message: /LOG_LEVEL/ });
  t.throws(() => loadConfig({ GENERATOR: 'gpt' }), { name: 'ConfigError', message: /GENERATOR/ });
  t.throws(() => loadConfig({ OLLAMA_HOST: 'not a url' }), { name: 'ConfigError', message: /OLLAMA_HOST/ });
  t.throws(() => loadConfig({ BOOTSTRAP_API_KEY: 'short' }), { name: 'ConfigError', message: /BOOTSTRAP_API_KEY/ });
  t.throws(() => loadConfig({ JOB_CONCURRENCY: '0' }), { name: 'ConfigError', message: /JOB_CONCURRENCY/ });
  t.throws(() => loadConfig({ SITE_NAME: 'x'.repeat(201) }), { name: 'ConfigError', message: /SITE_NAME/ });
  const config = loadConfig({});
  t.equal(config.port, 3000);
  t.equal(config.host, '127.0.0.1');
  t.equal(config.siteName, 'My Blog');
  t.equal(config.generator, 'auto');
  // The public address the first start prints (its setup link's): where the service listens.
  t.equal(config.publicBaseUrl, 'http://127.0.0.1:3000');
  t.equal(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }).publicBaseUrl, 'http://localhost:8080', 'every interface: localhost');
  t.equal(loadConfig({ HOST: '::1' }).publicBaseUrl, 'http://[::1]:3000');
  t.equal(loadConfig({ PUBLIC_BASE_URL: 'https://blog.example.com' }).publicBaseUrl, 'https://blog.example.com');
});

t.test('a start-up with a bad environment variable fails with its name', async (t) => {
  const { code, stderr } = await failedStart(spawnServer({ DATA_DIR: tempDataDir(t), JOB_POLL_MS: 'often' }));
  t.equal(code, 1);
  t.match(stderr, /Configuration error: Invalid environment variable JOB_POLL_MS/);
  t.notMatch(stderr, / {4}at /, 'no stack trace');
});
