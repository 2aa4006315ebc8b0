import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { BuiltinGenerator, countWords } from '../../src/generation/builtin/index.js';
import { checkProse, lengthOrderHolds, sentencesOf } from '../../src/generation/builtin/prose-check.js';
import { isBareHeading, isTagPhrase, listsThings, TAKEAWAY_LEAD, takesTransition, transitionOf, withTransition, withoutTransition } from '../../src/generation/builtin/prose.js';
import type { GenerationRequest, Passage } from '../../src/generation/types.js';
import { LENGTHS, STYLES, TONES } from '../../src/limits.js';
import { isUnitOfMeasurement, usageByPart } from '../../src/text/wordnet.js';
import { fixturesDir } from '../helpers/app.js';

const doc = (relative: string): Passage => ({
  fileId: relative,
  fileName: path.basename(relative),
  score: 1,
  text: fs.readFileSync(path.join(fixturesDir, relative), 'utf8'),
});
const WATER_BUTT = doc('grounding-second/water-butt-guide.md');
const SKILLET = doc('grounding-second/cast-iron-skillet.txt');
const COFFEE = doc('text/coffee-brewing-guide.md');

const base: GenerationRequest = {
  topic: 'Setting up a water butt for a vegetable garden',
  style: 'professional',
  length: 'medium',
  tone: 'informative',
  includeExamples: false,
  targetAudience: null,
  passages: [WATER_BUTT],
};
const generator = new BuiltinGenerator();
const write = async (overrides: Partial<GenerationRequest>) => (await generator.generate({ ...base, ...overrides })).post;

t.test('the checker finds each breach in a post written badly on purpose', async (t) => {
  const bad = [
    'can therefore collect around 6,000 litres in a year',
    '## Soil',
    'Use stored rainwater for beds and pots. Use stored rainwater for beds and pots.',
    '## Square Metre',
    'A butt holds 200 litres. (source: *guide.md*)',
    '## Conclusion',
    'In short, what matters most is water, square metre, roof and soil.',
  ].join('\n\n');
  const found = checkProse({ content: bad, tags: ['square metre', 'rest', 'the', 'water butt'] });
  t.same(found.midSentence, ['can therefore collect around 6,000 litres in a year']);
  t.same(found.bareHeadings, ['Soil', 'Square Metre']);
  t.same(found.nounListEndings, ['In short, what matters most is water, square metre, roof and soil.']);
  t.same(found.repeatedSentences, ['Use stored rainwater for beds and pots.']);
  t.same(found.badTags, ['square metre', 'rest', 'the']);
  t.ok(lengthOrderHolds({ short: 100, medium: 200, long: 300 }));
  t.notOk(lengthOrderHolds({ short: 120, medium: 120, long: 300 }), 'equal lengths break the order');
  t.notOk(lengthOrderHolds({ short: 200, medium: 300, long: 150 }));
});

t.test('no paragraph starts or ends mid-sentence; a "therefore" never loses the sentence it follows from', async (t) => {
  for (const length of LENGTHS) {
    for (const [topic, passage] of [
      [base.topic, WATER_BUTT],
      ['Seasoning a cast iron skillet', SKILLET],
    ] as const) {
      const post = await write({ topic, passages: [passage], length });
      t.same(checkProse(post).midSentence, [], `${topic} (${length})`);
      // "A shed roof ... can therefore collect ..." follows the sentence that gives the figure it draws on.
      const paragraphs = post.content.split('\n\n');
      for (const [i, paragraph] of paragraphs.entries()) {
        const sentences = sentencesOf(paragraph);
        const at = sentences.findIndex((s) => /\btherefore\b/.test(s));
        if (at >= 0) t.ok(at > 0, `"therefore" is not the first sentence of a paragraph: ${paragraphs[i]}`);
      }
    }
  }
  // The source's sentence before the "therefore" is left out: so is the "therefore".
  const cut = await write({
    passages: [{ ...WATER_BUTT, text: 'Each square metre of roof collects about 600 litres a year. A shed roof of ten square metres can therefore collect around 6,000 litres in a year. A water butt catches rain from a roof and stores it for the garden.' }],
    length: 'short',
  });
  t.notMatch(cut.content.split(/\n\n/)[1] ?? '', /^(?:[A-Z][a-z]+ ){0,3}[^.]*\btherefore\b/, 'never the opening of a paragraph');
});

t.test('section headings are phrases about the topic, never a single noun or a unit', async (t) => {
  t.ok(isBareHeading('Soil'));
  t.ok(isBareHeading('The Water'));
  t.ok(isBareHeading('Square Metre'), 'a unit of measurement');
  t.notOk(isBareHeading('Grind Size'));
  t.notOk(isBareHeading('Connecting it to a downpipe'));
  const coffee = await write({ topic: 'How to brew better coffee at home', passages: [COFFEE], length: 'long' });
  const headings = (coffee.content.match(/^## .+$/gm) ?? []).map((h) => h.slice(3));
  t.ok(headings.includes('Brewing Better Coffee: Water'), `the guide's "Water" is named for the topic: ${headings}`);
  t.notOk(headings.includes('Water'));
  for (const style of STYLES) {
    for (const [topic, passage] of [
      [base.topic, WATER_BUTT],
      ['Seasoning a cast iron skillet', SKILLET],
      ['Cold brew coffee', COFFEE],
    ] as const) {
      const post = await write({ topic, passages: [passage], style, length: 'long', includeExamples: true });
      t.same(checkProse(post).bareHeadings, [], `${topic} (${style})`);
    }
  }
});

t.test('the closing paragraph makes a point instead of listing nouns', async (t) => {
  t.ok(listsThings('In short, what matters most for brewing better coffee at home is water, grind size, ratios and freshness.'));
  t.ok(listsThings('So, which will you look at first: grind size, water, ratios and freshness?'));
  t.notOk(listsThings('Cool the burn, cover it and call for help.'), 'verbs: a list of steps says something');
  t.notOk(listsThings('In short, the rest builds on getting the grind right.'));
  for (const tone of TONES) {
    const post = await write({ topic: 'How to brew better coffee at home', passages: [COFFEE], tone, length: 'long' });
    t.same(checkProse(post).nounListEndings, [], tone);
    const closing = post.content.split(/^## (?:Conclusion)$/m)[1]!;
    t.ok(closing.includes(TAKEAWAY_LEAD), `${tone}: the conclusion closes on a point from the guide`);
    const takeaway = closing.split(TAKEAWAY_LEAD)[1]!.split('\n\n')[0]!.replace(/\(source: \*[^*]+\*\)/, '').trim();
    t.ok(COFFEE.text.replace(/\s+/g, ' ').includes(takeaway), `${tone}: the guide's own sentence: ${takeaway}`);
    // Not said twice: the sections no longer hold it.
    t.equal(post.content.split(takeaway).length, 2, `${tone}: "${takeaway}" appears once`);
  }
});

t.test('source sentences are joined with transitions, and no sentence appears twice', async (t) => {
  t.equal(withTransition('Store them in an airtight container.', 'Also'), 'Also, store them in an airtight container.');
  t.equal(withoutTransition('Also, store them in an airtight container.'), 'Store them in an airtight container.');
  t.equal(transitionOf('In addition, soft water helps.'), 'In addition');
  t.notOk(takesTransition('However, boiling water scorches light roasts.'), 'a connective of its own');
  t.notOk(takesTransition('Lisbon is built on seven hills.'), 'a name keeps its capital');
  t.notOk(takesTransition('V60 filters need a medium-fine grind.'));
  t.ok(takesTransition('Boiling water scorches light roasts.'));
  for (const [topic, passage] of [
    [base.topic, WATER_BUTT],
    ['Seasoning a cast iron skillet', SKILLET],
    ['How to brew better coffee at home', COFFEE],
  ] as const) {
    const post = await write({ topic, passages: [passage], length: 'long' });
    const sentences = sentencesOf(post.content);
    t.ok(sentences.some((s) => transitionOf(s)), `${topic}: transitions join the sources' sentences`);
    // A transition never follows another: never two in a row.
    for (const paragraph of post.content.split('\n\n')) {
      const inner = sentencesOf(paragraph);
      for (let i = 1; i < inner.length; i++) t.notOk(transitionOf(inner[i]!) && transitionOf(inner[i - 1]!), `${topic}: one transition at a time`);
    }
    t.same(checkProse(post).repeatedSentences, [], `${topic}: no sentence twice`);
    const source = passage.text.replace(/\s+/g, ' ');
    for (const sentence of sentences.filter((s) => transitionOf(s))) t.ok(source.includes(withoutTransition(sentence)), `${topic}: the source's sentence, as written, after "${transitionOf(sentence)}"`);
  }
});

t.test('tags are noun phrases naming the subject: never verbs, stopwords or units', async (t) => {
  t.ok(isUnitOfMeasurement('square metre'));
  t.ok(isUnitOfMeasurement('mm'));
  t.ok(isUnitOfMeasurement('litres'));
  t.notOk(isUnitOfMeasurement('roof'));
  t.ok(usageByPart('care').verb > usageByPart('care').noun, 'WordNet knows "care" mostly as a verb');
  for (const bad of ['square metre', 'rest', 'care', 'the', 'about', '3000 mm hydrostatic head', 'mm hydrostatic head', 'run']) t.notOk(isTagPhrase(bad), `"${bad}" is no tag`);
  for (const good of ['water butt', 'grind size', 'cast iron skillet', 'rainwater', 'sourdough starter', 'lisbon']) t.ok(isTagPhrase(good), `"${good}" is a tag`);
  for (const [topic, passage] of [
    [base.topic, WATER_BUTT],
    ['Seasoning a cast iron skillet', SKILLET],
    ['How to brew better coffee at home', COFFEE],
    ['Camping gear for a weekend trip', doc('text/product-catalog.csv')],
  ] as const) {
    for (const length of LENGTHS) {
      const post = await write({ topic, passages: [passage], length });
      t.same(checkProse(post).badTags, [], `${topic} (${length}): ${post.tags}`);
      t.ok(post.tags.length >= 2, `${topic}: tags left: ${post.tags}`);
    }
  }
});

t.test('long is longer than medium, longer than short, for every source size', async (t) => {
  const sentences = WATER_BUTT.text.split(/(?<=\.)\s+/).filter((s) => /^[A-Z]/.test(s) && !s.includes('#'));
  const sizes: [string, Passage[]][] = [
    ['one sentence', [{ ...WATER_BUTT, text: 'A water butt catches rain from a roof and stores it for the garden.' }]],
    ['three sentences', [{ ...WATER_BUTT, text: sentences.slice(0, 3).join(' ') }]],
    ['a short document', [WATER_BUTT]],
    ['two documents', [WATER_BUTT, { ...SKILLET, score: 0.5 }]],
  ];
  for (const [size, passages] of sizes) {
    for (const style of STYLES) {
      const words = Object.fromEntries(await Promise.all(LENGTHS.map(async (length) => [length, countWords((await write({ passages, style, length })).content)]))) as Record<'short' | 'medium' | 'long', number>;
      t.ok(lengthOrderHolds(words), `${size}, ${style}: long ${words.long} > medium ${words.medium} > short ${words.short}`);
    }
  }
  // With little source text, the short post is the one that gives way: the long one says one sentence more than the medium.
  const thin = [{ ...WATER_BUTT, text: sentences.slice(0, 3).join(' ') }];
  const [short, medium, long] = await Promise.all(LENGTHS.map(async (length) => (await write({ passages: thin, length })).content));
  t.ok(countWords(short!) < countWords(medium!) - 20, `the short post leaves source text out: ${countWords(short!)} against ${countWords(medium!)}`);
  t.ok(countWords(long!) - countWords(medium!) <= 20, `the long post is not padded out: ${countWords(long!)} against ${countWords(medium!)}`);
});
