import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import t, { type Test } from 'tap';
import { createBlogClient, type BlogClient } from '../../src/client/index.js';
import { buildTestApp, fixturesDir, projectRoot, waitFor } from '../helpers/app.js';

const document = JSON.parse(fs.readFileSync(path.join(projectRoot, 'openapi.json'), 'utf8'));
const ajv = addFormats.default(new Ajv.default({ strict: false, allErrors: true }));
ajv.addSchema(document, 'openapi');
const pointer = (...parts: string[]) => parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** Checks an answer against what the document declares for it, as a client validating responses would. */
function conforms(t: Test, route: string, method: string, response: Response, body: unknown) {
  const responses = document.paths[route][method].responses;
  const status = String(response.status);
  const declared = responses[status] ? status : `${status[0]}XX`;
  t.ok(responses[declared], `${method.toUpperCase()} ${route} declares ${status}`);
  const validate = ajv.getSchema(`openapi#/${pointer('paths', route, method, 'responses', declared, 'content', 'application/json', 'schema')}`)!;
  t.ok(validate(body), `${method.toUpperCase()} ${route} ${status} matches the document${validate.errors ? `: ${ajv.errorsText(validate.errors)}` : ''}`);
}

t.test('the typed client runs the specification flow against a real server, every answer as declared', async (t) => {
  const ctx = await buildTestApp(t);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;
  const blog: BlogClient = createBlogClient({ baseUrl, apiKey: ctx.key });

  const created = await blog.POST('/api/v1/posts', { body: { title: 'Typed from the start', content: '# Hi', tags: ['client'] } });
  conforms(t, '/api/v1/posts', 'post', created.response, created.data);
  const post = created.data!.data.post;
  t.equal(post.title, 'Typed from the start');
  t.equal(post.isDraft, true);

  const got = await blog.GET('/api/v1/posts/{id}', { params: { path: { id: post.id } } });
  conforms(t, '/api/v1/posts/{id}', 'get', got.response, got.data);
  t.equal(got.data!.data.post.content, '# Hi');

  const toggled = await blog.PUT('/api/v1/posts/{id}', { params: { path: { id: post.id } } });
  conforms(t, '/api/v1/posts/{id}', 'put', toggled.response, toggled.data);
  t.equal(toggled.data!.data.post.isDraft, false);

  const listed = await blog.GET('/api/v1/posts');
  conforms(t, '/api/v1/posts', 'get', listed.response, listed.data);
  t.equal(listed.data!.data.pagination.total, 1, 'page and limit are optional');

  const fromBuffer = await blog.uploadKnowledge(fs.readFileSync(path.join(fixturesDir, 'text/coffee-brewing-guide.md')), 'guide.md');
  conforms(t, '/api/v1/knowledge', 'post', fromBuffer.response, fromBuffer.data);
  t.equal(fromBuffer.response.status, 201);
  const fromPath = await blog.uploadKnowledge(path.join(fixturesDir, 'text/release-notes-2026.txt'));
  t.equal(fromPath.data?.data.knowledge.name, 'release-notes-2026.txt');
  const fromBlob = await blog.uploadKnowledge(new Blob(['Cardamom coffee is popular in the Middle East.']), 'notes.txt');
  t.equal(fromBlob.response.status, 201);
  await ctx.app.indexer.whenIdle();

  const generated = await blog.POST('/api/v1/posts/generate', { body: { topic: 'Brewing coffee at home', length: 'short' } });
  conforms(t, '/api/v1/posts/generate', 'post', generated.response, generated.data);
  t.equal(generated.data!.api.version, 'v1');

  const batch = await blog.POST('/api/v1/posts/batch', { body: { posts: [{ topic: 'Espresso basics' }, { topic: 'Cold brew' }] } });
  conforms(t, '/api/v1/posts/batch', 'post', batch.response, batch.data);
  const [taskId] = batch.data!.data.taskIds;
  const task = await waitFor(async () => {
    const res = await blog.GET('/api/v1/tasks/{id}', { params: { path: { id: taskId } } });
    return res.data?.data.task.status === 'succeeded' && res;
  }, 'the batch task to succeed');
  conforms(t, '/api/v1/tasks/{id}', 'get', task.response, task.data);
  const tasks = await blog.GET('/api/v1/tasks', { params: { query: { batchId: batch.data!.data.batchId } } });
  conforms(t, '/api/v1/tasks', 'get', tasks.response, tasks.data);

  const removed = await blog.DELETE('/api/v1/posts/{id}', { params: { path: { id: post.id } } });
  conforms(t, '/api/v1/posts/{id}', 'delete', removed.response, removed.data);

  // Errors are typed envelopes, never throws.
  const missing = await blog.GET('/api/v1/posts/{id}', { params: { path: { id: post.id } } });
  t.equal(missing.response.status, 404);
  t.equal(missing.error?.error.code, 'NOT_FOUND');
  conforms(t, '/api/v1/posts/{id}', 'get', missing.response, missing.error);
  const invalid = await blog.POST('/api/v1/posts', { body: { title: '' } });
  t.equal(invalid.error?.error.code, 'VALIDATION_ERROR');
  conforms(t, '/api/v1/posts', 'post', invalid.response, invalid.error);
  const stranger = await createBlogClient({ baseUrl, apiKey: 'blog_not-a-real-key-at-all-0000' }).GET('/api/v1/posts');
  t.equal(stranger.error?.error.code, 'UNAUTHORIZED');
  conforms(t, '/api/v1/posts', 'get', stranger.response, stranger.error);

  const site = await blog.GET('/api/v1/site');
  conforms(t, '/api/v1/site', 'get', site.response, site.data);
  const reader = createBlogClient({ baseUrl });
  const published = await reader.GET('/content/v1/sites/{handle}/posts', { params: { path: { handle: site.data!.data.site.handle } } });
  conforms(t, '/content/v1/sites/{handle}/posts', 'get', published.response, published.data);
});
