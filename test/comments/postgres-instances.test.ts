/**
 * Comments with two instances of the real server on one PostgreSQL: a page cached on one
 * instance follows a comment approved, then deleted, on the other (the site's content version),
 * and so do the content API's answers.
 */
import t from 'tap';
import { call, startInstances } from '../helpers/instances.js';
import { postgresTests, startPostgres } from '../helpers/postgres.js';

t.setTimeout(300_000);

postgresTests(() => {
  t.test('approved on one instance, shown by the other; deleted, gone from both', async (t) => {
    const url = await startPostgres(t);
    const [a, b] = await startInstances(t, 2, { DATABASE_URL: url, SPAM_GUARD_RATE_MAX: '0' });
    const handle = (await call(a, 'GET', '/api/v1/site')).body.data.site.handle;
    const post = (await call(a, 'POST', '/api/v1/posts', { body: { title: 'Two instances', content: 'One database.', isDraft: false } })).body.data.post;
    const page = `/sites/${handle}/${post.slug}/`;
    const api = `/content/v1/sites/${handle}/posts/${post.slug}/comments`;

    // Both instances render and keep the page, and the API's answer, before any comment.
    for (const service of [a, b]) {
      t.match((await call(service, 'GET', page, { key: null })).text, 'No comments yet');
      t.equal((await call(service, 'GET', api, { key: null })).body.data.pagination.total, 0);
    }

    const sent = await call(b, 'POST', api, { key: null, body: { name: 'Ada', body: 'Seen from both.' } });
    t.equal(sent.status, 201);
    t.equal(sent.body.data.comment.status, 'pending');
    t.equal((await call(a, 'GET', '/api/v1/comments?status=pending')).body.data.pending, 1, 'the other instance lists it');

    t.equal((await call(a, 'PATCH', `/api/v1/comments/${sent.body.data.comment.id}`, { body: { status: 'approved' } })).status, 200);
    for (const service of [b, a]) {
      const html = (await call(service, 'GET', page, { key: null })).text;
      t.match(html, '1 comment');
      t.match(html, 'Seen from both.');
      t.equal((await call(service, 'GET', api, { key: null })).body.data.pagination.total, 1);
    }

    t.equal((await call(b, 'DELETE', `/api/v1/comments/${sent.body.data.comment.id}`)).status, 200);
    for (const service of [a, b]) {
      t.match((await call(service, 'GET', page, { key: null })).text, 'No comments yet');
      t.equal((await call(service, 'GET', api, { key: null })).body.data.pagination.total, 0);
    }
  });
});
