// Second part of npm run bench:writer: the prose rules, checked mechanically over 30 topics.
//
// Each topic is written at all three lengths by the builtin writer from the documents of the
// grounding fixtures (test/fixtures/grounding and grounding-second: short documents, so every
// post here is one with little source text), given its own document and two others it must
// leave out. Per rule, the number of breaches over all posts (goal: all zero):
//   mid-sentence     a paragraph starting or ending mid-sentence
//   bare headings    a section heading of one noun ("Soil") or a unit ("Square Metre")
//   noun-list ends   a closing sentence that lists three things or more instead of saying something
//   repeated         a sentence written twice
//   bad tags         a tag that is no noun phrase naming a subject (a verb, a stopword, a unit)
//   length order     a topic whose long post is not longer than its medium one, or medium than short
//   no transition    (information) paragraphs of two source sentences or more joined without one
//
// TOPICS were looked at one by one while the rules were written; HELD_OUT only as figures.

import path from 'node:path';
import { FIXTURES_DIR, dist, printResult, printTable, runBench, verdict } from './lib.mjs';

const g1 = (file) => `grounding/${file}`;
const g2 = (file) => `grounding-second/${file}`;

const STYLES = ['professional', 'casual', 'technical', 'academic', 'creative'];
const TONES = ['informative', 'persuasive', 'conversational', 'authoritative'];

const topic = (text, file) => ({ topic: text, file });

/** Topics the rules were written against (their breaches are printed one by one). */
const TOPICS = [
  topic('Setting up a water butt for a vegetable garden', g2('water-butt-guide.md')),
  topic('How to fix a dripping tap', g2('dripping-tap-repair.txt')),
  topic('Seasoning a cast iron skillet', g2('cast-iron-skillet.txt')),
  topic('What changed in Larkspur 130?', g2('larkspur-130-release-notes.md')),
  topic('Three days in Lisbon', g2('lisbon-three-days.md')),
  topic('Ada Lovelace and the Analytical Engine', g2('ada-lovelace.md')),
  topic('Setting up a freshwater aquarium', g2('freshwater-aquarium-setup.md')),
  topic('How to treat a minor burn', g2('burns-first-aid.md')),
  topic('Feeding garden birds in winter', g2('garden-birds-feeding.md')),
  topic('Caring for leather boots', g2('leather-boots-care.md')),
  topic('Growing tomatoes on a balcony', g1('balcony-tomatoes.md')),
  topic('Composting at home', g1('composting-at-home.md')),
  topic('Learning a new language as an adult', g1('language-learning-tips.md')),
  topic('Orbit Analytics 4.3 release highlights', g1('orbit-analytics-4.3-release.md')),
  topic('How to bake sourdough bread', g1('sourdough-baking.md')),
  topic('What to pack for a camping weekend', g1('camping-checklist.txt')),
  topic('Home brewing for beginners', g1('home-brewing-beginners.txt')),
  topic('Keeping houseplants alive', g1('houseplant-care.txt')),
  topic('A training plan for your first 10K', g1('running-training-plan.txt')),
  topic('Choosing the right grind size for coffee', 'text/coffee-brewing-guide.md'),
];

/** Held out: reported as figures only, not read one by one while the rules were written. */
const HELD_OUT = [
  topic('Your first marathon', g2('first-marathon-guide.md')),
  topic('Learning your first guitar chords', g2('guitar-first-chords.txt')),
  topic('Filing a self-assessment tax return as a freelancer', g2('freelance-tax-return.md')),
  topic('How to start tracing your family tree', g2('tracing-family-tree.md')),
  topic('Why does my tap keep dripping?', g2('dripping-tap-repair.txt')),
  topic('Cleaning a water butt', g2('water-butt-guide.md')),
  topic('Keeping a starter alive for sourdough', g1('sourdough-baking.md')),
  topic('Greens and browns in a compost heap', g1('composting-at-home.md')),
  topic('Watering houseplants', g1('houseplant-care.txt')),
  topic('Release notes for Orbit Analytics 4.3', g1('orbit-analytics-4.3-release.md')),
];

const LENGTHS = ['short', 'medium', 'long'];
const RULES = ['midSentence', 'bareHeadings', 'nounListEndings', 'repeatedSentences', 'badTags'];

await runBench('bench/writer-prose', async () => {
  const { BuiltinGenerator, countWords } = await dist('src/generation/builtin/index.js');
  const { checkProse, lengthOrderHolds, sentencesOf } = await dist('src/generation/builtin/prose-check.js');
  const { TAKEAWAY_LEAD, transitionOf } = await dist('src/generation/builtin/prose.js');
  const { extractText } = await dist('src/knowledge/extract.js');

  const files = [...new Set([...TOPICS, ...HELD_OUT].map((t) => t.file))];
  const texts = new Map();
  for (const file of files) texts.set(file, await extractText(path.join(FIXTURES_DIR, file), path.extname(file).slice(1)));
  const generator = new BuiltinGenerator();

  async function run(set, name, { printBreaches }) {
    const totals = Object.fromEntries([...RULES, 'lengthOrder', 'noTransition', 'posts', 'outlines'].map((k) => [k, 0]));
    const rows = [];
    for (const [i, spec] of set.entries()) {
      // Two other documents come with it: the writer must leave them out.
      const others = files.filter((f) => f !== spec.file).filter((_, j) => (j + i) % 7 === 0).slice(0, 2);
      const passages = [spec.file, ...others].map((file, rank) => ({ fileId: file, fileName: path.basename(file), score: rank === 0 ? 2 : 1, text: texts.get(file) }));
      const words = {};
      const row = { topic: spec.topic.length > 46 ? `${spec.topic.slice(0, 45)}…` : spec.topic };
      for (const length of LENGTHS) {
        const request = { topic: spec.topic, style: STYLES[i % STYLES.length], tone: TONES[i % TONES.length], length, includeExamples: i % 3 === 0, targetAudience: null, passages };
        const { post, outline } = await generator.generate(request);
        totals.posts++;
        if (outline) totals.outlines++;
        words[length] = countWords(post.content);
        const found = checkProse(post);
        for (const rule of RULES) {
          totals[rule] += found[rule].length;
          if (printBreaches) for (const breach of found[rule]) console.log(`  ${rule}: ${spec.topic} (${length}): ${JSON.stringify(breach).slice(0, 160)}`);
        }
        // Paragraphs of two source sentences or more with no transition between them.
        for (const block of post.content.split(/\n{2,}/)) {
          // Paragraphs of the sources' sentences: attributed, and not the conclusion.
          if (!/(?:\(source: \*[^*]+\*\)|\[\d+\])$/.test(block) || block.includes(TAKEAWAY_LEAD)) continue;
          const sentences = sentencesOf(block);
          if (sentences.length >= 3 && !sentences.some((s) => transitionOf(s))) totals.noTransition++;
        }
      }
      const ordered = lengthOrderHolds(words);
      if (!ordered) {
        totals.lengthOrder++;
        if (printBreaches) console.log(`  lengthOrder: ${spec.topic}: ${JSON.stringify(words)}`);
      }
      rows.push({ ...row, short: words.short, medium: words.medium, long: words.long, order: ordered ? 'ok' : 'WRONG' });
    }
    printTable(`${name}: words per length`, rows);
    return totals;
  }

  console.log('breaches, topics the rules were written against:');
  const tuning = await run(TOPICS, 'tuning topics', { printBreaches: true });
  const heldOut = await run(HELD_OUT, 'held-out topics', { printBreaches: false });
  const table = [...RULES, 'lengthOrder'].map((rule) => ({
    rule,
    tuning: tuning[rule],
    'held out': heldOut[rule],
    target: 0,
    verdict: verdict(tuning[rule] === 0 && heldOut[rule] === 0),
  }));
  table.push({ rule: 'noTransition (information)', tuning: tuning.noTransition, 'held out': heldOut.noTransition, target: '-', verdict: '-' });
  table.push({ rule: 'posts (outlines)', tuning: `${tuning.posts} (${tuning.outlines})`, 'held out': `${heldOut.posts} (${heldOut.outlines})`, target: '-', verdict: '-' });
  printTable(`prose rules over ${TOPICS.length + HELD_OUT.length} topics at three lengths`, table);
  printResult('writer-prose', { topics: TOPICS.length + HELD_OUT.length, tuning, heldOut, allZero: table.every((r) => r.verdict !== 'MISS') });
}, { timeLimitMs: 170_000 });
