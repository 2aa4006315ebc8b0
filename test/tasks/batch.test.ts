import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { mergeDefaults, postStateFor } from '../../src/tasks/batch.js';
import { scheduleBatch } from '../../src/tasks/schedule.js';
import { UnknownModelError } from '../../src/generation/errors.js';
import type { AppGenerator } from '../../src/generation/service.js';
import { ISO_MS, UUID_V4, buildTestApp, fixturesDir, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const at = (iso: string) => new Date(iso);
const times = (dates: Date[]) => dates.map((d) => d.toISOString());
const none = (n: number) => Array.from({ length: n }, () => ({}));

t.test('scheduling: even spread from startDate to endDate', async (t) => {
  const window = { startDate: at('2026-12-01T00:00:00.000Z'), endDate: at('2026-12-11T00:00:00.000Z') };
  t.same(times(scheduleBatch(none(1), window, NOW)), ['2026-12-01T00:00:00.000Z'], 'one post: at the start');
  t.same(times(scheduleBatch(none(2), window, NOW)), ['2026-12-01T00:00:00.000Z', '2026-12-11T00:00:00.000Z'], 'two: start and end');
  t.same(times(scheduleBatch(none(3), window, NOW)), ['2026-12-01T00:00:00.000Z', '2026-12-06T00:00:00.000Z', '2026-12-11T00:00:00.000Z']);
  const hundred = scheduleBatch(none(100), window, NOW);
  t.equal(hundred.length, 100);
  t.equal(hundred[0].toISOString(), '2026-12-01T00:00:00.000Z');
  t.equal(hundred[99].toISOString(), '2026-12-11T00:00:00.000Z');
  const step = (10 * 86_400_000) / 99;
  t.ok(hundred.every((d, i) => Math.abs(d.getTime() - (window.startDate.getTime() + i * step)) <= 1), 'evenly spaced, to the millisecond');
  const same = { startDate: window.startDate, endDate: window.startDate };
  t.same(times(scheduleBatch(none(3), same, NOW)), Array(3).fill('2026-12-01T00:00:00.000Z'), 'equal start and end');
  const past = { startDate: at('2020-01-01T00:00:00.000Z'), endDate: at('2020-01-02T00:00:00.000Z') };
  t.same(times(scheduleBatch(none(2), past, NOW)), ['2020-01-01T00:00:00.000Z', '2020-01-02T00:00:00.000Z'], 'past dates are kept (due at once)');
});

t.test('scheduling: explicit times, mixing, neither, and bad windows', async (t) => {
  const explicit = [{ scheduledFor: at('2026-12-24T18:00:00.000Z') }, { scheduledFor: at('2026-12-25T09:30:00.000Z') }];
  t.same(times(scheduleBatch(explicit, {}, NOW)), ['2026-12-24T18:00:00.000Z', '2026-12-25T09:30:00.000Z']);
  const window = { startDate: at('2026-12-01T00:00:00.000Z'), endDate: at('2026-12-03T00:00:00.000Z') };
  const mixed = [{}, { scheduledFor: at('2027-01-01T00:00:00.000Z') }, {}];
  t.same(
    times(scheduleBatch(mixed, window, NOW)),
    ['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', '2026-12-03T00:00:00.000Z'],
    "a post's own scheduledFor wins; the others share the window",
  );
  t.same(times(scheduleBatch(none(2), {}, NOW)), [NOW.toISOString(), NOW.toISOString()], 'neither: due now');
  t.throws(() => scheduleBatch(none(1), { startDate: window.startDate }, NOW), { code: 'VALIDATION_ERROR' });
  t.throws(() => scheduleBatch(none(1), { endDate: window.endDate }, NOW), { code: 'VALIDATION_ERROR' });
  t.throws(() => scheduleBatch(none(1), { startDate: window.endDate, endDate: window.startDate }, NOW), { code: 'VALIDATION_ERROR' });
});

t.test('defaults merge under each post; status maps to isDraft and visibility', async (t) => {
  const merged = mergeDefaults(
    { category: 'Guides', tags: ['a'], style: 'casual', status: 'PUBLISHED', tone: 'formal', model: 'builtin' },
    { topic: 'x', scheduledFor: '2026-12-01T00:00:00Z', tags: ['b'], style: undefined, length: 'short' },
  );
  t.same(merged, { status: 'PUBLISHED', category: 'Guides', tags: ['b'], style: 'casual', tone: 'authoritative', model: 'builtin', length: 'short' });
  t.same(mergeDefaults(undefined, { topic: 'x' }), { status: 'DRAFT' }, 'status defaults to DRAFT');
  t.same(postStateFor('DRAFT'), { isDraft: true, visibility: 'public' });
  t.same(postStateFor('PUBLISHED'), { isDraft: false, visibility: 'public' });
  t.same(postStateFor('UNLISTED'), { isDraft: false, visibility: 'unlisted' });
});

const batch = (ctx: TestApp, payload: object, key?: string) => ctx.call({ method: 'POST', url: '/api/v1/posts/batch', payload, key });
const taskCount = (ctx: TestApp) => ctx.count('select count(*) as n from jobs');

t.test('POST /posts/batch: 202 with one task id per post, in order', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });
  const res = await batch(ctx, {
    startDate: '2026-12-01T00:00:00Z',
    endDate: '2026-12-02T00:00:00Z',
    defaults: { category: 'Coffee', status: 'UNLISTED' },
    posts: [{ topic: 'Espresso' }, { topic: ' Pour over ', scheduledFor: '2027-01-01T08:00:00Z' }, { topic: 'Cold brew' }],
  });
  t.equal(res.statusCode, 202);
  const body = res.json();
  t.equal(body.success, true);
  t.same(Object.keys(body.data).sort(), ['batchId', 'message', 'site', 'taskIds', 'totalPosts']);
  t.equal(body.data.totalPosts, 3);
  t.equal(body.data.taskIds.length, 3);
  t.match(body.data.batchId, UUID_V4);
  t.same(body.data.site, ctx.site);
  const tasks = [];
  for (const id of body.data.taskIds) tasks.push((await ctx.call({ method: 'GET', url: `/api/v1/tasks/${id}` })).json().data.task);
  t.same(tasks.map((task) => task.topic), ['Espresso', 'Pour over', 'Cold brew'], 'taskIds follow the posts, topics trimmed');
  t.same(tasks.map((task) => task.scheduledFor), ['2026-12-01T00:00:00.000Z', '2027-01-01T08:00:00.000Z', '2026-12-02T00:00:00.000Z']);
  const task = tasks[0];
  t.same(Object.keys(task).sort(), ['attempts', 'batchId', 'createdAt', 'finishedAt', 'id', 'keptAsDraft', 'lastError', 'maxAttempts', 'missingFileIds', 'notes', 'outline', 'postId', 'scheduledFor', 'startedAt', 'status', 'topic']);
  t.equal(task.status, 'pending');
  t.equal(task.attempts, 0);
  t.equal(task.maxAttempts, 3);
  t.equal(task.batchId, body.data.batchId);
  t.equal(task.postId, null);
  t.match(task.createdAt, ISO_MS);
});

t.test('POST /posts/batch: invalid batches are 400 and write nothing', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });
  const hundredOne = Array.from({ length: 101 }, (_, i) => ({ topic: `t${i}` }));
  const cases: [string, object, RegExp?][] = [
    ['no posts', { posts: [] }],
    ['101 posts', { posts: hundredOne }],
    ['missing topic', { posts: [{ category: 'x' }] }],
    ['blank topic', { posts: [{ topic: '   ' }] }],
    ['topic over 300 characters', { posts: [{ topic: 'x'.repeat(301) }] }, /posts\/0\/topic/],
    ['start without end', { startDate: '2026-12-01T00:00:00Z', posts: [{ topic: 'a' }] }],
    ['end before start', { startDate: '2026-12-02T00:00:00Z', endDate: '2026-12-01T00:00:00Z', posts: [{ topic: 'a' }] }],
    ['bad date', { posts: [{ topic: 'a', scheduledFor: 'tomorrow' }] }],
    ['bad status', { defaults: { status: 'LIVE' }, posts: [{ topic: 'a' }] }, /DRAFT, UNLISTED, PUBLISHED/],
    ['bad style', { posts: [{ topic: 'a', style: 'pirate' }] }, /professional, casual, technical, creative, academic/],
    ['unknown file ids', { defaults: { selectedFileIds: ['nope-1'] }, posts: [{ topic: 'a', selectedFileIds: ['nope-2'] }] }, /nope-1, nope-2/],
    ['posts not an array', { posts: { topic: 'a' } }],
  ];
  for (const [name, payload, message] of cases) {
    const res = await batch(ctx, payload);
    t.equal(res.statusCode, 400, name);
    t.equal(res.json().error.code, 'VALIDATION_ERROR', name);
    if (message) t.match(JSON.stringify(res.json().error), message, name);
  }
  t.equal(await taskCount(ctx), 0, 'nothing was written');
  const hundred = await batch(ctx, { posts: hundredOne.slice(0, 100) });
  t.equal(hundred.statusCode, 202);
  t.equal(await taskCount(ctx), 100);
});

t.test('tasks: list by batch and status, cancel, and site isolation', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });
  const first = (await batch(ctx, { posts: [{ topic: 'a', scheduledFor: '2030-01-01T00:00:00Z' }, { topic: 'b', scheduledFor: '2030-01-01T00:00:00Z' }] })).json().data;
  const second = (await batch(ctx, { posts: [{ topic: 'c', scheduledFor: '2030-01-01T00:00:00Z' }] })).json().data;
  const list = (await ctx.call({ method: 'GET', url: `/api/v1/tasks?batchId=${first.batchId}` })).json().data;
  t.equal(list.pagination.total, 2);
  t.same(list.tasks.map((task: { topic: string }) => task.topic).sort(), ['a', 'b']);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/tasks' })).json().data.pagination.total, 3);

  const cancel = await ctx.call({ method: 'DELETE', url: `/api/v1/tasks/${second.taskIds[0]}` });
  t.equal(cancel.statusCode, 200);
  t.equal(cancel.json().data.task.status, 'cancelled');
  const again = await ctx.call({ method: 'DELETE', url: `/api/v1/tasks/${second.taskIds[0]}` });
  t.equal(again.statusCode, 409);
  t.equal(again.json().error.code, 'CONFLICT');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/tasks?status=cancelled' })).json().data.pagination.total, 1);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/tasks?status=pending' })).json().data.pagination.total, 2);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/tasks?status=weird' })).statusCode, 400);

  const other = await ctx.addSite('Other');
  for (const method of ['GET', 'DELETE'] as const) {
    t.equal((await ctx.call({ method, url: `/api/v1/tasks/${first.taskIds[0]}`, key: other.key })).statusCode, 404, method);
  }
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/tasks', key: other.key })).json().data.pagination.total, 0);
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/tasks/${first.taskIds[0]}` })).json().data.task.status, 'pending');
});

t.test('the loop generates each task into a post with its status, defaults and generator', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });
  // A source for every topic: an outline (no source) would stay a draft whatever the status.
  const form = multipart([{ name: 'file', filename: 'water-butt-guide.md', content: fs.readFileSync(path.join(fixturesDir, 'grounding-second', 'water-butt-guide.md')), contentType: 'text/markdown' }]);
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers })).statusCode, 201);
  await ctx.app.indexer.whenIdle();
  const res = await batch(ctx, {
    defaults: { category: 'Brewing', tags: ['coffee'], authorId: 'ana', length: 'short' },
    posts: [
      { topic: 'Collecting rainwater with a water butt', status: 'PUBLISHED' },
      { topic: 'Choosing a water butt', status: 'UNLISTED' },
      { topic: 'Keeping a water butt clean', tags: ['ideas'] },
    ],
  });
  const { taskIds } = res.json().data;
  await ctx.app.jobs.tick();
  await ctx.app.jobs.whenIdle();
  await ctx.app.jobs.tick();
  await ctx.app.jobs.whenIdle();
  const posts = [];
  for (const id of taskIds) {
    const task = (await ctx.call({ method: 'GET', url: `/api/v1/tasks/${id}` })).json().data.task;
    t.equal(task.status, 'succeeded', task.topic);
    t.equal(task.attempts, 1);
    t.match(task.finishedAt, ISO_MS);
    posts.push((await ctx.call({ method: 'GET', url: `/api/v1/posts/${task.postId}` })).json().data.post);
  }
  t.same(posts.map((p) => [p.isDraft, p.visibility]), [[false, 'public'], [false, 'unlisted'], [true, 'public']]);
  t.ok(posts.every((p) => p.category === 'Brewing' && p.authorId === 'ana'));
  t.same(posts[0].tags, ['coffee']);
  t.same(posts[2].tags, ['ideas']);
  t.match(posts[0].title, /Water Butt/i);
  t.ok(posts[0].content.length > 500);
  const [row] = await ctx.rows<{ provider: string }>('select generator_provider as provider from posts where id = ?', posts[0].id);
  t.equal(row.provider, 'builtin');

  // Deleting the post a task made leaves the task as it was.
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${posts[0].id}` })).statusCode, 200);
  const after = (await ctx.call({ method: 'GET', url: `/api/v1/tasks/${taskIds[0]}` })).json().data.task;
  t.equal(after.status, 'succeeded');
  t.equal(after.postId, posts[0].id);
});

t.test('an unknown model is refused at submission; one gone by run time fails the task at once', async (t) => {
  const refused = await batch(await buildTestApp(t), { posts: [{ topic: 'Anything', model: 'no-such-model' }] });
  t.equal(refused.statusCode, 400);
  t.equal(refused.json().error.code, 'UNKNOWN_MODEL');

  // A model removed from the generator after the batch was accepted.
  const gone: AppGenerator = {
    generate: async () => {
      throw new UnknownModelError('no-such-model', 'it was removed');
    },
    status: async () => ({ mode: 'ollama', active: 'ollama', ollama: { host: 'http://127.0.0.1:9', model: 'm', reachable: true, modelAvailable: true } }),
  };
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false }, generator: gone });
  const { taskIds } = (await batch(ctx, { posts: [{ topic: 'Anything', model: 'no-such-model' }] })).json().data;
  await ctx.app.jobs.tick();
  await ctx.app.jobs.whenIdle();
  const task = (await ctx.call({ method: 'GET', url: `/api/v1/tasks/${taskIds[0]}` })).json().data.task;
  t.equal(task.status, 'failed');
  t.equal(task.attempts, 1);
  t.match(task.lastError, /no-such-model/);
});

t.test('a selected file deleted before its task runs is recorded, not fatal', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });
  const upload = async (name: string, content: string) => {
    const form = multipart([{ name: 'file', filename: name, content, contentType: 'text/plain' }]);
    return (await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers })).json().data.knowledge.id as string;
  };
  const kept = await upload('kept.txt', 'Volcanic soil gives the highland coffee its bright acidity and floral aroma.');
  const doomed = await upload('doomed.txt', 'Volcanic soil notes that will be deleted before the task runs.');
  await ctx.app.indexer.whenIdle();
  const { taskIds } = (await batch(ctx, { posts: [{ topic: 'Volcanic soil coffee', selectedFileIds: [kept, doomed] }] })).json().data;
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${doomed}` })).statusCode, 200);
  await ctx.app.jobs.tick();
  await ctx.app.jobs.whenIdle();
  const task = (await ctx.call({ method: 'GET', url: `/api/v1/tasks/${taskIds[0]}` })).json().data.task;
  t.equal(task.status, 'succeeded');
  t.same(task.missingFileIds, [doomed]);
  const post = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${task.postId}` })).json().data.post;
  t.match(post.content, /kept\.txt/, 'grounded in the file that remains');
  t.notMatch(post.content, /doomed\.txt/);
});
