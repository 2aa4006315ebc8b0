import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config.js';
import { buildTestApp } from '../helpers/app.js';

t.test('per API key: RateLimit-* headers on every answer, then 429 RATE_LIMITED with Retry-After', async (t) => {
  const ctx = await buildTestApp(t, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' });
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await ctx.call({ method: 'GET', url: i === 1 ? '/api/v1/tasks' : '/api/v1/posts' });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['ratelimit-limit'], '3');
    t.ok(Number(res.headers['ratelimit-reset']) > 0 && Number(res.headers['ratelimit-reset']) <= 60);
    remaining.push(String(res.headers['ratelimit-remaining']));
  }
  t.same(remaining, ['2', '1', '0'], 'one budget across the routes of a key');
  const limited = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'One too many' } });
  t.equal(limited.statusCode, 429);
  const retryAfter = Number(limited.headers['retry-after']);
  t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${retryAfter}`);
  t.equal(limited.headers['ratelimit-remaining'], '0');
  const { error } = limited.json();
  t.equal(error.code, 'RATE_LIMITED');
  t.match(error.message, /at most 3 per 60 s; retry in \d+ s/);
  t.same(error.details, { limit: 3, windowSeconds: 60, retryAfter });
  t.ok(error.requestId);
  t.equal((ctx.sqlite.prepare('select count(*) as n from posts').get() as { n: number }).n, 0, 'a limited request does nothing');

  const other = await ctx.addSite('Other');
  const otherKey = await ctx.call({ method: 'GET', url: '/api/v1/posts', key: other.key });
  t.equal(otherKey.statusCode, 200, 'another key has its own budget');
  t.equal(otherKey.headers['ratelimit-remaining'], '2');
  const health = await ctx.call({ method: 'GET', url: '/health', key: null });
  t.equal(health.statusCode, 200, 'public routes are counted per address, apart from keys');
  t.ok(Number(health.headers['ratelimit-limit']) > 3);
  const unauthorized = await ctx.call({ method: 'GET', url: '/api/v1/posts', key: 'blog_not-a-key-0123456789abcdef' });
  t.equal(unauthorized.statusCode, 401, 'a wrong key is refused before it is counted');
});

t.test('generate has its own, lower limit', async (t) => {
  const ctx = await buildTestApp(t, { RATE_LIMIT_GENERATE_MAX: '1' });
  const generate = () => ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload: { topic: 'Espresso', length: 'short' } });
  const first = await generate();
  t.equal(first.statusCode, 201);
  t.equal(first.headers['ratelimit-limit'], '1');
  const second = await generate();
  t.equal(second.statusCode, 429);
  t.equal(second.json().error.code, 'RATE_LIMITED');
  const other = await ctx.call({ method: 'GET', url: '/api/v1/posts' });
  t.equal(other.statusCode, 200, 'the rest of the API is not held back by it');
  t.equal(other.headers['ratelimit-limit'], '600000', 'the general default');
});

t.test('public pages and /health: per client address, never per key', async (t) => {
  const ctx = await buildTestApp(t, { RATE_LIMIT_PUBLIC_MAX: '2' });
  const get = (url: string, remoteAddress: string, key: string | null = null) => ctx.call({ method: 'GET', url, remoteAddress, key });
  t.equal((await get('/health', '198.51.100.7')).statusCode, 200);
  t.equal((await get('/sites/my-blog/', '198.51.100.7')).headers['ratelimit-remaining'], '0');
  const limited = await get('/health', '198.51.100.7', ctx.key);
  t.equal(limited.statusCode, 429, 'a key does not lift the address limit on public routes');
  t.ok(limited.headers['retry-after']);
  t.equal(limited.json().error.code, 'RATE_LIMITED');
  t.equal((await get('/health', '198.51.100.8')).statusCode, 200, 'another address');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts', remoteAddress: '198.51.100.7' })).statusCode, 200, 'the API counts the key');
});

t.test('a limit of 0 is none; bad values stop the start naming the variable', async (t) => {
  const ctx = await buildTestApp(t, { RATE_LIMIT_MAX: '0', RATE_LIMIT_PUBLIC_MAX: '0', RATE_LIMIT_GENERATE_MAX: '0' });
  for (const url of ['/api/v1/posts', '/health']) {
    const res = await ctx.call({ method: 'GET', url });
    t.equal(res.statusCode, 200);
    t.notOk(res.headers['ratelimit-limit'], `${url}: not limited`);
  }
  const generate = await ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload: { topic: 'Unlimited', length: 'short' } });
  t.notOk(generate.headers['ratelimit-limit']);

  for (const [name, value] of [
    ['RATE_LIMIT_MAX', 'lots'],
    ['RATE_LIMIT_WINDOW_MS', '10'],
    ['RATE_LIMIT_GENERATE_MAX', '-1'],
    ['WEBHOOK_ALLOW_PRIVATE', 'yes please'],
    ['WEBHOOK_TIMEOUT_MS', '0'],
    ['WEBHOOK_CONCURRENCY', '1000'],
  ]) {
    t.throws(() => loadConfig({ [name]: value }), new ConfigError(name, ''), name);
    t.throws(() => loadConfig({ [name]: value }), { message: new RegExp(`Invalid environment variable ${name}:`) });
  }
  const defaults = loadConfig({});
  t.match(defaults, { webhookAllowPrivate: false, webhookTimeoutMs: 10_000, rateLimitWindowMs: 60_000, rateLimitMax: 600_000, rateLimitGenerateMax: 3000, rateLimitPublicMax: 1_200_000 });
  t.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true' }).webhookAllowPrivate, true);
});
