import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { groundingPassages, topicProfile } from '../../src/generation/relevance.js';
import type { Passage } from '../../src/generation/types.js';
import { fixturesDir } from '../helpers/app.js';

// The general rules that choose which documents ground a post, each on documents of the
// grounding set given whole as one passage each, with the search scores they would have.

const document = (name: string, score: number): Passage => ({
  fileId: name,
  fileName: name,
  score,
  text: fs.readFileSync(path.join(fixturesDir, 'grounding', name), 'utf8'),
});
const drawn = (topic: string, passages: Passage[]) => [...new Set(groundingPassages(topic, passages).map((passage) => passage.fileName))];
const headOf = (topic: string) => topicProfile(topic).terms.find((term) => term.head)?.stems.join(' ');

t.test('a gerund before a framing word is the head of its noun phrase', async (t) => {
  t.equal(headOf('Spring cleaning checklist for the whole home'), 'clean');
  t.equal(headOf('Spring cleaning for the whole home'), 'clean', 'as when the phrase ends there');
});

t.test('a core of generic words alone makes no document about the topic', async (t) => {
  // The checklist's "Sleeping" section (what the search finds of it) is about sleeping bags, not better sleep.
  const camping = document('camping-checklist.txt', 6.9);
  const sleeping = { ...camping, text: camping.text.slice(camping.text.indexOf('SLEEPING'), camping.text.indexOf('KITCHEN')) };
  t.same(drawn('Tips for better sleep at home', [sleeping]), []);
  t.same(drawn('The ultimate camping checklist', [document('camping-checklist.txt', 6.9)]), ['camping-checklist.txt'], 'a particular subject still is');
});

t.test('a generic head takes its subject from the nouns before it', async (t) => {
  t.same(topicProfile('Potted tomato plants').headModifiers.map((term) => term.stems.join(' ')), ['tomato']);
  t.same(topicProfile('Tips for better sleep at home').headModifiers, [], 'a particular head needs none');
  t.same(drawn('Potted tomato plants', [document('balcony-tomatoes.md', 8.5), document('houseplant-care.txt', 5.7)]), ['balcony-tomatoes.md'], 'houseplants are other plants');
});

t.test('two rare words of the topic, most of those it has, named beside its head make a document about it', async (t) => {
  const profile = topicProfile('Sorting out your self-assessment as a self-employed designer');
  t.same(profile.terms.filter((term) => term.rare).map((term) => term.stems.join(' ')), ['self assessment', 'self employ']);
  const text = fs.readFileSync(path.join(fixturesDir, 'grounding-second', 'freelance-tax-return.md'), 'utf8');
  // What the search finds of the guide: its opening and first section, which name each rare word once.
  const opening: Passage = { fileId: 'tax', fileName: 'freelance-tax-return.md', score: 6.2, text: text.slice(0, text.indexOf('## Keeping records')) };
  const other: Passage = { fileId: 'other', fileName: 'portfolio.md', score: 3.2, text: 'A designer keeps a portfolio of finished work. Show your best designs first.' };
  t.same(drawn('Sorting out your self-assessment as a self-employed designer', [opening, other]), ['freelance-tax-return.md']);
  t.same(drawn('Sorting out your self-assessment as a self-employed designer', [other]), [], 'one word of the topic is not enough');
});

t.test('a title naming a kind of the head, every particular noun of the topic named, makes a document about it', async (t) => {
  // "The Sourdough Baking Guide": sourdough is a kind of bread; "naturally leavened" only qualifies it.
  const sourdough = document('sourdough-baking.md', 5.5);
  t.same(drawn('Making naturally leavened bread', [sourdough, document('home-energy-saving.doc', 2.4)]), ['sourdough-baking.md']);
});

const note = (name: string, score: number, text: string): Passage => ({ fileId: name, fileName: name, score, text });

t.test('a kind of the topic counts where it is used as a noun', async (t) => {
  // "free" is a kind of release (a liberation) only as a noun: "free advice" names none.
  const advice = note(
    'debt-advice.md',
    4,
    '# Getting out of debt\n\nA free advice service can look at your debts with you. They help you find a repayment plan you can keep to, and they negotiate with lenders.\n\nA plan written down is easier to follow than one in your head.',
  );
  t.same(drawn('Release planning for a mobile app', [advice]), []);
  const notes = note('release-checklist.md', 6, '# Release checklist\n\nEvery release of the app follows the same plan. The release plan lists the features frozen, the test days and the store review.');
  t.same(drawn('Release planning for a mobile app', [notes, advice]), ['release-checklist.md'], 'a document naming the release itself still is');
});

t.test('the words saying which one the head means are named with it', async (t) => {
  t.same(topicProfile('Fire safety in a rented flat').headQualifiers.map((term) => term.stems.join(' ')), ['fire']);
  t.same(topicProfile('Indoor plants for a dark room').headQualifiers.map((term) => term.stems.join(' ')), ['indoor'], 'a particular adjective before a generic head');
  t.same(topicProfile('Tips for better sleep at home').headQualifiers, [], 'none for a head with no modifier');
  t.same(topicProfile('Setting up a rain barrel for a small vegetable garden').headQualifiers, [], 'a compound WordNet knows goes by its synonyms');
  t.same(topicProfile('Brot backen mit Hefe').headQualifiers, [], 'nor for a topic in another language');
  // The head ("safety") and the qualifier ("fire") both named, but apart: a section on safe
  // climbing that mentions a camp fire is not about fire safety.
  const climbing = note(
    'climbing-basics.md',
    5,
    '# Climbing basics\n\n## Safety\n\nCheck your harness buckles and your partner\'s knot before every climb. Safety comes before the summit.\n\n## Evenings\n\nAt the hut, dry your ropes well away from the fire and the stove.',
  );
  const alarms = note('smoke-alarms.md', 6, '# Fire safety for tenants\n\nFit a smoke alarm on every floor. Fire safety in a flat starts with a tested alarm and a clear way out.');
  t.same(drawn('Fire safety in a rented flat', [alarms, climbing]), ['smoke-alarms.md']);
  // Under a title naming the qualifier, a sentence naming the head is qualified by it.
  const guide = note('fire-guide.md', 6, '# Fire at home\n\n## Alarms in a rented flat\n\nSafety in a flat starts with an alarm on every floor. Your landlord fits it and you test it monthly: safety is a habit.');
  t.same(drawn('Fire safety in a rented flat', [guide]), ['fire-guide.md']);
  // A particular adjective before a generic head: plants in a greenhouse, and an indoor dog in
  // a dark room, are not indoor plants.
  const greenhouse = note(
    'greenhouse-notes.md',
    5,
    '# Greenhouse notes\n\nThe plants in our greenhouse grow slowly but steadily. We water the plants twice a week.\n\nOur indoor dog sleeps all day in the dark room next to it.',
  );
  t.same(drawn('Indoor plants for a dark room', [greenhouse]), []);
});

t.test('beside the best document, another must name what the topic does, where its head is generic', async (t) => {
  const activity = (topic: string) => topicProfile(topic).activity?.stems.join(' ') ?? null;
  t.equal(activity('Watering potted plants in summer'), 'water');
  t.equal(activity('When should I replace my bike chain?'), 'replace');
  t.equal(activity('Keeping a bike running smoothly'), null, '"keeping" does nothing particular');
  t.equal(activity('Indoor plants that cope with a dark room'), null, 'a topic that opens with its subject');
  // The catalogue's chard is "ornamental in pots", and it never says water.
  t.same(
    drawn('Watering potted plants in summer', [document('houseplant-care.txt', 9.5), document('balcony-tomatoes.md', 6.9), document('vegetable-seed-catalogue.csv', 5.7)]),
    ['houseplant-care.txt', 'balcony-tomatoes.md'],
  );
  // As the best source there is, a document is drawn on all the same.
  t.same(drawn('Watering potted plants in summer', [document('vegetable-seed-catalogue.csv', 5.7)]), ['vegetable-seed-catalogue.csv']);
});

t.test("a how-to's verb counts only where it is used as a verb", async (t) => {
  t.match(topicProfile('How to compost at home in 6 steps').terms.find((term) => term.head), { stems: ['compost'], verb: true });
  // The houseplant guide's compost is what plants are potted in: it never composts anything.
  t.same(drawn('How to compost at home in 6 steps', [document('composting-at-home.md', 5.7), document('houseplant-care.txt', 5.3)]), ['composting-at-home.md']);
  t.same(drawn('How to compost at home in 6 steps', [document('houseplant-care.txt', 5.3)]), [], 'nor is it the best source there is');
});
