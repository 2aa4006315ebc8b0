import t from 'tap';
import {
  GenerationTimeoutError,
  GeneratorUnavailableError,
  InvalidModelOutputError,
  UnknownModelError,
} from '../../src/generation/errors.js';
import { OllamaGenerator } from '../../src/generation/ollama.js';
import { buildMessages, parseGeneratedPost, POST_JSON_SCHEMA } from '../../src/generation/prompt.js';
import { GeneratorService, type GeneratorConfig } from '../../src/generation/service.js';
import { normalizeModelName } from '../../src/ollama-models.js';
import type { GenerationRequest } from '../../src/generation/types.js';
import { answerWith, closedPortUrl, hangingAnswer, sendJson, startFakeOllama, validPost } from '../helpers/fake-ollama.js';

const request: GenerationRequest = {
  topic: 'Brewing better coffee at home',
  style: 'technical',
  length: 'short',
  tone: 'informative',
  includeExamples: true,
  targetAudience: 'home baristas',
  passages: [
    { fileId: 'f1', fileName: 'coffee-brewing-guide.md', score: 0.9, text: 'A finer grind extracts faster.' },
    { fileId: 'f2', fileName: 'bean-storage.txt', score: 0.8, text: 'Store beans in an airtight container.' },
  ],
};

function recordingLogger() {
  const warnings: { obj: unknown; msg?: string }[] = [];
  const infos: { obj: unknown; msg?: string }[] = [];
  return {
    warnings,
    infos,
    warn: (obj: object | string, msg?: string) => void warnings.push({ obj, msg }),
    info: (obj: object | string, msg?: string) => void infos.push({ obj, msg }),
  };
}

function manualClock(start = 1_000_000) {
  const clock = { now: start, read: () => clock.now };
  return clock;
}

const serviceConfig = (generator: GeneratorConfig['generator'], host: string, extra: Partial<GeneratorConfig> = {}): GeneratorConfig => ({
  generator,
  ollamaHost: host,
  ollamaModel: 'llama3.2',
  generationTimeoutMs: 10_000,
  ...extra,
});

// ---------------------------------------------------------------------------------------------
// OllamaGenerator
// ---------------------------------------------------------------------------------------------

t.test('OllamaGenerator', async (t) => {
  t.test('streams a chat with the model, the schema and the grounding passages', async (t) => {
    const ollama = await startFakeOllama(t);
    const generator = new OllamaGenerator({ host: ollama.url, model: 'llama3.2', timeoutMs: 5000 });
    const result = await generator.generate(request);

    t.equal(result.provider, 'ollama');
    t.equal(result.model, 'llama3.2');
    t.same(result.post, { ...validPost, tags: ['coffee', 'brewing', 'grind'] }, 'the parsed post, tags cleaned');

    t.equal(ollama.chatBodies.length, 1);
    const body = ollama.chatBodies[0];
    t.equal(body.model, 'llama3.2');
    t.equal(body.stream, true);
    t.same(body.format, POST_JSON_SCHEMA);
    t.equal(body.options?.num_ctx, 8192);
    const prompt = body.messages.map((m) => m.content).join('\n');
    t.match(prompt, '[1] (coffee-brewing-guide.md) A finer grind extracts faster.');
    t.match(prompt, '[2] (bean-storage.txt) Store beans in an airtight container.');
    t.match(prompt, 'Brewing better coffee at home');
    t.match(prompt, /about 400 words/);
    t.match(prompt, 'home baristas');
  });

  t.test('req.model overrides the configured model', async (t) => {
    const ollama = await startFakeOllama(t, { models: ['llama3.2:latest', 'mistral:7b'] });
    const generator = new OllamaGenerator({ host: ollama.url, model: 'llama3.2', timeoutMs: 5000 });
    const result = await generator.generate({ ...request, model: 'mistral:7b' });
    t.equal(ollama.chatBodies[0].model, 'mistral:7b');
    t.equal(result.model, 'mistral:7b');
  });

  t.test('invalid output is retried once', async (t) => {
    for (const [label, invalid] of [
      ['not JSON', 'Sure! Here is your post: # Coffee'],
      ['missing fields', JSON.stringify({ title: 'Only a title' })],
      ['wrong types', JSON.stringify({ ...validPost, tags: 'coffee' })],
      ['empty content', JSON.stringify({ ...validPost, content: '   ' })],
    ]) {
      const ollama = await startFakeOllama(t, { chat: answerWith(invalid, JSON.stringify(validPost)) });
      const generator = new OllamaGenerator({ host: ollama.url, model: 'llama3.2', timeoutMs: 5000 });
      const result = await generator.generate(request);
      t.equal(ollama.chatBodies.length, 2, `${label}: a second call`);
      t.equal(result.post.title, validPost.title, `${label}: the retry's post`);
      await ollama.close();
    }
  });

  t.test('twice invalid output fails with InvalidModelOutputError', async (t) => {
    const ollama = await startFakeOllama(t, { chat: answerWith('not json', JSON.stringify({ ...validPost, title: '' })) });
    const generator = new OllamaGenerator({ host: ollama.url, model: 'llama3.2', timeoutMs: 5000 });
    const err = await generator.generate(request).catch((e: unknown) => e);
    t.type(err, InvalidModelOutputError);
    t.match(err, { statusCode: 502, code: 'GENERATION_FAILED', message: /title is empty/ });
    t.equal(ollama.chatBodies.length, 2, 'exactly one retry');
  });

  t.test('an unreachable server is a 503', async (t) => {
    const host = await closedPortUrl();
    const generator = new OllamaGenerator({ host, model: 'llama3.2', timeoutMs: 5000 });
    const err = await generator.generate(request).catch((e: unknown) => e);
    t.type(err, GeneratorUnavailableError);
    t.match(err, { statusCode: 503, code: 'GENERATOR_UNAVAILABLE' });
    t.match((err as Error).message, `The Ollama server at ${host} is unreachable`);
    t.match((err as Error).message, /ECONNREFUSED/);
    await t.rejects(generator.listModels(), GeneratorUnavailableError);
  });

  t.test('a missing model is a 503 with the pull hint', async (t) => {
    const ollama = await startFakeOllama(t, { models: ['mistral:latest'] });
    const generator = new OllamaGenerator({ host: ollama.url, model: 'llama3.2', timeoutMs: 5000 });
    const err = await generator.generate(request).catch((e: unknown) => e);
    t.type(err, GeneratorUnavailableError);
    t.match(err, { statusCode: 503, message: /`ollama pull llama3\.2`/ });
  });

  t.test('other server errors are a 503 carrying the server message', async (t) => {
    const ollama = await startFakeOllama(t, { chat: (_call, _body, _req, res) => sendJson(res, 500, { error: 'out of memory' }) });
    const generator = new OllamaGenerator({ host: ollama.url, model: 'llama3.2', timeoutMs: 5000 });
    await t.rejects(generator.generate(request), { statusCode: 503, message: /answered 500: out of memory/ });
  });

  t.test('a stream that never finishes times out with a 504', async (t) => {
    const ollama = await startFakeOllama(t, { chat: hangingAnswer });
    const generator = new OllamaGenerator({ host: ollama.url, model: 'llama3.2', timeoutMs: 200 });
    const err = await generator.generate(request).catch((e: unknown) => e);
    t.type(err, GenerationTimeoutError);
    t.match(err, { statusCode: 504, code: 'GENERATION_TIMEOUT', message: /200 ms/ });
  });

  t.test('an AbortSignal cancels the request with its reason', async (t) => {
    const ollama = await startFakeOllama(t, { chat: hangingAnswer });
    const generator = new OllamaGenerator({ host: ollama.url, model: 'llama3.2', timeoutMs: 60_000 });
    const controller = new AbortController();
    const pending = generator.generate(request, controller.signal);
    await ollama.chatsArrived(1);
    const reason = new Error('job cancelled');
    controller.abort(reason);
    t.equal(await pending.catch((e: unknown) => e), reason, 'rejects with signal.reason');
    await ollama.chatsClosed(1);
    t.pass('the connection to Ollama was closed');
  });

  t.test('an already aborted signal sends nothing', async (t) => {
    const ollama = await startFakeOllama(t);
    const generator = new OllamaGenerator({ host: ollama.url, model: 'llama3.2', timeoutMs: 5000 });
    await t.rejects(generator.generate(request, AbortSignal.abort()), { name: 'AbortError' });
    t.equal(ollama.chatBodies.length, 0);
  });

  t.test('listModels returns the installed names', async (t) => {
    const ollama = await startFakeOllama(t, { models: ['llama3.2:latest', 'mistral:7b'] });
    const generator = new OllamaGenerator({ host: ollama.url, model: 'llama3.2', timeoutMs: 5000 });
    t.same(await generator.listModels(), ['llama3.2:latest', 'mistral:7b']);
  });
});

// ---------------------------------------------------------------------------------------------
// GeneratorService
// ---------------------------------------------------------------------------------------------

t.test('GeneratorService', async (t) => {
  t.test('auto with Ollama down uses the builtin composer and warns once', async (t) => {
    const host = await closedPortUrl();
    const log = recordingLogger();
    const clock = manualClock();
    const service = new GeneratorService(serviceConfig('auto', host), log, { now: clock.read });
    for (let i = 0; i < 3; i++) {
      const result = await service.generate(request);
      t.equal(result.provider, 'builtin', `call ${i + 1} falls back`);
      clock.now += 60_000; // past the cache TTL: the next call asks Ollama again
    }
    t.equal(log.warnings.length, 1, 'exactly one warning');
    t.match(log.warnings[0].msg, /unreachable/);
    t.match(log.warnings[0].msg, host);
    t.same(await service.status(), {
      mode: 'auto',
      active: 'builtin',
      ollama: { host, model: 'llama3.2', reachable: false, modelAvailable: false },
    });
  });

  t.test('auto with the model installed uses Ollama; "llama3.2" matches "llama3.2:latest"', async (t) => {
    const ollama = await startFakeOllama(t, { models: ['llama3.2:latest'] });
    const log = recordingLogger();
    const service = new GeneratorService(serviceConfig('auto', ollama.url), log);
    const result = await service.generate(request);
    t.equal(result.provider, 'ollama');
    t.equal(result.model, 'llama3.2');
    t.equal(ollama.chatBodies[0].model, 'llama3.2');
    t.same(await service.status(), {
      mode: 'auto',
      active: 'ollama',
      ollama: { host: ollama.url, model: 'llama3.2', reachable: true, modelAvailable: true },
    });
    t.equal(log.warnings.length, 0);
  });

  t.test('auto with the model missing falls back with the pull hint, and returns to Ollama once it is pulled', async (t) => {
    const ollama = await startFakeOllama(t, { models: ['mistral:latest'] });
    const log = recordingLogger();
    const clock = manualClock();
    const service = new GeneratorService(serviceConfig('auto', ollama.url), log, { now: clock.read });

    t.equal((await service.generate(request)).provider, 'builtin');
    t.equal((await service.generate(request)).provider, 'builtin');
    t.equal(log.warnings.length, 1);
    t.match(log.warnings[0].msg, '`ollama pull llama3.2`');
    t.match(await service.status(), { active: 'builtin', ollama: { reachable: true, modelAvailable: false } });
    t.equal(ollama.chatBodies.length, 0, 'Ollama was not asked to generate');

    ollama.models.push('llama3.2:latest');
    t.equal((await service.generate(request)).provider, 'builtin', 'the cached model list is trusted within the TTL');
    clock.now += 30_000;
    t.equal((await service.generate(request)).provider, 'ollama', 'after the TTL the new model is seen');
    t.equal(log.infos.length, 1, 'the recovery is logged');
    t.equal(log.warnings.length, 1, 'still one warning');
  });

  t.test('the model list is cached for the TTL and shared by concurrent calls', async (t) => {
    const ollama = await startFakeOllama(t);
    const clock = manualClock();
    const service = new GeneratorService(serviceConfig('auto', ollama.url), recordingLogger(), { now: clock.read });
    await Promise.all([service.generate(request), service.generate(request), service.status()]);
    t.equal(ollama.tagRequests, 1, 'one list request for three concurrent callers');
    clock.now += 29_999;
    await service.status();
    t.equal(ollama.tagRequests, 1, 'still cached just before the TTL');
    clock.now += 1;
    await service.status();
    t.equal(ollama.tagRequests, 2, 'asked again after the TTL');
  });

  t.test('auto falls back when Ollama disappears between the check and the generation', async (t) => {
    const ollama = await startFakeOllama(t, {
      chat: (_call, _body, req) => req.socket.destroy(),
    });
    const log = recordingLogger();
    const service = new GeneratorService(serviceConfig('auto', ollama.url), log);
    const result = await service.generate(request);
    t.equal(result.provider, 'builtin');
    t.equal(log.warnings.length, 1);
  });

  t.test('auto with an explicit model', async (t) => {
    const ollama = await startFakeOllama(t, { models: ['llama3.2:latest', 'mistral:latest'] });
    const service = new GeneratorService(serviceConfig('auto', ollama.url), recordingLogger());

    const mistral = await service.generate({ ...request, model: 'mistral' });
    t.equal(mistral.provider, 'ollama');
    t.equal(ollama.chatBodies[0].model, 'mistral');

    const builtin = await service.generate({ ...request, model: 'builtin' });
    t.equal(builtin.provider, 'builtin');

    const err = await service.generate({ ...request, model: 'gpt-x' }).catch((e: unknown) => e);
    t.type(err, UnknownModelError);
    t.match(err, { statusCode: 400, code: 'UNKNOWN_MODEL', permanent: true, message: /gpt-x.*ollama pull gpt-x/ });
    t.equal(ollama.chatBodies.length, 1, 'an unknown model never reaches Ollama');
  });

  t.test('auto with an explicit model while Ollama is down is a retryable 503, not a permanent error', async (t) => {
    const service = new GeneratorService(serviceConfig('auto', await closedPortUrl()), recordingLogger());
    const err = await service.generate({ ...request, model: 'mistral' }).catch((e: unknown) => e);
    t.type(err, GeneratorUnavailableError);
    t.notOk((err as { permanent?: boolean }).permanent);
  });

  t.test('strict ollama with the server down is a 503', async (t) => {
    const host = await closedPortUrl();
    const log = recordingLogger();
    const service = new GeneratorService(serviceConfig('ollama', host), log);
    await t.rejects(service.generate(request), { statusCode: 503, code: 'GENERATOR_UNAVAILABLE', message: /unreachable/ });
    t.same(await service.status(), {
      mode: 'ollama',
      active: 'ollama',
      ollama: { host, model: 'llama3.2', reachable: false, modelAvailable: false },
    });
    t.equal(log.warnings.length, 0, 'strict mode reports errors instead of falling back');
  });

  t.test('strict ollama with the model missing is a 503 with the pull hint', async (t) => {
    const ollama = await startFakeOllama(t, { models: ['mistral:latest'] });
    const service = new GeneratorService(serviceConfig('ollama', ollama.url), recordingLogger());
    await t.rejects(service.generate(request), { statusCode: 503, message: /`ollama pull llama3\.2`/ });
  });

  t.test('strict ollama rejects a requested model it does not have, permanently', async (t) => {
    const ollama = await startFakeOllama(t);
    const service = new GeneratorService(serviceConfig('ollama', ollama.url), recordingLogger());
    await t.rejects(service.generate({ ...request, model: 'gpt-x' }), { code: 'UNKNOWN_MODEL', permanent: true });
    await t.rejects(service.generate({ ...request, model: 'builtin' }), UnknownModelError, 'no builtin in strict mode');
    t.equal((await service.generate({ ...request, model: 'llama3.2:latest' })).provider, 'ollama');
  });

  t.test('strict ollama times out with a 504', async (t) => {
    const ollama = await startFakeOllama(t, { chat: hangingAnswer });
    const service = new GeneratorService(serviceConfig('ollama', ollama.url, { generationTimeoutMs: 200 }), recordingLogger());
    await t.rejects(service.generate(request), GenerationTimeoutError);
  });

  t.test('builtin mode never contacts Ollama and rejects other models', async (t) => {
    const ollama = await startFakeOllama(t);
    const service = new GeneratorService(serviceConfig('builtin', ollama.url), recordingLogger());
    const err = await service.generate({ ...request, model: 'gpt-x' }).catch((e: unknown) => e);
    t.type(err, UnknownModelError);
    t.match(err, { statusCode: 400, permanent: true, message: /gpt-x/ });
    t.equal((await service.generate(request)).provider, 'builtin');
    t.equal((await service.generate({ ...request, model: 'builtin' })).provider, 'builtin');
    t.same(await service.status(), {
      mode: 'builtin',
      active: 'builtin',
      ollama: { host: ollama.url, model: 'llama3.2', reachable: false, modelAvailable: false },
    });
    t.equal(ollama.tagRequests + ollama.chatBodies.length, 0, 'Ollama was never contacted');
  });
});

t.test('normalizeModelName adds the implicit :latest tag', async (t) => {
  t.equal(normalizeModelName('llama3.2'), 'llama3.2:latest');
  t.equal(normalizeModelName('llama3.2:latest'), 'llama3.2:latest');
  t.equal(normalizeModelName('mistral:7b'), 'mistral:7b');
  t.equal(normalizeModelName('registry.local:5000/team/model'), 'registry.local:5000/team/model:latest');
});

// ---------------------------------------------------------------------------------------------
// Prompt and answer parsing
// ---------------------------------------------------------------------------------------------

t.test('buildMessages', async (t) => {
  const many = Array.from({ length: 10 }, (_, i) => ({
    fileId: `f${i}`,
    fileName: `file-${i}.md`,
    score: i / 10,
    text: i === 9 ? 'x'.repeat(5000) : `Passage number ${i}.`,
  }));
  const [system, user] = buildMessages({ ...request, passages: many, includeExamples: false, length: 'long', targetAudience: null });
  t.equal(system.role, 'system');
  t.match(system.content, /JSON/);
  t.match(system.content, /attribute/);
  t.equal(user.role, 'user');
  t.match(user.content, /about 1,600 words/);
  t.match(user.content, /Do not include an examples section/);
  t.match(user.content, /Audience: a general audience/);
  t.match(user.content, /^\[1\] \(file-9\.md\) x+…$/m, 'the best passage first, clipped');
  t.match(user.content, /^\[8\] \(file-2\.md\) Passage number 2\.$/m);
  t.notMatch(user.content, /file-1\.md|file-0\.md/, 'at most eight passages');

  const [, bare] = buildMessages({ ...request, passages: [] });
  t.match(bare.content, /No sources are available/);
  t.match(bare.content, /section headed "Examples"/);
});

t.test('parseGeneratedPost', async (t) => {
  const parse = (value: unknown) => () => parseGeneratedPost(typeof value === 'string' ? value : JSON.stringify(value));
  t.same(parseGeneratedPost(JSON.stringify({ ...validPost, title: '  Spaced  ' })).title, 'Spaced', 'trims');
  const tags = Array.from({ length: 30 }, (_, i) => `tag-${i % 25}`);
  t.same(parseGeneratedPost(JSON.stringify({ ...validPost, tags: [' A ', 'a', '', ...tags] })).tags.length, 20, 'at most 20 tags');
  t.same(parseGeneratedPost(JSON.stringify({ ...validPost, tags: [' A ', 'a', ''] })).tags, ['A'], 'trimmed, non-empty, de-duplicated');
  t.same(parseGeneratedPost(JSON.stringify({ ...validPost, description: '' })).description, '', 'an empty description is allowed');

  const invalid: [string, () => unknown, RegExp][] = [
    ['not JSON', parse('{"title":'), /not valid JSON/],
    ['an array', parse([validPost]), /not a JSON object/],
    ['null', parse('null'), /not a JSON object/],
    ['missing title', parse({ ...validPost, title: undefined }), /title is missing/],
    ['numeric title', parse({ ...validPost, title: 7 }), /title is not a string/],
    ['blank title', parse({ ...validPost, title: ' ' }), /title is empty/],
    ['huge title', parse({ ...validPost, title: 'x'.repeat(301) }), /longer than 300/],
    ['missing content', parse({ ...validPost, content: undefined }), /content is missing/],
    ['missing description', parse({ ...validPost, description: undefined }), /description is missing/],
    ['numeric category', parse({ ...validPost, category: 1 }), /category is not a string/],
    ['missing tags', parse({ ...validPost, tags: undefined }), /tags is missing/],
    ['tags not an array', parse({ ...validPost, tags: 'coffee' }), /tags is not an array/],
    ['non-string tag', parse({ ...validPost, tags: ['ok', 3] }), /tags contains a non-string/],
  ];
  for (const [label, fn, message] of invalid) t.throws(fn, { name: 'InvalidModelOutputError', statusCode: 502, message }, label);
});
