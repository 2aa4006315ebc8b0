/**
 * Analytics with two instances of the real server on one PostgreSQL: each counts the views it
 * serves and writes them as increments, so the totals add up; a reader seen by both is one
 * visitor (both hash with the day's salt they share, and one insert of the hash wins).
 */
import t from 'tap';
import { waitFor } from '../helpers/app.js';
import { call, startInstances } from '../helpers/instances.js';
import { postgresTests, startPostgres } from '../helpers/postgres.js';

t.setTimeout(600_000);

const READER = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const OTHER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';

postgresTests(() => {
  t.test('views on both instances add up; a reader seen by both is one visitor', async (t) => {
    const url = await startPostgres(t);
    const [a, b] = await startInstances(t, 2, { DATABASE_URL: url });
    const post = (await call(a, 'POST', '/api/v1/posts', { body: { title: 'Read everywhere', isDraft: false } })).body.data.post;
    const page = `/sites/my-blog/${post.slug}/`;

    // At once on both: the same reader's hash is inserted by both instances' flushes.
    const reads = [];
    for (let i = 0; i < 10; i++) reads.push(call(i % 2 ? b : a, 'GET', page, { key: null, headers: { 'user-agent': READER } }));
    reads.push(call(b, 'GET', page, { key: null, headers: { 'user-agent': OTHER } }));
    reads.push(call(a, 'GET', page, { key: null, headers: { 'user-agent': 'curl/8.5.0' } }));
    for (const answer of await Promise.all(reads)) t.equal(answer.status, 200);

    const totals = await waitFor(async () => {
      const stats = (await call(b, 'GET', '/api/v1/stats')).body.data;
      return stats.totals.views === 11 && stats.totals;
    }, 'both instances to write their views');
    t.same(totals, { views: 11, visitors: 2 }, 'eleven views (the bot not counted), two visitors');
    const perPost = (await call(a, 'GET', `/api/v1/posts/${post.id}/stats`)).body.data;
    t.same(perPost.totals, { views: 11, visitors: 2 });
  });
});
