import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { TOPICS } from '../../bench/grounding-set.mjs';
import { WORD_TARGETS } from '../../src/generation/types.js';
import { buildTestApp, fixturesDir, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

// Topics of the grounding evaluation (bench/grounding-set.mjs) where the outcome is decisive,
// asked for through the API over a knowledge base of some of its documents: the file a person
// would hand the writer is drawn on, the ones sharing only words with the topic are not.

const DOCUMENTS = [
  'balcony-tomatoes.md',
  'houseplant-care.txt',
  'composting-at-home.md',
  'home-brewing-beginners.txt',
  'orbit-analytics-4.3-release.md',
  'camping-checklist.txt',
  'vegetable-seed-catalogue.csv',
  'bike-maintenance.pdf',
  'puppy-training.doc',
  'home-energy-saving.doc',
  'cycling-commute.docx',
  'beekeeping-calendar.pdf',
  'weeknight-recipes.csv',
];

const CASES: { topic: string; drawn: string[]; notDrawn: string[] }[] = [
  // Paraphrases: no two sentences hold most of the topic's words.
  { topic: 'How to grow vegetables in containers', drawn: ['balcony-tomatoes.md'], notDrawn: ['composting-at-home.md', 'home-brewing-beginners.txt'] },
  { topic: 'Watering potted plants in summer', drawn: ['balcony-tomatoes.md', 'houseplant-care.txt'], notDrawn: ['camping-checklist.txt'] },
  { topic: 'Raising seedlings indoors', drawn: ['balcony-tomatoes.md'], notDrawn: ['composting-at-home.md'] },
  { topic: 'Teaching a young dog good manners', drawn: ['puppy-training.doc'], notDrawn: [] },
  { topic: 'Cutting your heating bill', drawn: ['home-energy-saving.doc'], notDrawn: [] },
  // Inflections and derived words: brewers/brewing, cyclists/cycling.
  { topic: 'Commuting cyclists\' winter clothes', drawn: ['cycling-commute.docx'], notDrawn: ['bike-maintenance.pdf'] },
  { topic: 'Composted kitchen scrap', drawn: ['composting-at-home.md'], notDrawn: ['balcony-tomatoes.md'] },
  { topic: 'Beehives in winter', drawn: ['beekeeping-calendar.pdf'], notDrawn: ['vegetable-seed-catalogue.csv'] },
  // Shapes: a guide, highlights, a numbered list.
  { topic: "A beginner's guide to home brewing", drawn: ['home-brewing-beginners.txt'], notDrawn: ['home-energy-saving.doc'] },
  { topic: 'Orbit Analytics 4.3 release highlights', drawn: ['orbit-analytics-4.3-release.md'], notDrawn: [] },
  { topic: '10 ways to save energy at home', drawn: ['home-energy-saving.doc'], notDrawn: ['composting-at-home.md'] },
  // A document whose title names most of the topic, though its rows never say "dinner".
  { topic: 'Weeknight dinners: 20 quick recipes', drawn: ['weeknight-recipes.csv'], notDrawn: ['home-brewing-beginners.txt'] },
  // Generic words only ("home", "guide", "beginner", "tips"): nothing to draw on.
  { topic: 'Home decorating on a small budget', drawn: [], notDrawn: DOCUMENTS },
  { topic: 'A beginner\'s guide to chess openings', drawn: [], notDrawn: DOCUMENTS },
  { topic: 'Tips for your first job interview', drawn: [], notDrawn: DOCUMENTS },
  // A head word said once in passing ("the fastest route by car"), nothing else of the topic.
  { topic: 'A guide to buying a used car', drawn: [], notDrawn: DOCUMENTS },
];

async function knowledgeBase(t: Test): Promise<TestApp> {
  const ctx = await buildTestApp(t);
  for (const name of DOCUMENTS) {
    const form = multipart([{ name: 'file', filename: name, content: fs.readFileSync(path.join(fixturesDir, 'grounding', name)), contentType: 'application/octet-stream' }]);
    const res = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers });
    t.equal(res.statusCode, 201, `${name} uploaded`);
  }
  await ctx.app.indexer.whenIdle();
  const list = (await ctx.call({ method: 'GET', url: '/api/v1/knowledge?limit=100' })).json().data.items as { name: string; status: string }[];
  t.same(list.filter((item) => item.status !== 'indexed').map((item) => item.name), [], 'every document indexed');
  return ctx;
}

interface Written {
  title: string;
  description: string;
  content: string;
  words: number;
  /** The writer's notes (the generate answer's, never the post's). */
  notes: string;
  outline: boolean;
}

async function write(ctx: TestApp, payload: Record<string, unknown>): Promise<Written> {
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload });
  if (res.statusCode !== 201) throw new Error(`generate: ${res.statusCode} ${res.body}`);
  const post = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${res.json().post.id}` })).json().data.post;
  const { notes, outline } = res.json().generation as { notes: string[]; outline: boolean };
  return { title: post.title, description: post.description, content: post.content, words: post.content.split(/\s+/).filter(Boolean).length, notes: notes.join(' '), outline };
}

/** The documents a post draws on (the builtin writer cites each file it quotes; its notes name each file it drew on). */
const cited = (post: Written) => DOCUMENTS.filter((name) => post.content.includes(name) || post.notes.includes(name));

t.test('a post draws on the documents a person would hand its writer, and not on those sharing only words', async (t) => {
  const ctx = await knowledgeBase(t);
  for (const { topic, drawn, notDrawn } of CASES) {
    const post = await write(ctx, { topic });
    const files = cited(post);
    for (const name of drawn) t.ok(files.includes(name), `${topic}: draws on ${name} (cites ${files.join(', ') || 'nothing'})`);
    for (const name of notDrawn) t.notOk(files.includes(name), `${topic}: leaves out ${name}`);
    if (drawn.length === 0) t.ok(post.outline, `${topic}: an outline draft, claiming no source`);
  }
});

t.test('length keeps its promise with the same sources, and a short post says why', async (t) => {
  const ctx = await knowledgeBase(t);
  const topics = ['Growing tomatoes on a balcony', 'How to grow vegetables in containers', 'Watering potted plants in summer', 'Orbit Analytics 4.3 release highlights', 'Keeping a bike running smoothly'];
  for (const topic of topics) {
    for (const style of ['professional', 'technical', 'academic']) {
      const posts: Record<string, Written> = {};
      for (const length of ['short', 'medium', 'long'] as const) posts[length] = await write(ctx, { topic, style, length, includeExamples: true });
      const label = `${topic} (${style}): ${posts.short!.words} / ${posts.medium!.words} / ${posts.long!.words} words`;
      t.ok(posts.short!.words <= posts.medium!.words && posts.medium!.words <= posts.long!.words, `${label}: never shorter for a longer length`);
      for (const length of ['short', 'medium', 'long'] as const) {
        if (posts[length]!.words < WORD_TARGETS[length] * 0.75) t.match(posts[length]!.notes, /Shorter than a \w+ post|Outline draft/, `${label}: the ${length} post's notes say why it is short`);
      }
    }
  }
});

t.test('descriptions and titles read right for every shape of topic in the evaluation set', async (t) => {
  const ctx = await knowledgeBase(t);
  for (const { topic, kind } of TOPICS) {
    if (kind === 'multilingual') continue;
    const post = await write(ctx, { topic });
    // A topic that is itself a guide, a list or highlights is not wrapped in "a guide to" again.
    t.notMatch(post.description, /\b(?:guide|walkthrough|overview|look) (?:to|at|of) (?:a|an|the)?\s*[^.]*\b(?:guide|tips|highlights|checklist|list|basics|101)\b/i, `${kind}: "${topic}": ${post.description}`);
    t.notMatch(post.title, /\b(Guide|Tips|Checklist|Basics|Highlights)\b.*: A (?:Practical|Professional's) Guide$|Guide to .*\bGuide\b/, `${kind}: "${topic}": ${post.title}`);
    t.notMatch(post.description, /\.\./, `${kind}: "${topic}": no doubled full stop`);
  }
});

t.test('with hybrid search the floors compare BM25 scores, and a passage only the vectors found is judged by its words', async (t) => {
  const { groundingPassages } = await import('../../src/generation/relevance.js');
  const tomatoes = 'Tomatoes on a balcony need pots of at least 20 litres. Water tomatoes in pots deeply every morning, and twice a day in a heatwave.';
  const houseplants = 'Potted houseplants want water when the top of the compost is dry. In summer, water potted plants more often, in the morning.';
  const shop = 'Our garden centre sells potted plants all summer long. Potted plants come with a card on watering.';
  const passages = [
    // Fused ranks are all close together; their BM25 scores are not.
    { fileId: 'a', fileName: 'balcony-tomatoes.md', text: tomatoes, score: 0.0325, lexicalScore: 6.2, ordinal: 0 },
    { fileId: 'b', fileName: 'garden-centre.md', text: shop, score: 0.0318, lexicalScore: 0.4, ordinal: 0 },
    { fileId: 'c', fileName: 'houseplant-care.txt', text: houseplants, score: 0.0161, lexicalScore: null, ordinal: 0 },
  ];
  const files = groundingPassages('Watering potted plants in summer', passages).map((p) => p.fileName);
  t.ok(files.includes('balcony-tomatoes.md'), `the best document is drawn on (${files.join(', ')})`);
  t.ok(files.includes('houseplant-care.txt'), 'a passage only the vectors found, about the topic, is drawn on');
  t.notOk(files.includes('garden-centre.md'), 'a side document close in fused rank but far below in BM25 is not');
  const lexical = passages.filter((p) => p.lexicalScore !== null).map(({ lexicalScore, ...p }) => ({ ...p, score: lexicalScore! }));
  t.same(groundingPassages('Watering potted plants in summer', lexical).map((p) => p.fileName), ['balcony-tomatoes.md'], 'lexical search, the same scores: the same choice');
});

t.test('a passage is analysed once for every post that draws on it, and the oldest are forgotten past the budget', async (t) => {
  const { analysedPassage, ANALYSED_TEXT_BUDGET } = await import('../../src/generation/relevance.js');
  const text = '## Watering\n\nWater potted tomatoes deeply in the morning. In a heatwave, water them twice a day.';
  // Two posts' passages are two objects (a worker thread receives copies): the same text, the same analysis.
  const first = analysedPassage({ text });
  t.equal(analysedPassage({ text: String(text) }), first, 'the second post reuses the analysis');
  t.ok(first.some((unit) => unit.stems.includes('water')), 'the analysis is of the text');
  // Passages filling the budget push the oldest out; it is analysed anew, alike.
  const filler = 'x'.repeat(100_000);
  for (let i = 0; i * filler.length <= ANALYSED_TEXT_BUDGET; i++) analysedPassage({ text: `${i} ${filler}` });
  const again = analysedPassage({ text });
  t.not(again, first, 'forgotten past the budget');
  t.same(again.map((unit) => unit.stems), first.map((unit) => unit.stems));
});
