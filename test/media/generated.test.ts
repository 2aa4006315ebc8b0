import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildTestApp, fixturesDir, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

async function uploadImage(ctx: TestApp, file: string) {
  const form = multipart([{ name: 'file', filename: file, content: fs.readFileSync(path.join(fixturesDir, 'images', file)) }]);
  return (await ctx.call({ method: 'POST', url: '/api/v1/media', payload: form.payload, headers: form.headers })).json().data.media as { id: string };
}
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

t.test('generate takes a feature image, checked before the writing starts', async (t) => {
  const ctx = await buildTestApp(t);
  const { id } = await uploadImage(ctx, 'small.jpg');
  const refused = await ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload: { topic: 'Coffee at dawn', featureImage: UNKNOWN } });
  t.equal(refused.statusCode, 400);
  t.equal(refused.json().error.details[0].path, '/body/featureImage');
  t.equal(await ctx.count('select count(*) as n from posts'), 0, 'nothing written');

  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload: { topic: 'Coffee at dawn', featureImage: id, featureImageAlt: 'A cup at sunrise' } });
  t.equal(res.statusCode, 201);
  t.notOk('featureImage' in res.json().post, "the answer keeps the spec's shape");
  const post = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${res.json().post.id}` })).json().data.post;
  t.equal(post.featureImage, id);
  t.equal(post.featureImageAlt, 'A cup at sunrise');
});

t.test('a batch takes feature images in defaults and per post; unknown ones are refused naming where', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });
  const first = await uploadImage(ctx, 'small.jpg');
  const second = await uploadImage(ctx, 'photo.png');
  const batch = (body: object) => ctx.call({ method: 'POST', url: '/api/v1/posts/batch', payload: body });

  const inDefaults = await batch({ defaults: { featureImage: UNKNOWN }, posts: [{ topic: 'One' }] });
  t.equal(inDefaults.statusCode, 400);
  t.equal(inDefaults.json().error.details[0].path, '/body/defaults/featureImage');
  const inPost = await batch({ posts: [{ topic: 'One' }, { topic: 'Two', featureImage: UNKNOWN }] });
  t.equal(inPost.json().error.details[0].path, '/body/posts/1/featureImage');

  const res = await batch({
    defaults: { featureImage: first.id, featureImageAlt: 'Beans' },
    posts: [{ topic: 'Espresso basics' }, { topic: 'Pour over', featureImage: second.id }, { topic: 'Cold brew', featureImage: second.id }],
  });
  t.equal(res.statusCode, 202);
  // The third post's image goes before its task runs: the post is written without it.
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/media/${second.id}` })).statusCode, 200);
  const again = await uploadImage(ctx, 'photo.png');
  await ctx.call({ method: 'PATCH', url: `/api/v1/media/${again.id}`, payload: { alt: 'unused' } });
  for (let round = 0; round < 3; round++) {
    await ctx.app.jobs.tick();
    await ctx.app.jobs.whenIdle();
  }
  const posts = [];
  for (const taskId of res.json().data.taskIds) {
    const task = (await ctx.call({ method: 'GET', url: `/api/v1/tasks/${taskId}` })).json().data.task;
    t.equal(task.status, 'succeeded', task.topic);
    posts.push((await ctx.call({ method: 'GET', url: `/api/v1/posts/${task.postId}` })).json().data.post);
  }
  t.same(posts.map((post) => [post.featureImage, post.featureImageAlt]), [[first.id, 'Beans'], [null, null], [null, null]]);
});
