import t, { type Test } from 'tap';
import { BuiltinGenerator, countWords } from '../../src/generation/builtin/index.js';
import { LENGTHS, STYLES, TONES } from '../../src/limits.js';
import { TAKEAWAY_LEAD, withoutTransition } from '../../src/generation/builtin/prose.js';
import { WORD_TARGETS, type GeneratedPost, type GenerationRequest, type Passage } from '../../src/generation/types.js';

const passages: Passage[] = [
  {
    fileId: 'f-brew',
    fileName: 'coffee-brewing-guide.md',
    score: 0.92,
    text: '# Brewing basics\n\nThe grind size controls extraction: a finer grind extracts faster and tastes stronger. Use water between 92 and 96 degrees Celsius for the best extraction. A ratio of 1 gram of coffee to 16 grams of water is a good starting point for pour-over brewing.',
  },
  {
    fileId: 'f-beans',
    fileName: 'bean-storage.txt',
    score: 0.81,
    text: 'Coffee beans stay fresh for about two weeks after roasting when stored in an airtight container. Light, heat and moisture are the main enemies of fresh beans. Never store roasted coffee beans in the fridge, because they absorb odours and moisture.',
  },
  {
    fileId: 'f-brew',
    fileName: 'coffee-brewing-guide.md',
    score: 0.64,
    text: 'Bloom the grounds for 30 seconds with twice their weight in water so trapped carbon dioxide can escape. Pour slowly in circles to keep the coffee bed even and the extraction uniform.',
    ordinal: 1,
  },
  {
    fileId: 'f-water',
    fileName: 'water-notes.md',
    score: 0.55,
    text: 'Soft water with some minerals brings out sweetness in coffee. Distilled water tastes flat because it lacks the magnesium that binds flavour compounds.',
  },
];

/**
 * A knowledge base with more to say than a long post holds: a section per brewing method,
 * distinct sentences with figures, all about brewing coffee.
 */
const METHODS = ['Pour-over', 'French press', 'AeroPress', 'Espresso', 'Moka pot', 'Siphon', 'Chemex', 'Kalita wave', 'Clever dripper', 'Turkish', 'Cold drip', 'Percolator'];
const rich: Passage[] = METHODS.map((method, i) => ({
  fileId: `f-${i}`,
  fileName: `${method.toLowerCase().replace(/\s+/g, '-')}.md`,
  score: 10 - i / 2,
  text: [
    `## ${method}`,
    '',
    `${method} brewing asks for about ${55 + i} grams of coffee per litre of water and a steady hand.`,
    `Grind the beans ${['fine', 'medium', 'coarse'][i % 3]} for ${method.toLowerCase()} coffee, and weigh every dose on a scale.`,
    `The ${method.toLowerCase()} brew takes roughly ${2 + (i % 4)} minutes from the first pour to the last drop.`,
    `Water for ${method.toLowerCase()} coffee tastes best between ${88 + (i % 5)} and ${94 + (i % 3)} degrees Celsius.`,
    `Baristas who brew ${method.toLowerCase()} daily rinse the equipment with hot water before each batch of coffee.`,
    `A ${method.toLowerCase()} cup made with beans roasted ${1 + (i % 3)} weeks earlier keeps its sweetness longest.`,
    `Cleaning the ${method.toLowerCase()} gear after every session stops old coffee oils from turning the next brew bitter.`,
    `Most cafés serving ${method.toLowerCase()} coffee sell around ${10 + i * 3} cups of it on a busy morning.`,
    `Home brewers new to ${method.toLowerCase()} coffee often start with ${12 + i} grams for a single mug.`,
  ].join('\n'),
}));

const base: GenerationRequest = {
  topic: 'Brewing better coffee at home',
  style: 'professional',
  length: 'medium',
  tone: 'informative',
  includeExamples: true,
  targetAudience: 'busy home baristas',
  passages,
};

const generator = new BuiltinGenerator();
const generate = async (overrides: Partial<GenerationRequest> = {}): Promise<GeneratedPost> => (await generator.generate({ ...base, ...overrides })).post;
const notesOf = async (overrides: Partial<GenerationRequest> = {}): Promise<string> => ((await generator.generate({ ...base, ...overrides })).notes ?? []).join(' ');
/** What the writer says about its work: never in a post's description or content. */
const NOTE_WORDS = /Drawn from|knowledge base|Shorter than a|Outline draft:/;

const introOf = (post: GeneratedPost) => post.content.split('\n\n')[0]!;
const headings = (post: GeneratedPost) => post.content.match(/^## .+$/gm) ?? [];
const questionCount = (text: string) => (text.match(/\?/g) ?? []).length;

function assertPairwiseDifferent(t: Test, label: string, posts: Record<string, GeneratedPost>) {
  const entries = Object.entries(posts);
  for (let i = 0; i < entries.length; i++) {
    for (let j = i + 1; j < entries.length; j++) {
      t.not(entries[i]![1].content, entries[j]![1].content, `${label}: ${entries[i]![0]} and ${entries[j]![0]} differ`);
    }
  }
}

t.test('reports the builtin provider and model', async (t) => {
  const result = await generator.generate(base);
  t.equal(result.provider, 'builtin');
  t.equal(result.model, generator.model);
  t.match(result.model, /^builtin/);
});

t.test('every style writes differently, with its own markers', async (t) => {
  const posts = Object.fromEntries(await Promise.all(STYLES.map(async (style) => [style, await generate({ style })])));
  assertPairwiseDifferent(t, 'style', posts);
  t.equal(new Set(STYLES.map((s) => posts[s].title)).size, STYLES.length, 'each style has its own title pattern');
  t.equal(new Set(STYLES.map((s) => headings(posts[s]).join('|'))).size, STYLES.length, 'each style has its own headings');

  for (const style of STYLES) {
    const { content } = posts[style];
    t.equal(/^## References$/m.test(content), style === 'academic', `${style}: References list only for academic`);
    t.equal(/^Source: \*/m.test(content), style === 'technical', `${style}: facts as bullet lists only for technical`);
    t.equal(/\b(?:it's|there's|let's|don't|you're|one's)\b/i.test(content.split('\n\n')[0]!), style === 'casual', `${style}: contractions only for casual`);
  }

  const academic = posts.academic.content;
  t.match(academic, /^1\. coffee-brewing-guide\.md$/m, 'references list the files in order of use');
  t.match(academic, /^\d\. bean-storage\.txt$/m);
  t.match(academic, /^\d\. water-notes\.md$/m);
  t.match(academic, /\[1\]/, 'academic cites by number');
  t.ok((posts.technical.content.match(/^- /gm) ?? []).length >= 3, 'technical lists points as bullets');
  t.match(posts.technical.content, /^## Summary$/m);
  t.match(posts.professional.content, /\(source: \*coffee-brewing-guide\.md\*\)/);
});

t.test('every tone writes differently, with its own markers', async (t) => {
  const posts = Object.fromEntries(await Promise.all(TONES.map(async (tone) => [tone, await generate({ tone })])));
  assertPairwiseDifferent(t, 'tone', posts);
  for (const tone of TONES) {
    t.equal(posts[tone].content.includes('**Take action today:**'), tone === 'persuasive', `${tone}: call to action only when persuasive`);
  }
  t.match(introOf(posts.informative), /^This post covers brewing better coffee at home\./);
  t.match(introOf(posts.persuasive), /^Brewing better coffee at home is worth getting right/);
  t.match(introOf(posts.conversational), /^Curious about brewing better coffee at home\? You are in the right place\./);
  t.match(introOf(posts.authoritative), /^Brewing better coffee at home rewards a rigorous approach\./);
  const conversational = posts.conversational.content;
  t.ok(questionCount(conversational) >= 2, 'conversational asks the reader questions');
  t.ok(questionCount(conversational) > questionCount(posts.informative.content));
  t.match(conversational, /\byou\b/i);
});

t.test('with enough sources the length follows the word target, for every style and tone', async (t) => {
  for (const style of STYLES) {
    for (const tone of TONES) {
      for (const includeExamples of [true, false]) {
        const counts: number[] = [];
        for (const length of LENGTHS) {
          const post = await generate({ style, tone, includeExamples, length, passages: rich });
          const words = countWords(post.content);
          const target = WORD_TARGETS[length];
          const label = `${style}/${tone}/${length}/examples=${includeExamples}: ${words} words`;
          if (words < target * 0.75 || words > target * 1.25) t.fail(`${label} is outside 0.75x-1.25x of ${target}`);
          if (/Shorter than/.test(await notesOf({ style, tone, includeExamples, length, passages: rich }))) t.fail(`${label}: not short, yet the notes say so`);
          counts.push(words);
        }
        if (!(counts[0]! < counts[1]! && counts[1]! < counts[2]!)) t.fail(`not ordered short < medium < long: ${counts.join(', ')}`);
      }
    }
  }
  t.pass('lengths checked');
});

t.test('with little to say, a shorter post that says why', async (t) => {
  const post = await generate({ length: 'long' });
  t.ok(countWords(post.content) < WORD_TARGETS.long / 2, 'no filler to reach the target');
  t.match(await notesOf({ length: 'long' }), /Shorter than a long post: the knowledge base has only about \d+ words on this topic\./, 'the notes say why');
  t.notMatch(`${post.description}\n${post.content}`, NOTE_WORDS, 'the post does not');
});

t.test('includeExamples adds an Examples section, and only then', async (t) => {
  for (const style of STYLES) {
    const withExamples = await generate({ style, includeExamples: true, passages: rich });
    const without = await generate({ style, includeExamples: false, passages: rich });
    t.match(withExamples.content, /^## .*Example.*$/m, `${style}: Examples heading present`);
    t.match(withExamples.content, /^1\. .+\n2\. .+\n3\. .+$/m, `${style}: three numbered examples`);
    t.notMatch(without.content, /^## .*Example/m, `${style}: no Examples section when not asked for`);
  }
  const sourced = await generate({ includeExamples: true, passages: rich });
  t.match(sourced.content, /^1\. .*\d.*(\(source: \*[^*]+\*\))$/m, 'examples are concrete source sentences, attributed');
});

t.test('the audience appears in the introduction', async (t) => {
  t.match(introOf(await generate({ targetAudience: 'busy home baristas' })), /for busy home baristas/);
  t.match(introOf(await generate({ targetAudience: 'café owners', style: 'academic' })), /for café owners/);
  t.match(introOf(await generate({ targetAudience: null })), /for anyone getting started/);
  t.not((await generate({ targetAudience: 'students' })).content, (await generate({ targetAudience: 'chefs' })).content);
});

t.test('source sentences are quoted as written and attributed to their files', async (t) => {
  const post = await generate({ length: 'long', includeExamples: false });
  const flatten = (text: string) => text.replace(/\s+/g, ' ');
  for (const fileName of ['coffee-brewing-guide.md', 'bean-storage.txt', 'water-notes.md']) {
    const attributed = [...post.content.matchAll(new RegExp(`^(.+) \\(source: \\*${fileName.replace('.', '\\.')}\\*\\)$`, 'gm'))];
    t.ok(attributed.length > 0, `${fileName} is cited`);
    const sourceText = flatten(passages.filter((p) => p.fileName === fileName).map((p) => p.text).join(' '));
    for (const [, paragraph] of attributed) {
      // The conclusion's own line comes before the sentence it closes on; a transition is the writer's too.
      const quoted = paragraph!.includes(TAKEAWAY_LEAD) ? paragraph!.split(TAKEAWAY_LEAD)[1]!.trim() : paragraph!;
      for (const sentence of quoted.split(/(?<=\.)\s+/)) t.ok(sourceText.includes(withoutTransition(sentence)), `${fileName} says "${sentence}"`);
    }
  }
  t.match(await notesOf({ length: 'long', includeExamples: false }), /Drawn from 3 documents in the knowledge base: coffee-brewing-guide\.md, (bean-storage\.txt|water-notes\.md), (bean-storage\.txt|water-notes\.md)\./);
  t.notMatch(`${post.description}\n${post.content}`, NOTE_WORDS, 'the notes stay out of the post');
  t.equal(post.category, 'Food & Drink');
  t.ok(post.tags.includes('coffee'), `tags come from the topic: ${post.tags}`);
  t.ok(post.tags.some((tag) => /water|beans|grind|extraction/.test(tag)), `tags come from the passages: ${post.tags}`);
});

t.test('the best passages come first; passages of one file are read in their order', async (t) => {
  // Medium: on this little source text a short post leaves half of it out.
  const post = await generate({ length: 'medium', includeExamples: false });
  t.ok(post.content.indexOf('coffee-brewing-guide.md') < post.content.indexOf('bean-storage.txt'), 'highest score first');
  t.ok(post.content.indexOf('The grind size controls extraction') < post.content.indexOf('Bloom the grounds'), 'chunk 0 before chunk 1');
});

t.test('without passages, an outline draft that claims nothing', async (t) => {
  const post = await generate({ passages: [], topic: 'Kubernetes autoscaling for small teams', length: 'medium' });
  t.match(post.title, /Kubernetes Autoscaling for Small Teams/);
  const result = await generator.generate({ ...base, passages: [], topic: 'Kubernetes autoscaling for small teams', length: 'medium' });
  t.equal(result.outline, true, 'an outline, said so to staff');
  t.match((result.notes ?? []).join(' '), /^Outline draft: no document in the knowledge base covers the topic/);
  t.notMatch(post.description, NOTE_WORDS, 'the description holds no note');
  t.equal(post.category, 'Technology');
  t.ok(post.tags.length >= 2 && post.tags.length <= 6, `2-6 tags: ${post.tags}`);
  for (const tag of post.tags) t.equal(tag, tag.toLowerCase(), `tag "${tag}" is lower case`);
  t.equal(new Set(post.tags).size, post.tags.length, 'tags are unique');
  t.ok(post.tags.includes('kubernetes'), `${post.tags}`);

  const blocks = post.content.split('\n\n');
  t.match(blocks[0], /^\*Outline draft\.\* This is an outline for a post on Kubernetes autoscaling for small teams\./);
  t.ok(headings(post).length >= 4, `several sections: ${headings(post)}`);
  t.equal((post.content.match(/^\*To cover:\* /gm) ?? []).length, headings(post).length, 'each section says what it should cover');
  t.match(post.content, /^## Conclusion$/m, 'ends with a conclusion');
  t.notMatch(post.content, /^> |\(source:|## References/m, 'no quotes or citations without sources');
  t.notMatch(post.content, /\{\w+\}|undefined/, 'no unfilled placeholders');
  t.ok(countWords(post.content) < 300, 'an outline, not padding');
});

t.test('the topic reads naturally mid-sentence and in titles', async (t) => {
  const post = await generate({ topic: 'The future of remote work', passages: [], style: 'creative' });
  t.notMatch(post.content, /, The future|on The future/, 'an ordinary first word loses its capital mid-sentence');
  t.match(post.content, /the future of remote work/);
  t.notMatch(post.title, / The /, 'small words stay lower case inside a title');
  const named = await generate({ topic: 'Kubernetes autoscaling', passages: [], style: 'academic' });
  t.match(named.content, /on Kubernetes autoscaling/, 'a name keeps its capital');
});

t.test('Markdown in passages is reduced to plain quotable prose', async (t) => {
  const post = await generate({
    topic: 'Descaling an espresso machine',
    passages: [
      {
        fileId: 'f-md',
        fileName: 'notes.md',
        score: 1,
        text: '## Setup\n\n```sh\nrm -rf /\n```\n\nRead the [official **guide**](https://example.com) before descaling the `espresso` machine carefully.\n- Descale the espresso machine every month with citric acid.',
      },
    ],
  });
  t.notMatch(post.content, /rm -rf|```|\]\(|https:\/\/example\.com/, 'code blocks and link targets are dropped');
  t.match(post.content, /Read the official guide before descaling the espresso machine carefully\./);
  t.match(post.content, /^- Descale the espresso machine every month with citric acid\.$/m, 'a list item stays a list item');
});

t.test('is deterministic', async (t) => {
  for (const style of STYLES) {
    const request: GenerationRequest = { ...base, style, length: 'long', passages: rich };
    const first = await new BuiltinGenerator().generate(request);
    const second = await new BuiltinGenerator().generate(structuredClone(request));
    t.equal(JSON.stringify(second), JSON.stringify(first), `${style}: byte-identical output`);
  }
  t.not((await generate({ topic: 'Coffee brewing guide' })).title, (await generate({ topic: 'Brewing coffee' })).title);
});

t.test('honours an aborted signal', async (t) => {
  const controller = new AbortController();
  controller.abort(new Error('shutting down'));
  await t.rejects(generator.generate(base, controller.signal), { message: 'shutting down' });
});
