import { Webhook } from 'standardwebhooks';
import t, { type Test } from 'tap';
import { WEBHOOK_RETRY_WINDOW_MS, WEBHOOK_EVENTS } from '../../src/limits.js';
import { forbiddenReason } from '../../src/webhooks/address.js';
import { parseRetryAfter, sendWebhook, verdictFor } from '../../src/webhooks/sender.js';
import type { JobOutcome } from '../../src/jobs/loop.js';
import type { JobRow } from '../../src/jobs/store.js';
import type { AppGenerator } from '../../src/generation/service.js';
import { ISO_MS, UUID_V4, buildTestApp, waitFor, type TestApp, type TestAppOptions } from '../helpers/app.js';
import { jobRows } from '../helpers/job-rows.js';
import { startReceiver, type Receipt } from '../helpers/receiver.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** An app that may call loopback receivers, retries fast, and delivers on its own (it listens). */
async function deliveringApp(t: Test, env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const ctx = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '50', ...env }, options);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  return ctx;
}

async function createWebhook(ctx: TestApp, body: Json): Promise<Json> {
  const res = await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: body });
  if (res.statusCode !== 201) throw new Error(`webhook not created: ${res.statusCode} ${res.body}`);
  return res.json().data.webhook;
}

const createPost = async (ctx: TestApp, payload: Json) => (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload })).json().data.post;
const deliveries = async (ctx: TestApp, webhookId: string, query = '') => (await ctx.call({ method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries${query}` })).json().data;
const webhook = async (ctx: TestApp, id: string) => (await ctx.call({ method: 'GET', url: `/api/v1/webhooks/${id}` })).json().data.webhook;

const verify = (secret: string, receipt: Receipt) => new Webhook(secret).verify(receipt.body, receipt.headers as Record<string, string>) as Json;

t.test('endpoints: create shows the secret once; list, get, patch, delete; another site sees nothing', async (t) => {
  const ctx = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  const res = await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url: 'http://127.0.0.1:9/hook', events: ['post.published', 'post.published'], description: ' Rebuild ' } });
  t.equal(res.statusCode, 201);
  const created = res.json().data.webhook;
  t.match(created, { url: 'http://127.0.0.1:9/hook', events: ['post.published'], description: 'Rebuild', enabled: true, disabledReason: null, failingSince: null });
  t.match(created.id, UUID_V4);
  t.match(created.createdAt, ISO_MS);
  t.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ + base64 of 32 random bytes');
  t.same(res.json().data.site, ctx.site);

  const got = await webhook(ctx, created.id);
  t.notOk('secret' in got, 'never shown again');
  t.notOk('previousSecret' in got);
  const list = (await ctx.call({ method: 'GET', url: '/api/v1/webhooks' })).json().data;
  t.equal(list.pagination.total, 1);
  t.notOk('secret' in list.webhooks[0]);

  const patched = await ctx.call({ method: 'PATCH', url: `/api/v1/webhooks/${created.id}`, payload: { events: [...WEBHOOK_EVENTS], enabled: false } });
  t.equal(patched.statusCode, 200);
  t.match(patched.json().data.webhook, { enabled: false, disabledReason: 'Disabled through the API', events: [...WEBHOOK_EVENTS] });
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/webhooks/${created.id}`, payload: { enabled: true } })).json().data.webhook.disabledAt, null);

  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url: 'ftp://example.com/', events: ['post.created'] } })).statusCode, 400);
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url: 'https://u:p@example.com/', events: ['post.created'] } })).statusCode, 400);
  const badEvent = await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url: 'https://example.com/', events: ['post.exploded'] } });
  t.equal(badEvent.statusCode, 400);
  t.match(badEvent.json().error.message, /must be one of: post\.created, post\.updated/);
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url: 'https://example.com/', events: [] } })).statusCode, 400);

  const other = await ctx.addSite('Other');
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, key: other.key })).statusCode, 404);
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/webhooks/${created.id}`, key: other.key })).statusCode, 404);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/webhooks', key: other.key })).json().data.pagination.total, 0);

  const deleted = await ctx.call({ method: 'DELETE', url: `/api/v1/webhooks/${created.id}` });
  t.same(deleted.json().data, { message: 'Webhook deleted successfully', webhookId: created.id, site: ctx.site });
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/webhooks/${created.id}` })).statusCode, 404);
});

t.test('loopback, private, link-local and metadata addresses are refused unless WEBHOOK_ALLOW_PRIVATE=true', async (t) => {
  const ctx = await buildTestApp(t);
  for (const url of [
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://api.localhost/hook',
    'http://10.1.2.3/',
    'http://192.168.1.10/',
    'http://172.20.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.100.100.200/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
  ]) {
    const res = await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url, events: ['post.created'] } });
    t.equal(res.statusCode, 400, url);
    t.match(res.json().error, { code: 'VALIDATION_ERROR', details: [{ path: '/body/url' }] });
    t.match(res.json().error.message, /only call public addresses \(WEBHOOK_ALLOW_PRIVATE=true allows others\)/);
  }
  const publicUrl = await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url: 'http://93.184.215.14/hook', events: ['post.created'] } });
  t.equal(publicUrl.statusCode, 201, 'a public address is accepted');
});

t.test('a name that resolves to a private address at delivery time is refused then, and nothing is sent', async (t) => {
  const receiver = await startReceiver(t);
  // Created while its name "did not resolve", delivered while it points at this machine.
  const ctx = await buildTestApp(t, { WEBHOOK_RETRY_BASE_MS: '50' }, { webhooks: { checkDestination: async () => {} } });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const hook = await createWebhook(ctx, { url: receiver.url.replace('127.0.0.1', 'localhost'), events: ['post.created'] });
  await createPost(ctx, { title: 'Refused' });
  const [delivery] = await waitFor(async () => {
    const list = (await deliveries(ctx, hook.id)).deliveries;
    return list[0]?.status === 'failed' && list;
  }, 'the refused delivery');
  t.equal(delivery.attempts, 1, 'refused once, never retried');
  t.match(delivery.lastError, /localhost resolves to 127\.0\.0\.1, a loopback address/);
  t.equal(receiver.receipts.length, 0, 'nothing reached the receiver');
});

t.test('post events: signed as Standard Webhooks, the post as the API shows it, one webhook-id per delivery', async (t) => {
  const receiver = await startReceiver(t);
  const ctx = await deliveringApp(t);
  const hook = await createWebhook(ctx, { url: `${receiver.url}/all`, events: [...WEBHOOK_EVENTS] });
  const onlyPublished = await createWebhook(ctx, { url: `${receiver.url}/published`, events: ['post.published'] });

  const post = await createPost(ctx, { title: 'Hello hooks', content: '# Hi', isDraft: false, tags: ['a'] });
  const first = await receiver.received(3);
  const all = first.filter((r) => r.headers['webhook-signature'] && r.body);
  const types = all.map((r) => `${r.json().type}`).sort();
  t.same(types, ['post.created', 'post.published', 'post.published']);

  for (const receipt of all) {
    t.match(receipt.headers['content-type'], /^application\/json/);
    t.match(receipt.headers['webhook-id'], UUID_V4);
    t.match(receipt.headers['webhook-timestamp'], /^\d{10}$/);
    t.match(receipt.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
  }
  const bySecret = (secret: string) =>
    all.filter((receipt) => {
      try {
        verify(secret, receipt);
        return true;
      } catch {
        return false;
      }
    });
  t.equal(bySecret(hook.secret).length, 2, "the endpoint's two deliveries verify with its secret (standardwebhooks)");
  t.equal(bySecret(onlyPublished.secret).length, 1, 'the other endpoint gets post.published only, signed with its own secret');
  t.throws(() => new Webhook(hook.secret).verify(all[0].body.replace('Hello', 'Jello'), all[0].headers as Record<string, string>), 'a changed body does not verify');

  const verified = verify(hook.secret, bySecret(hook.secret)[0]);
  const apiPost = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${post.id}` })).json().data.post;
  t.same(verified.data.post, apiPost, 'the resource exactly as GET /api/v1/posts/:id shows it');
  t.same(verified.data.site, ctx.site);
  t.match(verified.timestamp, ISO_MS);
  t.equal(new Set(all.map((r) => r.headers['webhook-id'])).size, 3, 'each delivery its own webhook-id');

  await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${post.id}`, payload: { title: 'Hello again' } });
  await ctx.call({ method: 'PUT', url: `/api/v1/posts/${post.id}` });
  await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${post.id}` });
  await receiver.received(6);
  // Deliveries run side by side (WEBHOOK_CONCURRENCY), so they may arrive in any order; each
  // event is stamped with the time of its change.
  const later = receiver.receipts
    .slice(3)
    .map((r) => verify(hook.secret, r))
    .sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  t.same(later.map((p) => p.type), ['post.updated', 'post.unpublished', 'post.deleted'], 'edit, unpublish, delete, stamped in order');
  t.same(later[0].data.previous, { title: 'Hello hooks' }, 'an edit says what changed from');
  t.equal(later[0].data.post.title, 'Hello again');
  t.equal(later[2].data.post.id, post.id, 'a deleted post as it was');

  // The receiver has them all; each attempt is recorded just after its answer.
  const list = await waitFor(async () => {
    const page = await deliveries(ctx, hook.id);
    return page.deliveries.every((d: Json) => d.status === 'succeeded') && page;
  }, 'five recorded deliveries');
  t.equal(list.pagination.total, 5);
  t.ok(list.deliveries.every((d: Json) => d.attempts === 1 && d.lastResponseStatus === 200));
  t.match(list.deliveries[0].attemptLog, [{ attempt: 1, outcome: 'succeeded', responseStatus: 200, responseBody: 'ok', error: null }]);
  t.match(list.deliveries[0].deliveredAt, ISO_MS);
});

t.test('a 500 is retried with the same webhook-id; Retry-After is honoured; other 4xx and redirects stop', async (t) => {
  const answers: [number, Record<string, string>?][] = [];
  const receiver = await startReceiver(t, (_receipt, index, res) => {
    const [status, headers] = answers[index] ?? [200];
    res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(`answer ${index}`);
  });
  const ctx = await deliveringApp(t);
  const hook = await createWebhook(ctx, { url: receiver.url, events: ['post.created'] });

  answers.push([500], [200]);
  await createPost(ctx, { title: 'Flaky' });
  const [failed, delivered] = await receiver.received(2);
  t.equal(failed.headers['webhook-id'], delivered.headers['webhook-id'], 'a retry is the same message');
  t.equal(failed.body, delivered.body, 'with the same body');
  verify(hook.secret, delivered);
  const [d1] = await waitFor(async () => {
    const list = (await deliveries(ctx, hook.id)).deliveries;
    return list[0]?.status === 'succeeded' && list;
  }, 'delivered after a retry');
  t.equal(d1.attempts, 2);
  t.match(d1.attemptLog, [
    { attempt: 2, outcome: 'succeeded', responseStatus: 200 },
    { attempt: 1, outcome: 'retry', responseStatus: 500, error: 'HTTP 500', responseBody: 'answer 0' },
  ]);

  answers.push([429, { 'retry-after': '1' }], [200]);
  await createPost(ctx, { title: 'Throttled' });
  const [, , limited, afterwards] = await receiver.received(4);
  t.ok(afterwards.at - limited.at >= 950, `waited for Retry-After: 1 (${afterwards.at - limited.at} ms; the backoff alone is ~50 ms)`);

  answers.push([410]);
  await createPost(ctx, { title: 'Gone' });
  answers.push([302, { location: `${receiver.url}/elsewhere` }]);
  await createPost(ctx, { title: 'Moved' });
  const settled = await waitFor(async () => {
    const list = (await deliveries(ctx, hook.id, '?status=failed')).deliveries;
    return list.length === 2 && list;
  }, 'two failed deliveries');
  t.match(settled.find((d: Json) => d.lastResponseStatus === 410), { attempts: 1, status: 'failed', lastError: 'HTTP 410', nextAttemptAt: null });
  t.match(settled.find((d: Json) => d.lastResponseStatus === 302).lastError, /Redirects are not followed \(HTTP 302 to http:\/\/127\.0\.0\.1:\d+\/elsewhere\)/);
  t.equal(receiver.receipts.length, 6, 'one attempt each; the redirect was not followed');
  t.equal((await deliveries(ctx, hook.id, '?status=succeeded')).pagination.total, 2);
});

t.test('timeouts are retried; a large answer is read to 64 KB only', async (t) => {
  let mode: 'hang' | 'big' | 'ok' = 'hang';
  const receiver = await startReceiver(t, (_receipt, _index, res) => {
    if (mode === 'hang') return void (mode = 'big');
    if (mode === 'big') {
      mode = 'ok';
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.write('x'.repeat(1024 * 1024));
      return void res.end();
    }
    res.writeHead(204).end();
  });
  const ctx = await deliveringApp(t, { WEBHOOK_TIMEOUT_MS: '300' });
  const hook = await createWebhook(ctx, { url: receiver.url, events: ['post.created'] });
  await createPost(ctx, { title: 'Slow' });
  const [delivery] = await waitFor(async () => {
    const list = (await deliveries(ctx, hook.id)).deliveries;
    return list[0]?.status === 'succeeded' && list;
  }, 'delivered on the third attempt');
  t.equal(delivery.attempts, 3);
  const [third, second, first] = delivery.attemptLog;
  t.match(first, { outcome: 'retry', responseStatus: null, error: /No complete answer within 300 ms/ });
  t.ok(first.durationMs >= 290 && first.durationMs < 2000, `cut at the timeout (${first.durationMs} ms)`);
  t.match(second, { outcome: 'retry', responseStatus: 503 });
  t.equal(second.responseBody.length, 1000, 'an excerpt is kept');
  t.match(third, { outcome: 'succeeded', responseStatus: 204 });
});

t.test('an endpoint failing for a day is disabled and says so; re-enabled, its deliveries can be retried', async (t) => {
  let now = Date.parse('2026-06-01T00:00:00.000Z');
  let healthy = false;
  const receiver = await startReceiver(t, (_receipt, _index, res) => res.writeHead(healthy ? 200 : 500).end(healthy ? 'ok' : 'down'));
  const ctx = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true' }, { jobs: { autoStart: false, clock: { now: () => now }, random: () => 0.5 } });
  const loop = ctx.app.webhookDeliveries;
  const hook = await createWebhook(ctx, { url: receiver.url, events: ['post.created'] });
  await createPost(ctx, { title: 'Never arrives' });

  const nextDue = () => jobRows(ctx.app).nextDue('webhook-delivery');
  const gaps: number[] = [];
  for (let i = 0; i < 200; i++) {
    await loop.tick();
    await loop.whenIdle();
    const next = await nextDue();
    if (next === undefined) break;
    gaps.push(next - now);
    now = Math.max(now, next);
    if (i === 3) await createPost(ctx, { title: 'Queued behind' }); // a second delivery, failing alongside
  }
  const state = await webhook(ctx, hook.id);
  t.equal(state.enabled, false, 'disabled');
  t.match(state.disabledReason, /^Disabled automatically on 2026-06-02T00:00:00\.000Z: every attempt since 2026-06-01T00:00:00\.000Z failed .*last error: HTTP 500/);
  t.equal(state.failingSince, '2026-06-01T00:00:00.000Z');
  t.equal(state.disabledAt, '2026-06-02T00:00:00.000Z');
  t.same(gaps.slice(0, 4), [3750, 7500, 15_000, 30_000], 'exponential backoff from WEBHOOK_RETRY_BASE_MS (5 s), with jitter (here 0.75)');
  t.ok(Math.max(...gaps) <= 3 * 3_600_000, 'never more than 3 h apart');

  const list = (await deliveries(ctx, hook.id)).deliveries as Json[];
  t.equal(list.length, 2);
  const [second, first] = list;
  t.equal(first.status, 'failed');
  t.equal(first.lastAttemptAt, new Date(Date.parse('2026-06-01T00:00:00.000Z') + WEBHOOK_RETRY_WINDOW_MS).toISOString(), 'the last attempt a day after the first');
  t.ok(first.attempts > 10, `${first.attempts} attempts over the day`);
  t.match(first.lastError, /HTTP 500/);
  t.equal(second.status, 'failed', 'a delivery still queued fails with its endpoint');
  t.match(second.lastError, /Not sent: Disabled automatically|the webhook was disabled/);

  await createPost(ctx, { title: 'While disabled' });
  t.equal((await deliveries(ctx, hook.id)).pagination.total, 2, 'nothing is queued for a disabled endpoint');
  const refused = await ctx.call({ method: 'POST', url: `/api/v1/webhooks/${hook.id}/deliveries/${first.id}/retry` });
  t.equal(refused.statusCode, 409);
  t.match(refused.json().error.message, /disabled/);

  healthy = true;
  const enabled = (await ctx.call({ method: 'PATCH', url: `/api/v1/webhooks/${hook.id}`, payload: { enabled: true } })).json().data.webhook;
  t.match(enabled, { enabled: true, disabledReason: null, failingSince: null });
  const retried = await ctx.call({ method: 'POST', url: `/api/v1/webhooks/${hook.id}/deliveries/${first.id}/retry` });
  t.equal(retried.statusCode, 202);
  t.match(retried.json().data.delivery, { id: first.id, status: 'pending' });
  t.equal((await ctx.call({ method: 'POST', url: `/api/v1/webhooks/${hook.id}/deliveries/${first.id}/retry` })).statusCode, 409, 'not twice while queued');
  const before = receiver.receipts.length;
  await loop.tick();
  await loop.whenIdle();
  t.equal(receiver.receipts.length, before + 1);
  t.equal(receiver.receipts.at(-1)!.headers['webhook-id'], first.id, 'sent again with its own webhook-id');
  const after = (await deliveries(ctx, hook.id)).deliveries.find((d: Json) => d.id === first.id);
  t.match(after, { status: 'succeeded', lastResponseStatus: 200, lastError: null });
  t.equal((await webhook(ctx, hook.id)).lastSuccessAt, new Date(now).toISOString());
});

t.test('rotating the secret: both secrets sign for a day, so receivers switch without losing events', async (t) => {
  const receiver = await startReceiver(t);
  const ctx = await deliveringApp(t);
  const hook = await createWebhook(ctx, { url: receiver.url, events: ['post.created'] });
  const rotated = await ctx.call({ method: 'POST', url: `/api/v1/webhooks/${hook.id}/rotate-secret` });
  t.equal(rotated.statusCode, 200);
  const fresh = rotated.json().data.webhook;
  t.not(fresh.secret, hook.secret);
  t.match(fresh.previousSecretExpiresAt, ISO_MS);
  await createPost(ctx, { title: 'Rotated' });
  const [receipt] = await receiver.received(1);
  t.equal(receipt.headers['webhook-signature']!.toString().split(' ').length, 2);
  t.equal(verify(fresh.secret, receipt).type, 'post.created', 'verifies with the new secret');
  t.equal(verify(hook.secret, receipt).type, 'post.created', 'and with the previous one');
});

t.test('task.succeeded and task.failed carry the task as GET /api/v1/tasks/:id shows it', async (t) => {
  const receiver = await startReceiver(t);
  const failing: AppGenerator = {
    generate: async () => {
      throw Object.assign(new Error('the model refused'), { permanent: true });
    },
    status: async () => ({ mode: 'ollama', active: 'ollama', ollama: { host: 'http://127.0.0.1:9', model: 'm', reachable: true, modelAvailable: true } }),
  };
  const ctx = await deliveringApp(t);
  const hook = await createWebhook(ctx, { url: receiver.url, events: ['task.succeeded', 'task.failed'] });
  const batch = await ctx.call({ method: 'POST', url: '/api/v1/posts/batch', payload: { posts: [{ topic: 'Espresso basics' }] } });
  t.equal(batch.statusCode, 202);
  const [taskId] = batch.json().data.taskIds;
  const [receipt] = await receiver.received(1);
  const event = verify(hook.secret, receipt);
  t.equal(event.type, 'task.succeeded');
  const task = (await ctx.call({ method: 'GET', url: `/api/v1/tasks/${taskId}` })).json().data.task;
  t.same(event.data.task, { ...task, finishedAt: event.data.task.finishedAt }, 'the task view');
  t.equal(event.data.task.status, 'succeeded');
  t.equal(event.data.task.postId, task.postId);

  const broken = await deliveringApp(t, {}, { generator: failing });
  const brokenHook = await createWebhook(broken, { url: receiver.url, events: ['task.failed'] });
  await broken.call({ method: 'POST', url: '/api/v1/posts/batch', payload: { posts: [{ topic: 'Doomed' }] } });
  const failedEvent = verify(brokenHook.secret, (await receiver.received(2))[1]);
  t.equal(failedEvent.type, 'task.failed');
  t.match(failedEvent.data.task, { status: 'failed', topic: 'Doomed', postId: null });
  t.ok(failedEvent.data.task.lastError);
});

t.test('knowledge events: what the indexer tells, in its transaction, is delivered', async (t) => {
  const receiver = await startReceiver(t);
  const ctx = await deliveringApp(t);
  const hook = await createWebhook(ctx, { url: receiver.url, events: ['knowledge.indexed', 'knowledge.failed'] });
  const now = new Date();
  const file = {
    id: '6f1c3f0e-7d59-4c3e-9b1e-0a7f5f0e2a11',
    siteId: ctx.site.id,
    name: 'guide.md',
    extension: 'md',
    mediaType: 'text/markdown',
    sizeBytes: 2048,
    status: 'indexed' as const,
    error: null,
    chunkCount: 3,
    storageKey: `${ctx.site.id}/knowledge/6f1c3f0e-7d59-4c3e-9b1e-0a7f5f0e2a11.md`,
    createdAt: now,
    updatedAt: now,
  };
  await jobRows(ctx.app).knowledgeSettled([file, { ...file, status: 'failed', error: 'No text found' }, { ...file, status: 'uploaded' }]);
  const receipts = await receiver.received(2);
  const events = receipts.map((r) => verify(hook.secret, r));
  t.same(events.map((e) => e.type).sort(), ['knowledge.failed', 'knowledge.indexed']);
  t.match(events.find((e) => e.type === 'knowledge.indexed')!.data.knowledge, { id: file.id, name: 'guide.md', type: 'text/markdown', status: 'indexed', size: '2.0 KB', chunkCount: 3, error: null });
  t.equal(events[0].data.site.id, ctx.site.id);
});

t.test('the outbox commits with the change: a rolled-back change queues nothing', async (t) => {
  const ctx = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true' }, { jobs: { autoStart: false } });
  await createWebhook(ctx, { url: 'http://127.0.0.1:9/', events: ['post.created'] });
  const rows = jobRows(ctx.app);
  const count = async () => (await rows.deliveryCount()) + (await rows.jobCount('webhook-delivery'));
  await t.rejects(rows.rolledBackPost(ctx.site.id, { title: 'Rolled back' }), /abort/);
  t.equal(await count(), 0);
  await createPost(ctx, { title: 'Kept' });
  t.equal(await count(), 2, 'one delivery, one attempt job');
});

t.test('task listener ignores other kinds', async (t) => {
  const ctx = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true' }, { jobs: { autoStart: false } });
  await createWebhook(ctx, { url: 'http://127.0.0.1:9/', events: ['task.succeeded'] });
  await jobRows(ctx.app).taskSettled({ kind: 'something-else', siteId: ctx.site.id } as JobRow, { status: 'succeeded', result: null } as JobOutcome);
  t.equal(await jobRows(ctx.app).deliveryCount(), 0);
});

t.test('addresses: loopback, private, link-local, metadata and the IPv6 forms that carry them', async (t) => {
  const forbidden = [
    '127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1', '100.100.100.200',
    '0.0.0.0', '255.255.255.255', '224.0.0.1', '192.0.0.192', '198.18.0.1', '::', '::1', 'fe80::1', 'fd00:ec2::254', 'fc00::1', 'ff02::1',
    '::ffff:10.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:8.8.8.8', '64:ff9b::a00:1', '2002:c0a8:0101::1', '2001:db8::1', '2001:0:4136:e378::1',
  ];
  for (const address of forbidden) t.ok(forbiddenReason(address), `${address}: ${forbiddenReason(address)}`);
  for (const address of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2002:0808:0808::1', '64:ff9b::808:808']) {
    t.equal(forbiddenReason(address), null, `${address} is public`);
  }
});

t.test('receivers: Retry-After in seconds or as a date; which answers are retried', async (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  t.equal(parseRetryAfter('120', now), 120_000);
  t.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now), 30_000);
  t.equal(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now), 0, 'a date in the past: at once');
  t.equal(parseRetryAfter('soon', now), null);
  t.equal(parseRetryAfter(undefined, now), null);
  t.same([200, 204, 299].map(verdictFor), ['succeeded', 'succeeded', 'succeeded']);
  t.same([408, 409, 429, 500, 502, 503, 504].map(verdictFor), Array(7).fill('retry'));
  t.same([400, 401, 403, 404, 410, 413, 422].map(verdictFor), Array(7).fill('failed'));
  const refused = await sendWebhook('http://127.0.0.1:9/', {}, '{}', { timeoutMs: 1000, allowPrivate: false });
  t.match(refused, { verdict: 'failed', status: null, error: /127\.0\.0\.1, a loopback address/ });
  const closed = await sendWebhook('http://127.0.0.1:9/', {}, '{}', { timeoutMs: 1000, allowPrivate: true });
  t.match(closed, { verdict: 'retry', status: null, error: /ECONNREFUSED/ }, 'a connection error is retried');
  t.match(await sendWebhook('file:///etc/passwd', {}, '{}', { timeoutMs: 1000, allowPrivate: true }), { verdict: 'failed', error: /Only http and https/ });
});
