import t from 'tap';
import { KeyLookupCache } from '../../src/sites/key-cache.js';
import { buildTestApp } from '../helpers/app.js';

t.test('failed authentications count against the address, with their own budget: past it 429 with Retry-After', async (t) => {
  const ctx = await buildTestApp(t, { RATE_LIMIT_AUTH_FAIL_MAX: '5', RATE_LIMIT_MAX: '1000' });
  for (let i = 0; i < 5; i++) {
    const res = await ctx.call({ method: 'GET', url: '/api/v1/posts', key: `blog_guess-${i}-0123456789abcdefghij` });
    t.equal(res.statusCode, 401, `guess ${i}: 401`);
  }
  const limited = await ctx.call({ method: 'GET', url: '/api/v1/posts', key: 'blog_guess-6-0123456789abcdefghij' });
  t.equal(limited.statusCode, 429);
  t.equal(limited.json().error.code, 'RATE_LIMITED');
  t.ok(Number(limited.headers['retry-after']) >= 1, `Retry-After ${limited.headers['retry-after']}`);
  t.match(limited.json().error.details, { limit: 5, retryAfter: Number });
  t.ok(limited.headers['x-request-id']);
  // Missing keys count too, and are refused the same way now.
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/posts', key: null, payload: { title: 'x' } })).statusCode, 429);
  // Another address has its own budget.
  const elsewhere = await ctx.call({ method: 'GET', url: '/api/v1/posts', remoteAddress: '203.0.113.9' } as never);
  t.equal(elsewhere.statusCode, 200, 'a valid key from another address works');
  // Public pages are not affected.
  t.equal((await ctx.call({ method: 'GET', url: '/health', key: null })).statusCode, 200);
});

t.test('0 turns the failed-authentication limit off', async (t) => {
  const ctx = await buildTestApp(t, { RATE_LIMIT_AUTH_FAIL_MAX: '0' });
  for (let i = 0; i < 20; i++) t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts', key: `blog_bad-${i}-0123456789abcdefghij` })).statusCode, 401);
});

t.test('a bad key takes no place in the key cache', async (t) => {
  const cache = new KeyLookupCache({ current: () => 1 }, 2);
  const generation = cache.checkSignal();
  const valid = { keyId: 'k', site: { id: 's', name: 'S' } };
  cache.set('valid', valid, generation);
  for (let i = 0; i < 10; i++) cache.set(`unknown-${i}`, null, generation);
  t.equal(cache.size, 1, 'only the valid key is kept');
  t.same(cache.get('valid'), valid, 'the valid key was not pushed out');
  t.equal(cache.get('unknown-1'), undefined, 'an unknown key is looked up again, never answered from the cache');
});
