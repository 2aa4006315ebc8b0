import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildTestApp, fixturesDir, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

// What the writer says about its work ("Drawn from ...", "the knowledge base has only about 80
// words ...", "Outline draft: ...") is for staff: the task and the generate answer carry it, and
// no public page, feed or content API answer of a generated post does. An outline (no source
// covered the topic) stays a draft, whatever status the batch asked for.

const NOTE_WORDS = /Drawn from|knowledge base|Shorter than a|Outline draft|outline|no document/i;

async function upload(ctx: TestApp, name: string) {
  const form = multipart([{ name: 'file', filename: name, content: fs.readFileSync(path.join(fixturesDir, 'grounding-second', name)), contentType: 'text/markdown' }]);
  const res = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers });
  t.equal(res.statusCode, 201, `${name} uploaded`);
}

t.test('a PUBLISHED batch: notes stay in the tasks, outlines stay drafts, public answers hold neither', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });
  await upload(ctx, 'water-butt-guide.md');
  await ctx.app.indexer.whenIdle();
  const res = await ctx.call({
    method: 'POST',
    url: '/api/v1/posts/batch',
    payload: {
      defaults: { status: 'PUBLISHED', model: 'builtin' },
      posts: [
        { topic: 'Collecting rainwater with a water butt', length: 'short' },
        // Little source for a long post: the note says why it is short.
        { topic: 'Connecting a water butt to a downpipe', length: 'long' },
        // Nothing on the topic: an outline.
        { topic: 'Knitting a winter scarf', length: 'short' },
        { topic: 'Repotting an orchid', status: 'UNLISTED', length: 'short' },
      ],
    },
  });
  t.equal(res.statusCode, 202, res.body);
  const { taskIds } = res.json().data as { taskIds: string[] };
  for (let i = 0; i < 3; i++) {
    await ctx.app.jobs.tick();
    await ctx.app.jobs.whenIdle();
  }
  const tasks = [];
  for (const id of taskIds) tasks.push((await ctx.call({ method: 'GET', url: `/api/v1/tasks/${id}` })).json().data.task);
  t.same(tasks.map((task) => task.status), ['succeeded', 'succeeded', 'succeeded', 'succeeded']);
  t.same(tasks.map((task) => task.outline), [false, false, true, true], 'the two topics without a source are outlines');
  t.same(tasks.map((task) => task.keptAsDraft), [false, false, true, true], 'and were kept as drafts');
  t.match(tasks[0].notes.join(' '), /Drawn from water-butt-guide\.md\./, 'the task says what the post drew on');
  t.match(tasks[1].notes.join(' '), /Shorter than a long post: the knowledge base has only about \d+ words on this topic\./);
  t.match(tasks[2].notes.join(' '), /Outline draft: no document in the knowledge base covers the topic/);

  const posts = [];
  for (const task of tasks) posts.push((await ctx.call({ method: 'GET', url: `/api/v1/posts/${task.postId}` })).json().data.post);
  t.same(posts.map((post) => post.isDraft), [false, false, true, true], 'the outlines are drafts, the posts published');
  for (const post of posts) {
    t.notMatch(post.description, NOTE_WORDS, `no note in the description of "${post.title}"`);
    if (!post.isDraft) t.notMatch(post.content, NOTE_WORDS, `no note in the content of "${post.title}"`);
  }

  const handle = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site.handle as string;
  const base = `/sites/${handle}`;
  const published = posts.filter((post) => !post.isDraft);
  const urls = [
    `${base}/`,
    `${base}/rss.xml`,
    `${base}/atom.xml`,
    `${base}/feed.json`,
    `/content/v1/sites/${handle}/posts`,
    ...published.flatMap((post) => [`${base}/${post.slug}/`, `/content/v1/sites/${handle}/posts/${post.slug}`]),
  ];
  const notes = tasks.flatMap((task) => task.notes as string[]);
  t.ok(notes.length >= 4, 'notes to look for');
  for (const url of urls) {
    const page = await ctx.call({ method: 'GET', url, key: null });
    t.equal(page.statusCode, 200, url);
    t.notMatch(page.body, NOTE_WORDS, `${url} holds no note of the writer`);
    for (const note of notes) t.notOk(page.body.includes(note), `${url} does not hold "${note}"`);
  }
  const list = (await ctx.call({ method: 'GET', url: `/content/v1/sites/${handle}/posts`, key: null })).json();
  t.same((list.data?.posts ?? list.posts ?? []).length, 2, 'the content API lists the two posts, not the outlines');
});

t.test('the generate answer carries the notes; the post does not', async (t) => {
  const ctx = await buildTestApp(t);
  await upload(ctx, 'water-butt-guide.md');
  await ctx.app.indexer.whenIdle();
  const grounded = await ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload: { topic: 'Collecting rainwater with a water butt', length: 'long' } });
  t.equal(grounded.statusCode, 201, grounded.body);
  const body = grounded.json();
  t.same(body.generation.sources, ['water-butt-guide.md']);
  t.equal(body.generation.outline, false);
  t.match(body.generation.notes.join(' '), /Drawn from water-butt-guide\.md\./);
  t.match(body.generation.notes.join(' '), /Shorter than a long post/);
  const post = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${body.post.id}` })).json().data.post;
  t.notMatch(post.description, NOTE_WORDS);
  t.notMatch(post.content, NOTE_WORDS);

  const outline = (await ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload: { topic: 'Knitting a winter scarf' } })).json();
  t.equal(outline.generation.outline, true);
  t.same(outline.generation.sources, []);
  t.match(outline.generation.notes.join(' '), /^Outline draft: no document/);
  // The guide says what to do in winter: only the words found nowhere are named.
  t.same(outline.generation.unmatchedWords, ['knitting', 'scarf'], 'the words no document contains, to reword');
  t.same(body.generation.unmatchedWords, [], 'a grounded post has none');

});
