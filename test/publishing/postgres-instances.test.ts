/**
 * Scheduled publishing with two instances of the real server on one PostgreSQL: both poll the
 * queue, each post is published once, and one webhook receiver sees one `post.published` per post.
 */
import t from 'tap';
import { call, startInstances } from '../helpers/instances.js';
import { postgresTests, startPostgres } from '../helpers/postgres.js';
import { startReceiver } from '../helpers/receiver.js';

t.setTimeout(600_000);

postgresTests(() => {
  t.test('two instances publish each scheduled post once: one post.published each', async (t) => {
    const url = await startPostgres(t);
    const receiver = await startReceiver(t);
    const [a, b] = await startInstances(t, 2, { DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true' });
    const hook = await call(a, 'POST', '/api/v1/webhooks', { body: { url: `${receiver.url}/hook`, events: ['post.published'] } });
    t.equal(hook.status, 201);

    // Ten posts falling due together, a few seconds ahead, written on both instances.
    const publishAt = new Date(Date.now() + 4000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const created = await call(i % 2 ? b : a, 'POST', '/api/v1/posts', { body: { title: `Scheduled ${i}`, publishAt } });
      t.equal(created.status, 201);
      ids.push(created.body.data.post.id);
    }
    const scheduled = await call(b, 'GET', '/api/v1/posts?status=scheduled&limit=20');
    t.equal(scheduled.body.data.pagination.total, 10);

    const receipts = await receiver.received(10, 60_000);
    const published = receipts.map((receipt) => receipt.json()).filter((event) => event.type === 'post.published');
    t.same(published.map((event) => event.data.post.id).sort(), [...ids].sort(), 'one post.published for each post');
    for (const id of ids) {
      const post = (await call(a, 'GET', `/api/v1/posts/${id}`)).body.data.post;
      t.match(post, { isDraft: false, publishedAt: publishAt, publishAt: null });
    }
    // Every event is a delivery row written with the change (the outbox): a second publication would be a second row.
    const deliveries = await call(b, 'GET', `/api/v1/webhooks/${hook.body.data.webhook.id}/deliveries?limit=100`);
    t.equal(deliveries.body.data.deliveries.length, 10, 'ten events in all, none doubled');
    t.equal(receiver.receipts.filter((receipt) => receipt.json().type === 'post.published').length, 10);
  });
});
