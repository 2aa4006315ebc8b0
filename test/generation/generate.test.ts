import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { ISO_MS, UUID_V4, buildTestApp, fixturesDir, type TestApp } from '../helpers/app.js';
import { closedPortUrl, hangingAnswer, startFakeOllama, validPost } from '../helpers/fake-ollama.js';
import { multipart } from '../helpers/multipart.js';

const generate = (ctx: TestApp, payload: object, key?: string) => ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload, key });

async function uploadText(ctx: TestApp, filename: string, text: string, key?: string) {
  const form = multipart([{ name: 'file', filename, content: text, contentType: 'text/plain' }]);
  const res = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers, key });
  await ctx.app.indexer.whenIdle();
  return res.json().data.knowledge.id as string;
}

t.test('POST /posts/generate: exact response shape, no envelope, stored as a draft', async (t) => {
  const ctx = await buildTestApp(t);
  await uploadText(ctx, 'brew-notes.txt', 'Pour-over brewing rewards a medium-fine grind and water at 93 degrees. Bloom the coffee for 30 seconds.');
  const res = await generate(ctx, { topic: '  Pour-over brewing at home ', style: 'casual', length: 'short', tone: 'conversational', includeExamples: true, targetAudience: 'new baristas' });
  t.equal(res.statusCode, 201);
  const body = res.json();
  t.same(Object.keys(body).sort(), ['api', 'generation', 'message', 'post', 'site', 'timestamp'], 'fields at the top level, no success/data');
  t.same(Object.keys(body.generation).sort(), ['model', 'notes', 'outline', 'provider', 'sources', 'unmatchedWords'], "the writer's notes, beside the post");
  t.type(body.message, 'string');
  t.same(body.site, ctx.site);
  t.match(body.timestamp, ISO_MS);
  t.same(Object.keys(body.api).sort(), ['status', 'version']);
  t.type(body.api.version, 'string');
  t.type(body.api.status, 'string');
  const post = body.post;
  t.same(Object.keys(post).sort(), ['authorId', 'category', 'createdAt', 'description', 'id', 'isDraft', 'slug', 'tags', 'title', 'updatedAt']);
  t.match(post.id, UUID_V4);
  t.equal(post.isDraft, true);
  t.equal(post.authorId, null);
  t.type(post.title, 'string');
  t.ok(post.title.length > 0);
  t.type(post.description, 'string');
  t.type(post.category, 'string');
  t.ok(Array.isArray(post.tags) && post.tags.length > 0);
  t.match(post.createdAt, ISO_MS);

  const stored = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${post.id}` })).json().data.post;
  t.equal(stored.slug, post.slug);
  t.match(stored.content, /brew-notes\.txt/, 'the passage is attributed to its file');
  t.match(stored.content, /new baristas/);
  const [row] = await ctx.rows<{ provider: string; model: string }>('select generator_provider as provider, generator_model as model from posts where id = ?', post.id);
  t.equal(row.provider, 'builtin');
  t.ok(row.model);

  const again = (await generate(ctx, { topic: 'Pour-over brewing at home', style: 'casual', length: 'short', tone: 'conversational', includeExamples: true, targetAudience: 'new baristas' })).json();
  t.equal(again.post.title, post.title);
  t.not(again.post.slug, post.slug, 'slugs stay unique');
});

t.test('POST /posts/generate: validation names the allowed values', async (t) => {
  const ctx = await buildTestApp(t);
  const cases: [string, object, RegExp][] = [
    ['missing topic', {}, /topic/],
    ['blank topic', { topic: '   ' }, /topic/],
    ['topic too long', { topic: 'x'.repeat(301) }, /300/],
    ['bad style', { topic: 'x', style: 'pirate' }, /professional, casual, technical, creative, academic/],
    ['bad length', { topic: 'x', length: 'epic' }, /short, medium, long/],
    ['bad tone', { topic: 'x', tone: 'formal' }, /informative, persuasive, conversational, authoritative/],
    ['includeExamples not boolean', { topic: 'x', includeExamples: 'yes' }, /boolean/],
  ];
  for (const [name, payload, message] of cases) {
    const res = await generate(ctx, payload);
    t.equal(res.statusCode, 400, name);
    t.equal(res.json().success, false, name);
    t.equal(res.json().error.code, 'VALIDATION_ERROR', name);
    t.match(JSON.stringify(res.json().error), message, name);
  }
  t.equal(await ctx.count('select count(*) as n from posts'), 0);
});

t.test('generation never draws on another site', async (t) => {
  const ctx = await buildTestApp(t);
  const other = await ctx.addSite('Other');
  await uploadText(ctx, 'secret-recipe.txt', 'Zanzibar clove syrup is our secret ingredient for the winter latte.', other.key);
  const res = await generate(ctx, { topic: 'Zanzibar clove syrup winter latte' });
  t.equal(res.statusCode, 201);
  const post = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${res.json().post.id}` })).json().data.post;
  t.notMatch(post.content, /secret-recipe\.txt|secret ingredient/);
  const theirs = await generate(ctx, { topic: 'Zanzibar clove syrup winter latte' }, other.key);
  const theirPost = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${theirs.json().post.id}`, key: other.key })).json().data.post;
  t.match(theirPost.content, /secret-recipe\.txt/, 'the owning site does get its passage');
});

t.test('GET /ready reports the generator', async (t) => {
  const ctx = await buildTestApp(t);
  const ready = (await ctx.call({ method: 'GET', url: '/ready', key: null })).json();
  t.equal(ready.generator.mode, 'builtin');
  t.equal(ready.generator.active, 'builtin');
  t.equal(ready.generator.ollama.reachable, false);
});

t.test('strict ollama mode: 503 with the pull hint when unavailable, 504 on timeout', async (t) => {
  const down = await buildTestApp(t, { GENERATOR: 'ollama', OLLAMA_HOST: await closedPortUrl() }, { jobs: { autoStart: false } });
  const unreachable = await generate(down, { topic: 'Anything' });
  t.equal(unreachable.statusCode, 503);
  t.equal(unreachable.json().success, false);
  t.equal(unreachable.json().error.code, 'GENERATOR_UNAVAILABLE');
  t.match(unreachable.json().error.message, /unreachable/);

  const noModel = await startFakeOllama(t, { models: ['mistral:latest'] });
  const missing = await buildTestApp(t, { GENERATOR: 'ollama', OLLAMA_HOST: noModel.url }, { jobs: { autoStart: false } });
  const res = await generate(missing, { topic: 'Anything' });
  t.equal(res.statusCode, 503);
  t.match(res.json().error.message, /ollama pull llama3\.2/);

  const slow = await startFakeOllama(t, { chat: hangingAnswer });
  const timing = await buildTestApp(t, { GENERATOR: 'ollama', OLLAMA_HOST: slow.url, GENERATION_TIMEOUT_MS: '300' }, { jobs: { autoStart: false } });
  const timeout = await generate(timing, { topic: 'Anything' });
  t.equal(timeout.statusCode, 504);
  t.equal(timeout.json().error.code, 'GENERATION_TIMEOUT');
  for (const ctx of [down, missing, timing]) {
    t.equal(await ctx.count('select count(*) as n from posts'), 0, 'no post stored');
  }

  // With a key: the Ollama host is a location, shown only to a caller with a key.
  const ready = (await missing.call({ method: 'GET', url: '/ready' })).json();
  t.same(ready.generator, { mode: 'ollama', active: 'ollama', ollama: { host: noModel.url, model: 'llama3.2', reachable: true, modelAvailable: false } });
});

t.test('ollama in auto mode writes the post and records the model', async (t) => {
  const ollama = await startFakeOllama(t);
  const ctx = await buildTestApp(t, { GENERATOR: 'auto', OLLAMA_HOST: ollama.url }, { jobs: { autoStart: false } });
  await uploadText(ctx, 'coffee-notes.txt', 'Bloom the grounds for thirty seconds before the main pour.');
  const res = await generate(ctx, { topic: 'Blooming coffee grounds', length: 'long' });
  t.equal(res.statusCode, 201);
  t.equal(res.json().post.title, validPost.title);
  const sent = ollama.chatBodies[0];
  t.equal(sent.model, 'llama3.2');
  t.match(JSON.stringify(sent.messages), /coffee-notes\.txt/, 'the passages go to the model with their file names');
  t.match(JSON.stringify(sent.messages), /1,?600/, 'length as a word target');
  const [row] = await ctx.rows<{ provider: string; model: string }>('select generator_provider as provider, generator_model as model from posts');
  t.same(row, { provider: 'ollama', model: 'llama3.2' });
});

t.test('with Ollama, the prompt carries the passages chosen for the topic, each with its file name, and not the others', async (t) => {
  const ollama = await startFakeOllama(t);
  const ctx = await buildTestApp(t, { GENERATOR: 'auto', OLLAMA_HOST: ollama.url }, { jobs: { autoStart: false } });
  const butt = fs.readFileSync(path.join(fixturesDir, 'grounding-second/water-butt-guide.md'), 'utf8');
  const skillet = fs.readFileSync(path.join(fixturesDir, 'grounding-second/cast-iron-skillet.txt'), 'utf8');
  await uploadText(ctx, 'water-butt-guide.md', butt);
  await uploadText(ctx, 'cast-iron-skillet.txt', skillet);
  const res = await generate(ctx, { topic: 'Setting up a water butt for a vegetable garden', length: 'medium' });
  t.equal(res.statusCode, 201);
  const prompt = ollama.chatBodies[0]!.messages.map((m) => m.content).join('\n');
  const cited = [...prompt.matchAll(/^\[\d+\] \(([^)]+)\) /gm)].map((m) => m[1]);
  t.ok(cited.length > 0 && cited.every((name) => name === 'water-butt-guide.md'), `only the chosen document's passages, named: ${cited}`);
  t.match(prompt, /\(water-butt-guide\.md\) [^\n]*water butt/i, 'a passage of it, as its text');
  t.notMatch(prompt, /cast-iron-skillet\.txt|skillet/i, 'the unrelated document is not sent');
});

t.test('a client that disconnects cancels its generation', async (t) => {
  const slow = await startFakeOllama(t, { chat: hangingAnswer });
  const ctx = await buildTestApp(t, { GENERATOR: 'ollama', OLLAMA_HOST: slow.url }, { jobs: { autoStart: false } });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const controller = new AbortController();
  const pending = fetch(`http://127.0.0.1:${port}/api/v1/posts/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ topic: 'Never finished' }),
    signal: controller.signal,
  }).catch((error: Error) => error);
  await slow.chatsArrived(1);
  controller.abort();
  t.match(await pending, { name: 'AbortError' });
  await slow.chatsClosed(1);
  t.pass('the call to the model was dropped with the client');
  t.equal(await ctx.count('select count(*) as n from posts'), 0);
});

t.test('closing the app lets an in-flight request finish', async (t) => {
  const slow = await startFakeOllama(t, { chat: hangingAnswer });
  const ctx = await buildTestApp(t, { GENERATOR: 'ollama', OLLAMA_HOST: slow.url, GENERATION_TIMEOUT_MS: '500' }, { jobs: { autoStart: false } });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const inFlight = fetch(`http://127.0.0.1:${port}/api/v1/posts/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ topic: 'Finishing during shutdown' }),
  });
  await slow.chatsArrived(1);
  await ctx.app.close();
  const res = await inFlight;
  t.equal(res.status, 504, 'the request got its answer, not a dropped connection');
  t.equal(res.headers.get('connection'), 'close', 'and its connection is closed, so shutdown need not wait for it to idle out');
  t.equal((await res.json()).error.code, 'GENERATION_TIMEOUT');
});

t.test('a source the tagger has no dictionary form for ("cannot," before a comma) is written from, not a 500', async (t) => {
  const ctx = await buildTestApp(t);
  await uploadText(ctx, 'easy-runs.txt', 'Run your easy runs at a conversational pace. You should be able to speak in full sentences. If you cannot, slow down, even if that feels slow. Easy runs build the base of a training plan.');
  const res = await generate(ctx, { topic: 'Easy runs in a training plan' });
  t.equal(res.statusCode, 201, res.body);
  const post = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${res.json().post.id}` })).json().data.post;
  t.match(post.content, /easy-runs\.txt/, 'the post draws on the file');
});
