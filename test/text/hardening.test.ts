/**
 * Hostile text: ill-formed Unicode, invisible titles, bidi controls in file names, and a
 * model that returns far more than a post may hold.
 */
import t, { type Test } from 'tap';
import type { AppGenerator } from '../../src/generation/service.js';
import { MAX_CATEGORY_LENGTH, MAX_CONTENT_LENGTH, MAX_DESCRIPTION_LENGTH, MAX_TAG_LENGTH, MAX_TAGS, MAX_TITLE_LENGTH } from '../../src/limits.js';
import { safeFileName } from '../../src/knowledge/storage.js';
import { buildTestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

const json = { 'content-type': 'application/json' };

t.test('a lone UTF-16 surrogate is refused with 400 naming the field, never stored as something else', async (t) => {
  const ctx = await buildTestApp(t);
  const cases: [string, string, string][] = [
    ['title', '{"title":"Broken \\ud800 title"}', '/body/title'],
    ['content', '{"title":"Fine","content":"half a pair: \\udc00"}', '/body/content'],
    ['tags', '{"title":"Fine","tags":["ok","bad \\ud83d"]}', '/body/tags/1'],
  ];
  for (const [what, payload, path] of cases) {
    const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload, headers: json });
    t.equal(res.statusCode, 400, `${what}: 400`);
    t.equal(res.json().error.code, 'VALIDATION_ERROR');
    t.same(res.json().error.details.map((d: { path: string }) => d.path), [path], `${what}: names ${path}`);
  }
  t.equal((ctx.sqlite.prepare('select count(*) as n from posts').get() as { n: number }).n, 0, 'nothing stored');

  const created = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: '{"title":"Pair \\ud83d\\ude00 kept"}', headers: json });
  t.equal(created.statusCode, 201, 'a whole pair is fine');
  const id = created.json().data.post.id;
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}` })).json().data.post.title, 'Pair 😀 kept', 'read back as echoed');
  const patched = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: '{"description":"lone \\ud800"}', headers: json });
  t.equal(patched.statusCode, 400, 'PATCH too');
  const site = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: '{"name":"Site \\udfff"}', headers: json });
  t.equal(site.statusCode, 400, 'site settings too');
});

t.test('a title must have visible characters', async (t) => {
  const ctx = await buildTestApp(t);
  for (const title of ['\u200B\u200B\u200B', '\u202E', '\u200D\uFEFF\u2060', '\u0301\u0301', '\u3164', ' \u200B ']) {
    const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title } });
    t.equal(res.statusCode, 400, `${JSON.stringify(title)}: 400`);
    t.match(res.json().error.message, /visible/);
  }
  const ok = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Caf\u00E9\u200B au lait' } });
  t.equal(ok.statusCode, 201, 'visible text with a zero-width space inside is fine');
  const renamed = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${ok.json().data.post.id}`, payload: { title: '\u200B' } });
  t.equal(renamed.statusCode, 400, 'PATCH too');
  t.equal((await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { name: '\u200B\u200B' } })).statusCode, 400, 'site names too');
});

t.test('bidi controls and zero-width characters are stripped from stored file names', async (t) => {
  t.equal(safeFileName('invoice\u202Efdp.exe.txt', 'txt'), 'invoicefdp.exe.txt');
  t.equal(safeFileName('\u2066report\u2069\u200E\u200F\u061C.md', 'md'), 'report.md');
  t.equal(safeFileName('zero\u200Bwidth\uFEFF.csv', 'csv'), 'zerowidth.csv');
  t.equal(safeFileName('\u202E\u202E', 'txt'), 'file.txt', 'nothing left: the fallback name');
  const ctx = await buildTestApp(t);
  const form = multipart([{ name: 'file', filename: 'notes\u202Etxt.md', content: '# Notes' }]);
  const res = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers });
  t.equal(res.statusCode, 201);
  t.notMatch(res.json().data.knowledge.name, /\u202E/, 'stored without the override');
  await ctx.app.indexer.whenIdle();
});

const HUGE = {
  title: `${'Endless '.repeat(100)}title`,
  description: 'word '.repeat(20_000),
  category: 'cat '.repeat(1250),
  tags: Array.from({ length: 40 }, (_, i) => `tag-${i}-${'x'.repeat(100)}`),
  content: `# Too much\n\n${'All work and no play. '.repeat(100_000)}`,
};

const oversizedGenerator: AppGenerator = {
  async generate() {
    return { provider: 'builtin', model: 'runaway', post: { ...HUGE, title: `${HUGE.title} \ud800` } };
  },
  async status() {
    return { mode: 'builtin', active: 'builtin', ollama: { host: '', model: '', reachable: false, modelAvailable: false } };
  },
};

function checkWithinLimits(t: Test, post: { title: string; description: string; category: string; tags: string[]; content: string }, what: string) {
  t.ok(post.title.length <= MAX_TITLE_LENGTH, `${what}: title ${post.title.length}`);
  t.ok(post.description.length <= MAX_DESCRIPTION_LENGTH, `${what}: description ${post.description.length}`);
  t.ok(post.category.length <= MAX_CATEGORY_LENGTH, `${what}: category ${post.category.length}`);
  t.ok(post.content.length <= MAX_CONTENT_LENGTH, `${what}: content ${post.content.length}`);
  t.ok(post.tags.length <= MAX_TAGS && post.tags.every((tag) => tag.length <= MAX_TAG_LENGTH), `${what}: tags`);
  t.match(post.description, /word…$/, `${what}: cut at a word boundary, marked`);
  t.notMatch(post.title, /[\uD800-\uDFFF]/, `${what}: no lone surrogate`);
}

t.test('generated posts are held to the limits of posts written through the API', async (t) => {
  const ctx = await buildTestApp(t, {}, { generator: oversizedGenerator, jobs: { autoStart: false } });
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload: { topic: 'Everything' } });
  t.equal(res.statusCode, 201);
  const post = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${res.json().post.id}` })).json().data.post;
  checkWithinLimits(t, post, 'generate');

  const batch = await ctx.call({ method: 'POST', url: '/api/v1/posts/batch', payload: { posts: [{ topic: 'Everything again' }] } });
  t.equal(batch.statusCode, 202);
  await ctx.app.jobs.tick();
  await ctx.app.jobs.whenIdle();
  const task = (await ctx.call({ method: 'GET', url: `/api/v1/tasks/${batch.json().data.taskIds[0]}` })).json().data.task;
  t.equal(task.status, 'succeeded');
  const batched = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${task.postId}` })).json().data.post;
  checkWithinLimits(t, batched, 'batch task');
});
