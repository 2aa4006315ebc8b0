import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { PUBLISH_POST } from '../../src/publishing/scheduled.js';
import { BOOTSTRAP_KEY, buildTestApp, fixturesDir, ISO_MS, onPostgres, startService, tempDataDir, waitFor, type Service, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Scheduled publishing through the API. The publication loop runs on a clock the test moves
 * (the API's own checks use real time, so schedules lie an hour or more ahead); `tick()` is one
 * poll of the loop, as the timer would run it.
 */
async function scheduledApp(t: Test): Promise<{ ctx: TestApp; clock: { ms: number; now(): number }; base: string; webhookId: string }> {
  const clock = { ms: Date.now(), now() { return this.ms; } };
  const ctx = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true' }, { jobs: { autoStart: false, clock }, webhooks: { autoStart: false } });
  const handle = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site.handle;
  // Deliveries wait (the delivery loop is not started): each is a record of one event.
  const hook = await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url: 'http://127.0.0.1:9/hook', events: ['post.published', 'post.updated'] } });
  return { ctx, clock, base: `/sites/${handle}`, webhookId: hook.json().data.webhook.id };
}

const hoursAhead = (hours: number) => new Date(Date.now() + hours * 3_600_000);
const create = (ctx: TestApp, payload: Json) => ctx.call({ method: 'POST', url: '/api/v1/posts', payload });
const patch = (ctx: TestApp, id: string, payload: Json) => ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload });
const getPost = async (ctx: TestApp, id: string) => (await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}` })).json().data.post;
const listIds = async (ctx: TestApp, status: string) => (await ctx.call({ method: 'GET', url: `/api/v1/posts?status=${status}` })).json().data.posts.map((post: Json) => post.id);
const publicStatus = async (ctx: TestApp, base: string, slug: string) => (await ctx.call({ method: 'GET', url: `${base}/${slug}/`, key: null })).statusCode;
const events = async (ctx: TestApp, webhookId: string, type: string) =>
  (await ctx.call({ method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries?limit=100` })).json().data.deliveries.filter((d: Json) => d.event === type).length;
const pendingPublications = (ctx: TestApp) => ctx.count(`select count(*) as n from jobs where kind = '${PUBLISH_POST}' and status = 'pending'`);

t.test('a post scheduled on create is a draft until its time, then published once as of that time', async (t) => {
  const { ctx, clock, base, webhookId } = await scheduledApp(t);
  const publishAt = hoursAhead(2);
  const res = await create(ctx, { title: 'Out on Friday', content: '# Hello', publishAt: publishAt.toISOString().replace('Z', '+00:00') });
  t.equal(res.statusCode, 201);
  const { id, slug } = res.json().data.post;
  t.equal(res.json().data.post.isDraft, true, 'created a draft (the create answer keeps the spec shape)');
  t.match(await getPost(ctx, id), { isDraft: true, publishAt: publishAt.toISOString(), publishedAt: null });
  t.same(await listIds(ctx, 'scheduled'), [id], 'listed as scheduled');
  t.same(await listIds(ctx, 'draft'), [id], 'and among the drafts (it is one)');
  t.same(await listIds(ctx, 'published'), []);
  t.equal(await publicStatus(ctx, base, slug), 404, 'on no public page');
  t.notMatch((await ctx.call({ method: 'GET', url: `${base}/rss.xml`, key: null })).body, /Out on Friday/, 'nor in the feed');
  t.equal(await pendingPublications(ctx), 1, 'its publication is a job of the queue');

  clock.ms = publishAt.getTime() - 1000;
  await ctx.app.publishing.tick();
  t.equal((await getPost(ctx, id)).isDraft, true, 'a second early: still a draft');

  // The loop gets there late (a busy or stopped server): publishedAt is still the scheduled time.
  clock.ms = publishAt.getTime() + 90_000;
  await ctx.app.publishing.tick();
  await ctx.app.publishing.whenIdle();
  const published = await getPost(ctx, id);
  t.match(published, { isDraft: false, publishedAt: publishAt.toISOString(), publishAt: null });
  t.equal(await publicStatus(ctx, base, slug), 200, 'public now');
  t.same(await listIds(ctx, 'scheduled'), []);
  t.equal(await events(ctx, webhookId, 'post.published'), 1, 'post.published once');

  await ctx.app.publishing.tick();
  t.equal(await events(ctx, webhookId, 'post.published'), 1, 'and not again');
  t.equal(await ctx.count(`select count(*) as n from jobs where kind = '${PUBLISH_POST}' and status = 'succeeded'`), 1);
});

t.test('moving, cancelling, publishing now and deleting keep the job in step', async (t) => {
  const { ctx, clock, webhookId } = await scheduledApp(t);
  const first = hoursAhead(1);
  const { id } = (await create(ctx, { title: 'Moved', publishAt: first.toISOString() })).json().data.post;

  const later = hoursAhead(3);
  const moved = await patch(ctx, id, { publishAt: later.toISOString() });
  t.equal(moved.statusCode, 200);
  t.equal(moved.json().data.post.publishAt, later.toISOString());
  t.equal(await pendingPublications(ctx), 1, 'the old job cancelled, a new one queued');
  clock.ms = first.getTime() + 1000;
  await ctx.app.publishing.tick();
  t.equal((await getPost(ctx, id)).isDraft, true, 'not published at the old time');
  clock.ms = later.getTime() + 1000;
  await ctx.app.publishing.tick();
  await ctx.app.publishing.whenIdle();
  t.match(await getPost(ctx, id), { isDraft: false, publishedAt: later.toISOString() }, 'published at the new time');

  // Cancelled by null: stays a draft.
  const { id: cancelledId } = (await create(ctx, { title: 'Cancelled', publishAt: hoursAhead(4).toISOString() })).json().data.post;
  t.match((await patch(ctx, cancelledId, { publishAt: null })).json().data.post, { isDraft: true, publishAt: null });
  t.equal(await pendingPublications(ctx), 0);

  // Published now by a toggle or isDraft: false: the schedule goes, publishedAt is now.
  const { id: toggledId } = (await create(ctx, { title: 'Toggled', publishAt: hoursAhead(5).toISOString() })).json().data.post;
  const toggled = await ctx.call({ method: 'PUT', url: `/api/v1/posts/${toggledId}` });
  t.equal(toggled.json().data.post.isDraft, false);
  t.match(await getPost(ctx, toggledId), { publishAt: null, publishedAt: ISO_MS });
  const { id: nowId } = (await create(ctx, { title: 'Now', publishAt: hoursAhead(5).toISOString() })).json().data.post;
  t.match((await patch(ctx, nowId, { isDraft: false })).json().data.post, { isDraft: false, publishAt: null });
  t.equal(await pendingPublications(ctx), 0, 'both jobs cancelled');

  // Deleted: its job goes with it.
  const { id: deletedId } = (await create(ctx, { title: 'Deleted', publishAt: hoursAhead(6).toISOString() })).json().data.post;
  t.equal(await pendingPublications(ctx), 1);
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${deletedId}` })).statusCode, 200);
  t.equal(await pendingPublications(ctx), 0);

  clock.ms = hoursAhead(10).getTime();
  await ctx.app.publishing.tick();
  await ctx.app.publishing.whenIdle();
  t.equal((await getPost(ctx, cancelledId)).isDraft, true, 'a cancelled schedule publishes nothing');
  t.equal(await events(ctx, webhookId, 'post.published'), 3, 'one post.published for each post published (moved, toggled, now)');
});

t.test('bad schedules are 400 naming the field, and write nothing', async (t) => {
  const { ctx } = await scheduledApp(t);
  const cases: [string, Json, string][] = [
    ['a time past', { title: 'x', publishAt: '2020-01-01T00:00:00Z' }, '/body/publishAt'],
    ['no offset', { title: 'x', publishAt: '2030-01-01T00:00:00' }, '/body/publishAt'],
    ['a day that does not exist', { title: 'x', publishAt: '2030-02-30T00:00:00Z' }, '/body/publishAt'],
    ['not a time', { title: 'x', publishAt: 'tomorrow' }, '/body/publishAt'],
    ['publish now and later', { title: 'x', publishAt: hoursAhead(1).toISOString(), isDraft: false }, '/body/publishAt'],
  ];
  for (const [name, payload, path] of cases) {
    const res = await create(ctx, payload);
    t.equal(res.statusCode, 400, name);
    t.equal(res.json().error.code, 'VALIDATION_ERROR', name);
    t.match(JSON.stringify(res.json().error), path, `${name}: names ${path}`);
  }
  t.equal(await ctx.count('select count(*) as n from posts'), 0);

  const published = (await create(ctx, { title: 'Live', isDraft: false })).json().data.post;
  const res = await patch(ctx, published.id, { publishAt: hoursAhead(1).toISOString() });
  t.equal(res.statusCode, 409, 'a published post is not scheduled without unpublishing');
  const rescheduled = await patch(ctx, published.id, { isDraft: true, publishAt: hoursAhead(1).toISOString() });
  t.equal(rescheduled.statusCode, 200, 'unpublished and scheduled in one edit');
  t.match(rescheduled.json().data.post, { isDraft: true, publishAt: ISO_MS });
});

t.test('a batch post with publishAt is written when its task is due and published at publishAt', async (t) => {
  const { ctx, clock } = await scheduledApp(t);
  const due = hoursAhead(1);
  const publishAt = hoursAhead(2);
  const early = await ctx.call({
    method: 'POST',
    url: '/api/v1/posts/batch',
    payload: { posts: [{ topic: 'Espresso basics', scheduledFor: due.toISOString(), publishAt: hoursAhead(0.5).toISOString() }] },
  });
  t.equal(early.statusCode, 400, 'publishAt before the task is due');
  t.match(early.json().error.details, [{ path: '/body/posts/0/publishAt' }]);
  const fromDefaults = await ctx.call({
    method: 'POST',
    url: '/api/v1/posts/batch',
    payload: { defaults: { publishAt: hoursAhead(0.5).toISOString() }, posts: [{ topic: 'Espresso basics', scheduledFor: due.toISOString() }] },
  });
  t.match(fromDefaults.json().error.details, [{ path: '/body/defaults/publishAt' }]);

  // A source for the topic: an outline (no source) would stay a draft, publishAt or not.
  const form = multipart([{ name: 'file', filename: 'water-butt-guide.md', content: fs.readFileSync(path.join(fixturesDir, 'grounding-second', 'water-butt-guide.md')), contentType: 'text/markdown' }]);
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers })).statusCode, 201);
  await ctx.app.indexer.whenIdle();
  const res = await ctx.call({
    method: 'POST',
    url: '/api/v1/posts/batch',
    payload: { defaults: { status: 'PUBLISHED' }, posts: [{ topic: 'Collecting rainwater with a water butt', scheduledFor: due.toISOString(), publishAt: publishAt.toISOString() }] },
  });
  t.equal(res.statusCode, 202);
  const [taskId] = res.json().data.taskIds;
  clock.ms = due.getTime() + 1000;
  await ctx.app.jobs.tick();
  await ctx.app.jobs.whenIdle();
  const task = (await ctx.call({ method: 'GET', url: `/api/v1/tasks/${taskId}` })).json().data.task;
  t.equal(task.status, 'succeeded');
  t.match(await getPost(ctx, task.postId), { isDraft: true, publishAt: publishAt.toISOString() }, 'a draft to read first');
  clock.ms = publishAt.getTime() + 1000;
  await ctx.app.publishing.tick();
  await ctx.app.publishing.whenIdle();
  t.match(await getPost(ctx, task.postId), { isDraft: false, visibility: 'public', publishedAt: publishAt.toISOString(), publishAt: null });
});

t.test('a server that was down at publishAt publishes at its next start, as of publishAt (real processes, SIGKILL)', { skip: onPostgres && 'runs its own SQLite server' }, async (t) => {
  const dataDir = tempDataDir(t);
  const env = { DATA_DIR: dataDir, JOB_POLL_MS: '100', GENERATOR: 'builtin' };
  const api = (service: Service, method: string, url: string, body?: Json) =>
    fetch(`${service.url}${url}`, { method, headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });

  const first = await startService(env);
  t.teardown(() => first.child.kill('SIGKILL'));
  // Far enough ahead that the post is created before it, near enough for the test.
  const publishAt = new Date(Date.now() + 3000);
  const created = await api(first, 'POST', '/api/v1/posts', { title: 'While you were out', publishAt: publishAt.toISOString() });
  t.equal(created.status, 201);
  const { id } = (await created.json()).data.post;
  first.child.kill('SIGKILL');
  await first.exited;

  // Down across publishAt.
  await waitFor(() => Date.now() > publishAt.getTime() + 500, 'publishAt to pass', 10_000);
  const second = await startService(env);
  t.teardown(() => second.child.kill('SIGKILL'));
  const post = await waitFor(async () => {
    const got = (await (await api(second, 'GET', `/api/v1/posts/${id}`)).json()).data.post;
    return !got.isDraft && got;
  }, 'the post to be published after the restart');
  t.equal(post.publishedAt, publishAt.toISOString(), 'publishedAt is the scheduled time, not the restart');
  t.equal(post.publishAt, null);
  second.child.kill('SIGTERM');
  await second.exited;
});
