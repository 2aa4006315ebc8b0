/**
 * Webhook events of comments: `comment.created` with its status and `comment.approved`, with
 * what readers may see of the comment and its post; never the email or the hold reason, and
 * nothing for spam.
 */
import t from 'tap';
import { buildTestApp } from '../helpers/app.js';
import { startReceiver } from '../helpers/receiver.js';

t.test('comment.created (pending) and comment.approved reach the endpoint without the email; spam tells nobody', async (t) => {
  const receiver = await startReceiver(t);
  const ctx = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true', SPAM_GUARD_RATE_MAX: '0' });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const hook = await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url: receiver.url, events: ['comment.created', 'comment.approved'] } });
  t.equal(hook.statusCode, 201, hook.body);
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Pier at dusk', isDraft: false } })).json().data.post;
  const url = `/content/v1/sites/my-blog/posts/${post.slug}/comments`;

  await ctx.app.inject({ method: 'POST', url, payload: { name: 'Bot', body: 'cheap pills', website: 'filled' } });
  const sent = (await ctx.app.inject({ method: 'POST', url, payload: { name: 'Ada', email: 'ada@example.com', body: 'Lovely light.' } })).json().data.comment;
  await ctx.call({ method: 'PATCH', url: `/api/v1/comments/${sent.id}`, payload: { status: 'approved' } });

  const [created, approved] = (await receiver.received(2)).map((receipt) => receipt.json());
  t.match(created, { type: 'comment.created', data: { comment: { id: sent.id, status: 'pending', authorName: 'Ada', body: 'Lovely light.', html: '<p>Lovely light.</p>' }, post: { id: post.id, title: 'Pier at dusk', slug: post.slug } } });
  t.match(approved, { type: 'comment.approved', data: { comment: { id: sent.id, status: 'approved' } } });
  for (const receipt of receiver.receipts) {
    t.notMatch(receipt.body, /ada@example\.com|authorEmail|heldFor|no proof of work/, 'no email, no hold reason');
    t.notMatch(receipt.body, 'cheap pills', 'spam is told to nobody');
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(receiver.receipts.length, 2, 'nothing more');
});
