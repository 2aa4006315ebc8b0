import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { BuiltinGenerator, countWords } from '../../src/generation/builtin/index.js';
import { nounPhrases } from '../../src/text/phrases.js';
import { analyseTopic, gerund } from '../../src/generation/builtin/topic.js';
import { GROUNDING_PASSAGES, RETRIEVED_PASSAGES, writeGroundedPost } from '../../src/generation/grounded.js';
import { buildMessages } from '../../src/generation/prompt.js';
import { groundingPassages, passagesToGroundOn } from '../../src/generation/relevance.js';
import type { GeneratedPost, GenerationRequest, GenerationResult, Passage } from '../../src/generation/types.js';
import { tagWords } from '../../src/text/nlp.js';
import { TAKEAWAY_LEAD, withoutTransition } from '../../src/generation/builtin/prose.js';
import { STOPWORDS } from '../../src/text/stopwords.js';
import { buildTestApp, fixturesDir, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

const fixture = (relative: string) => fs.readFileSync(path.join(fixturesDir, relative));
const COFFEE = fixture('text/coffee-brewing-guide.md').toString('utf8');

const base: GenerationRequest = {
  topic: 'How to brew better coffee at home',
  style: 'professional',
  length: 'medium',
  tone: 'informative',
  includeExamples: false,
  targetAudience: null,
  passages: [],
};
const generator = new BuiltinGenerator();
const write = async (overrides: Partial<GenerationRequest>): Promise<GeneratedPost> => (await generator.generate({ ...base, ...overrides })).post;
const coffee = (score = 1, fileName = 'coffee-brewing-guide.md', fileId = 'f-coffee'): Passage => ({ fileId, fileName, score, text: COFFEE });

/** The sentences of a post's body (headings and list markers dropped, citations removed). */
function sentencesOf(content: string): string[] {
  return content
    .split(/\n+/)
    .filter((line) => !/^#/.test(line))
    .map((line) => line.replace(/^\s*(?:[-*]|\d+\.)\s+/, '').replace(/\(source: \*[^*]+\*\)|\[\d+\]|^Source: \*[^*]+\*\.$/g, '').trim())
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=[\p{Lu}\d"“(])/u))
    .map((s) => s.replace(/\*/g, '').trim())
    .filter((s) => /\p{L}/u.test(s));
}
const flat = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

async function upload(ctx: TestApp, filename: string, content: Buffer | string): Promise<string> {
  const form = multipart([{ name: 'file', filename, content }]);
  const res = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers });
  t.equal(res.statusCode, 201, `upload ${filename}`);
  return res.json().data.knowledge.id;
}

async function generate(ctx: TestApp, payload: object) {
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload });
  t.equal(res.statusCode, 201);
  const { generation } = res.json() as { generation: { notes: string[]; outline: boolean } };
  const post = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${res.json().post.id}` })).json().data.post as GeneratedPost & { id: string };
  return Object.assign(post, { notes: generation.notes.join(' '), outline: generation.outline });
}

t.test('the generator chooses the passages it grounds a post on: the same posts and prompts as when they were chosen before', async (t) => {
  const ctx = await buildTestApp(t);
  await upload(ctx, 'coffee-brewing-guide.md', COFFEE);
  await upload(ctx, 'coffee-brewing-guide.txt', COFFEE);
  await upload(ctx, 'test03.docx', fixture('word/test03.docx'));
  await upload(ctx, 'release-notes-2026.txt', fixture('text/release-notes-2026.txt'));
  await ctx.app.indexer.whenIdle();
  let grounded = 0;
  for (const topic of ['How to brew better coffee at home', 'Water temperature and grind size for coffee', 'The BSD license and the GPL', 'What changed in the 2026 release', 'Remote work tips for new managers']) {
    const retrieved = await ctx.app.knowledge.search(ctx.site.id, topic, { limit: RETRIEVED_PASSAGES });
    const chosen = groundingPassages(topic, retrieved, GROUNDING_PASSAGES);
    if (chosen.length > 0) grounded++;
    const choosing = { ...base, topic, length: 'long' as const, includeExamples: true, passages: retrieved, groundingLimit: GROUNDING_PASSAGES };
    t.same(passagesToGroundOn(choosing), chosen);
    t.same(await write(choosing), await write({ ...choosing, passages: chosen, groundingLimit: undefined }), `${topic}: the composer writes the same post`);
    t.same(buildMessages(choosing), buildMessages({ ...choosing, passages: chosen, groundingLimit: undefined }), `${topic}: Ollama is sent the same prompt`);
  }
  t.ok(grounded >= 3, `${grounded} of the topics are grounded, one is not`);
});

t.test('an unrelated topic claims no source: an honest outline instead', async (t) => {
  const ctx = await buildTestApp(t);
  await upload(ctx, 'coffee-brewing-guide.md', COFFEE);
  await ctx.app.indexer.whenIdle();
  t.ok((await ctx.app.knowledge.search(ctx.site.id, 'Remote work tips for new managers')).length > 0, 'search alone finds the guide ("work best")');

  const post = await generate(ctx, { topic: 'Remote work tips for new managers' });
  t.notMatch(post.content, /coffee|grind|water|\(source:/i, 'nothing of the coffee guide');
  t.notMatch(post.description, /coffee|Drawn from|Outline draft/i);
  t.equal(post.outline, true, 'an outline, said so to staff');
  t.match(post.content, /^\*Outline draft\.\*/);
  t.match(post.notes, /no document in the knowledge base covers the topic yet/);
  t.notMatch(post.content, /knowledge base/, 'the note is not in the draft');
  t.ok((post.content.match(/^\*To cover:\* /gm) ?? []).length >= 3, 'each section says what it should cover');
  t.ok(countWords(post.content) < 400, 'no generic prose to pad it out');

  // The same floor applies to what Ollama is sent, and to the builtin writer given passages directly.
  let sent: Passage[] | null = null;
  let request: GenerationRequest | null = null;
  const recording = { generate: async (req: GenerationRequest): Promise<GenerationResult> => ((request = req), (sent = passagesToGroundOn(req)), { post, provider: 'ollama', model: 'x' }) };
  await writeGroundedPost({ knowledge: ctx.app.knowledge, generator: recording }, ctx.site.id, { topic: 'Remote work tips for new managers' });
  t.ok(request!.passages.length > 0 && request!.passages.length <= RETRIEVED_PASSAGES, 'the generator is handed what the search retrieved');
  t.equal(request!.groundingLimit, GROUNDING_PASSAGES, 'with the number it may ground the post on');
  t.same(sent, [], 'the model gets no passage');
  t.match(buildMessages({ ...base, topic: 'Remote work tips for new managers', passages: sent! })[1]!.content, /No sources are available/);
  const direct = await write({ topic: 'Remote work tips for new managers', passages: [coffee()] });
  t.notMatch(direct.content, /coffee-brewing-guide|\(source:/);
});

t.test('the same document uploaded twice, or as .doc and .docx: each file named once, no sentence twice', async (t) => {
  const ctx = await buildTestApp(t);
  await upload(ctx, 'coffee-brewing-guide.md', COFFEE);
  await upload(ctx, 'coffee-brewing-guide.md', COFFEE);
  await upload(ctx, 'coffee-brewing-guide.txt', COFFEE);
  await upload(ctx, 'test03.doc', fixture('word/test03.doc'));
  await upload(ctx, 'test03.docx', fixture('word/test03.docx'));
  await ctx.app.indexer.whenIdle();

  for (const [topic, style] of [
    ['How to brew better coffee at home', 'professional'],
    ['Water temperature and grind size for coffee', 'academic'],
    ['The BSD license and the GPL', 'technical'],
  ] as const) {
    const post = await generate(ctx, { topic, style, length: 'long', includeExamples: true });
    const sentences = sentencesOf(post.content).map(flat);
    const repeated = sentences.filter((s, i) => sentences.indexOf(s) !== i);
    t.same(repeated, [], `${topic}: no sentence twice`);
    t.notMatch(post.content, /\*([^*]+)\* and \*\1\*/, `${topic}: never "(*guide.md* and *guide.md*)"`);
    const cited = new Set([...post.content.matchAll(/\(source: \*([^*]+)\*\)|^Source: \*([^*]+)\*/gm)].map((m) => m[1] ?? m[2]));
    const references = post.content.split('## References')[1]?.trim().split('\n') ?? [];
    t.equal(new Set(references).size, references.length, `${topic}: references list each file once`);
    t.ok(cited.size + references.length <= 2, `${topic}: one copy of the document is cited: ${[...cited, ...references]}`);
    t.match(post.notes, /^Drawn from (?:[\w.-]+\.|2 documents)/, `${topic}: the notes count distinct files`);
    t.notMatch(post.content, /knowledge base/, `${topic}: the post does not talk about the knowledge base`);
  }

  // Overlapping chunks of one file repeat sentences; so does a copy: one of each is kept.
  const half = COFFEE.slice(0, COFFEE.indexOf('## Ratios'));
  const rest = COFFEE.slice(COFFEE.indexOf('## Water'));
  const passages: Passage[] = [
    { fileId: 'a', fileName: 'guide.md', score: 3, text: half },
    { fileId: 'a', fileName: 'guide.md', score: 2, text: rest, ordinal: 1 },
    { fileId: 'b', fileName: 'guide.md', score: 1, text: COFFEE },
  ];
  t.equal(groundingPassages(base.topic, passages).length, 2, 'the copy is dropped, the overlapping chunk kept');
  const post = await write({ passages, length: 'long' });
  const sentences = sentencesOf(post.content).map(flat);
  t.equal(new Set(sentences).size, sentences.length, 'no sentence of the overlap twice');
  t.match((await generator.generate({ ...base, passages, length: 'long' })).notes?.join(' ') ?? '', /^Drawn from guide\.md\./, 'one file, named once in the notes');
});

/** Verbs of the fixtures that the previous writer made key terms of ("needs", "add"). */
const VERBS = new Set(['needs', 'need', 'add', 'adds', 'use', 'uses', 'make', 'makes', 'controls', 'keep', 'keeps', 'store', 'scorches', 'pulls', 'extracts', 'damages', 'filter', 'run', 'install', 'edit', 'set', 'lets', 'work', 'works', 'support', 'supports']);

t.test('key terms, headings and tags are noun phrases, never verbs or stopwords', async (t) => {
  const ctx = await buildTestApp(t);
  for (const file of ['text/coffee-brewing-guide.md', 'text/release-notes-2026.txt', 'text/product-catalog.csv', 'word/bigfile-01.docx', 'word/test03.docx']) {
    await upload(ctx, path.basename(file), fixture(file));
  }
  await ctx.app.indexer.whenIdle();
  const fixed = /^(Conclusion|Summary|Wrapping Up|Final Thoughts|References|Examples in Practice|Some Examples|Worked Examples|Examples From the Field|Illustrative Examples)$/;
  for (const topic of ['How to brew better coffee at home', 'Cold brew coffee', 'Installing BlogCFC', 'Comment moderation in BlogCFC', 'Orbit Analytics release notes', 'Open source licenses', 'Trekking poles and tents']) {
    for (const style of ['professional', 'technical'] as const) {
      const post = await generate(ctx, { topic, style, length: 'long' });
      const headings = (post.content.match(/^## .+$/gm) ?? []).map((h) => h.slice(3)).filter((h) => !fixed.test(h));
      const conclusion = post.content.split(/^## (?:Conclusion|Summary)$/m)[1] ?? '';
      const keys = /is (.+)\.$/m.exec(conclusion)?.[1]?.split(/, | and /) ?? [];
      for (const term of [...post.tags, ...headings, ...keys]) {
        const words = term.toLowerCase().split(/\s+/);
        t.notOk(words.every((w) => STOPWORDS.has(w)), `${topic}: "${term}" is not a stopword`);
        t.notOk(words.length === 1 && VERBS.has(words[0]!), `${topic}: "${term}" is not a verb`);
        t.notOk(VERBS.has(words.at(-1)!) && !/^(?:The|A|An)\b/.test(term) && words.length > 1 && !headings.includes(term), `${topic}: "${term}" does not end in a verb`);
      }
      for (const tag of post.tags) {
        t.equal(tag, tag.toLowerCase(), `tag "${tag}" is lower case`);
        const phrases = nounPhrases(tagWords(tag, { lowerAll: true }), { heading: true });
        t.ok(phrases.some((p) => p.text.toLowerCase() === tag || tag.endsWith(p.text.toLowerCase())), `${topic}: tag "${tag}" is a noun phrase`);
      }
    }
  }
});

t.test('grammar of the writer’s own sentences, for plural, question and how-to topics', async (t) => {
  const sources = [coffee()];
  // Plural subjects agree; singular ones too.
  const benefits = await write({ topic: 'The benefits of remote work', tone: 'persuasive', passages: [] });
  t.match(benefits.content, /The benefits of remote work are worth a post of their own/);
  const authoritative = await write({ topic: 'The benefits of remote work', tone: 'authoritative', passages: [] });
  t.match(authoritative.content, /The benefits of remote work reward a rigorous approach/);
  t.match(authoritative.content, /## Why They Matter/);
  const singular = await write({ topic: 'Cold brew coffee', tone: 'authoritative', passages: sources });
  t.match(singular.content, /^Cold brew coffee rewards a rigorous approach\./);
  t.match((await write({ topic: 'Espresso basics', tone: 'persuasive', passages: sources })).content, /^Espresso basics are worth getting right/);

  // A question is asked once, as a question, never wrapped in another ("what really makes what makes ...").
  for (const tone of ['informative', 'persuasive', 'conversational', 'authoritative'] as const) {
    const post = await write({ topic: 'What makes a good pour-over?', tone, passages: sources });
    t.match(post.content, /^What makes a good pour-over\? /, `${tone}: opens with the question`);
    t.notMatch(post.content, /makes what makes|about what makes|to what makes|What Makes a Good Pour-over\?:/i);
    t.match(post.title, /^What Makes a Good Pour-over\? [A-Z]/);
    t.notMatch(post.title, /\?[:,]/);
  }
  // "How to" topics: the phrase where it reads as one, the gerund where a noun is needed.
  const how = await write({ topic: 'How to brew better coffee at home', passages: sources });
  t.match(how.content, /^This post explains how to brew better coffee at home\./);
  t.match(how.description, /^A practical guide to brewing better coffee at home for anyone getting started\./);
  t.match(how.content, /In short, brewing better coffee at home comes down to getting [a-z ]+ right, and the rest builds on it\./);
  t.equal(gerund('set'), 'setting');
  t.equal(gerund('make'), 'making');
  t.equal(gerund('open'), 'opening');

  // Names keep their capitals; other capitals are lowered mid-sentence.
  t.equal(analyseTopic('Small business owners and cash flow').subject, 'small business owners and cash flow');
  t.equal(analyseTopic('Small business owners and cash flow').plural, true);
  t.equal(analyseTopic('Remote Work Tips For New Managers').subject, 'remote work tips for new managers');
  t.equal(analyseTopic('Kubernetes autoscaling for small teams').subject, 'Kubernetes autoscaling for small teams');
  t.equal(analyseTopic('SAML single sign-on for startups').subject, 'SAML single sign-on for startups');
  t.equal(analyseTopic('Orbit Analytics release notes').subject, 'Orbit Analytics release notes');
  t.equal(analyseTopic('The future of remote work').plural, false);
  const owners = await write({ topic: 'Small business owners and cash flow', passages: [] });
  t.match(owners.content, /a post on small business owners and cash flow\./);
  t.notMatch(owners.content, /for Small business/);

  // One source is one source (in the notes; the post itself does not talk about its sources).
  t.match((await generator.generate({ ...base, topic: 'How to brew better coffee at home', passages: [coffee()] })).notes?.join(' ') ?? '', /^Drawn from coffee-brewing-guide\.md\./);
  t.notMatch(how.content, /knowledge base/);
  t.notMatch(how.content, /sources quoted above|quotes them/);
});

t.test('the body is the sources’ own sentences, grouped under their headings, in reading order', async (t) => {
  const post = await write({ passages: [coffee()], length: 'long' });
  const sentences = sentencesOf(post.content.split('\n## Conclusion')[0]!.split('\n\n').slice(1).join('\n\n')).map(withoutTransition);
  const fromSource = sentences.filter((s) => flat(COFFEE).includes(flat(s)));
  t.same(sentences.filter((s) => !fromSource.includes(s)), [], 'every body sentence is the source’s own');
  // The conclusion closes on one more of them.
  const closing = post.content.split(TAKEAWAY_LEAD)[1]?.replace(/\(source: \*[^*]+\*\)/, '').trim() ?? '';
  t.ok(flat(COFFEE).includes(flat(closing)), `the conclusion closes on a sentence of the guide: ${closing}`);
  t.ok(fromSource.length + 1 >= 12, `most of the guide is used: ${fromSource.length} + 1`);
  t.same(
    post.content.match(/^## .+$/gm),
    ['## Grind Size', '## Brewing Better Coffee: Water', '## Brewing Better Coffee: Ratios', '## Brewing Better Coffee: Freshness', '## Conclusion'],
    'sections follow the document, under its own headings (a one-word heading made a phrase about the topic)',
  );
  t.match(post.content, /A good starting ratio for filter coffee is 1:16, that is 60 grams of coffee per litre of water\./, 'the figures are kept');
  const own = sentencesOf(post.content).map(withoutTransition).filter((s) => !flat(COFFEE).includes(flat(s))).length;
  t.ok(own <= 6, `at most a short introduction and conclusion of the writer’s own: ${own} sentences`);
  t.notMatch(post.description, /Shorter than|knowledge base/, 'the description holds no note');
});

t.test('a related topic uses only the passages about it', async (t) => {
  const notes = fixture('text/release-notes-2026.txt').toString('utf8');
  const passages: Passage[] = [
    { fileId: 'n', fileName: 'release-notes-2026.txt', score: 5, text: notes },
    { fileId: 'c', fileName: 'coffee-brewing-guide.md', score: 1, text: COFFEE },
  ];
  const post = await write({ topic: 'Data retention and exports in Orbit Analytics', passages, style: 'academic' });
  t.match(post.content, /(?:Data|, data) retention can be configured per project/);
  t.notMatch(post.content, /coffee/i, 'the coffee guide shares no term with the topic');
  t.match(post.content, /^## References\n\n1\. release-notes-2026\.txt$/m);
});
