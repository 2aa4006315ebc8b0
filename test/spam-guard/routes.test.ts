/** The spam guard as the public forms reach it: a challenge per form shown, and the widget's files served here. */
import t from 'tap';
import { buildTestApp } from '../helpers/app.js';
import { solve } from './helpers.js';

t.test('GET /content/v1/sites/<handle>/challenge: a new signed challenge per call, never cached, open to any origin', async (t) => {
  const ctx = await buildTestApp(t, { SPAM_GUARD_DIFFICULTY: '300' });
  const first = await ctx.call({ method: 'GET', url: '/content/v1/sites/my-blog/challenge?form=comment', key: null });
  t.equal(first.statusCode, 200);
  t.equal(first.headers['cache-control'], 'no-store');
  t.equal(first.headers['access-control-allow-origin'], '*');
  const challenge = first.json();
  t.match(challenge, { parameters: { algorithm: 'SHA-256', data: { site: ctx.site.id, form: 'comment' } }, signature: /^[0-9a-f]{64}$/ });
  t.not((await ctx.call({ method: 'GET', url: '/content/v1/sites/my-blog/challenge?form=comment', key: null })).json().parameters.nonce, challenge.parameters.nonce);

  // What the widget would send is accepted once by the guard.
  const proof = await solve(challenge);
  const verdict = await ctx.app.spamGuard.check({ siteId: ctx.site.id, form: 'comment', clientAddress: '127.0.0.1', proof, texts: ['hi'], blockedWords: [] });
  t.not(verdict.outcome, 'refuse');

  t.equal((await ctx.call({ method: 'GET', url: '/content/v1/sites/my-blog/challenge?form=other', key: null })).statusCode, 400);
  t.equal((await ctx.call({ method: 'GET', url: '/content/v1/sites/my-blog/challenge', key: null })).statusCode, 400);
  t.equal((await ctx.call({ method: 'GET', url: '/content/v1/sites/nobody/challenge?form=comment', key: null })).statusCode, 404);
});

t.test('the widget, its stylesheet and worker are served by the service itself', async (t) => {
  const ctx = await buildTestApp(t);
  for (const [file, type] of [
    ['altcha.js', 'text/javascript'],
    ['altcha.css', 'text/css'],
    ['sha-worker.js', 'text/javascript'],
    ['spam-guard.js', 'text/javascript'],
  ] as const) {
    const answer = await ctx.call({ method: 'GET', url: `/spam-guard/${file}`, key: null });
    t.equal(answer.statusCode, 200, file);
    t.match(answer.headers['content-type'], type);
    t.ok(answer.body.length > 100);
    t.notOk(answer.headers['set-cookie'], 'no cookie');
    const again = await ctx.call({ method: 'GET', url: `/spam-guard/${file}`, key: null, headers: { 'if-none-match': String(answer.headers.etag) } });
    t.equal(again.statusCode, 304);
  }
  t.notMatch((await ctx.call({ method: 'GET', url: '/spam-guard/altcha.js', key: null })).body, /https?:\/\/[^"'\s]*cdn/i, 'loads nothing from a CDN');
  t.equal((await ctx.call({ method: 'GET', url: '/spam-guard/package.json', key: null })).statusCode, 404);
});
