import t, { type Test } from 'tap';
import { BuiltinGenerator, countWords } from '../src/generation/builtin/index.js';
import { LENGTHS, STYLES, TONES } from '../src/limits.js';
import {
  WORD_TARGETS,
  type GeneratedPost,
  type GenerationRequest,
  type Passage,
} from '../src/generation/types.js';

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
    text: 'Coffee beans stay fresh for about two weeks after roasting when stored in an airtight container. Light, heat and moisture are the main enemies of fresh beans. Never store roasted beans in the fridge, because they absorb odours and moisture.',
  },
  {
    fileId: 'f-brew',
    fileName: 'coffee-brewing-guide.md',
    score: 0.64,
    text: 'Bloom the grounds for 30 seconds with twice their weight in water so trapped carbon dioxide can escape. Pour slowly in circles to keep the coffee bed even and the extraction uniform.',
  },
  {
    fileId: 'f-water',
    fileName: 'water-notes.md',
    score: 0.55,
    text: 'Soft water with some minerals brings out sweetness in coffee. Distilled water tastes flat because it lacks the magnesium that binds flavour compounds.',
  },
];

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
const generate = async (overrides: Partial<GenerationRequest> = {}): Promise<GeneratedPost> =>
  (await generator.generate({ ...base, ...overrides })).post;

const introOf = (post: GeneratedPost) => post.content.split('\n\n')[0];
const headings = (post: GeneratedPost) => post.content.match(/^## .+$/gm) ?? [];
const questionCount = (text: string) => (text.match(/\?/g) ?? []).length;

function assertPairwiseDifferent(t: Test, label: string, posts: Record<string, GeneratedPost>) {
  const entries = Object.entries(posts);
  for (let i = 0; i < entries.length; i++) {
    for (let j = i + 1; j < entries.length; j++) {
      t.not(entries[i][1].content, entries[j][1].content, `${label}: ${entries[i][0]} and ${entries[j][0]} differ`);
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
    t.equal(/^Key points from /m.test(content), style === 'technical', `${style}: key-point bullets only for technical`);
    t.equal(/\b(?:it's|there's|let's|don't)\b/i.test(content), style === 'casual', `${style}: contractions only for casual`);
  }

  const academic = posts.academic.content;
  t.match(academic, /^1\. coffee-brewing-guide\.md$/m, 'references list the files in order');
  t.match(academic, /^2\. bean-storage\.txt$/m);
  t.match(academic, /\[1\]/, 'academic cites by number');
  t.match(academic, /\b(?:Furthermore|Moreover|Consequently)\b/, 'academic uses formal connectors');

  const technical = posts.technical.content;
  t.ok((technical.match(/^- /gm) ?? []).length >= 3, 'technical lists points as bullets');
  t.match(technical, /^## Summary$/m);

  t.match(posts.creative.content, /Picture this|Imagine it this way|Seen up close|Step back for a moment|Here the story turns/);
  t.match(posts.professional.content, /In practice|In most cases|From a practical standpoint|In day-to-day work|Put simply/);
});

t.test('every tone writes differently, with its own markers', async (t) => {
  const posts = Object.fromEntries(await Promise.all(TONES.map(async (tone) => [tone, await generate({ tone })])));
  assertPairwiseDifferent(t, 'tone', posts);

  for (const tone of TONES) {
    t.equal(posts[tone].content.includes('**Take action today:**'), tone === 'persuasive', `${tone}: call to action only when persuasive`);
  }
  t.match(introOf(posts.informative), /^This post explains /);
  t.match(introOf(posts.persuasive), /^If you have been putting off /);
  t.match(introOf(posts.conversational), /^Have you ever wondered .+\? You are not alone\./);
  t.match(introOf(posts.authoritative), /rewards a rigorous approach/);

  const conversational = posts.conversational.content;
  t.ok(questionCount(conversational) >= 3, 'conversational asks the reader questions');
  t.ok(questionCount(conversational) > questionCount(posts.informative.content));
  t.ok(questionCount(conversational) > questionCount(posts.authoritative.content));
  t.match(conversational, /\byou\b/i);
});

t.test('length follows the word target, for every style and tone, with and without sources', async (t) => {
  for (const sources of [passages, []]) {
    for (const style of STYLES) {
      for (const tone of TONES) {
        for (const includeExamples of [true, false]) {
          const counts: number[] = [];
          for (const length of LENGTHS) {
            const post = await generate({ style, tone, includeExamples, length, passages: sources });
            const words = countWords(post.content);
            const target = WORD_TARGETS[length];
            const label = `${style}/${tone}/${length}/examples=${includeExamples}/sources=${sources.length}: ${words} words`;
            if (words < target * 0.6 || words > target * 1.5) t.fail(`${label} is outside 0.6x-1.5x of ${target}`);
            counts.push(words);
          }
          if (!(counts[0] < counts[1] && counts[1] < counts[2])) t.fail(`not ordered short < medium < long: ${counts.join(', ')}`);
        }
      }
    }
  }
  const [short, medium, long] = await Promise.all(LENGTHS.map((length) => generate({ length })));
  t.ok(countWords(short.content) < countWords(medium.content), 'short < medium');
  t.ok(countWords(medium.content) < countWords(long.content), 'medium < long');
  assertPairwiseDifferent(t, 'length', { short, medium, long });
});

t.test('includeExamples adds an Examples section, and only then', async (t) => {
  for (const style of STYLES) {
    const withExamples = await generate({ style, includeExamples: true });
    const without = await generate({ style, includeExamples: false });
    t.match(withExamples.content, /^## .*Examples.*$/m, `${style}: Examples heading present`);
    t.match(withExamples.content, /^1\. .+\n2\. .+\n3\. .+$/m, `${style}: three numbered examples`);
    t.notMatch(without.content, /Examples/, `${style}: no Examples section when not asked for`);
  }
  const sourced = await generate({ includeExamples: true });
  t.match(sourced.content, /^\d\. \*\*From coffee-brewing-guide\.md:\*\* .*\d/m, 'examples draw on concrete source sentences');
});

t.test('the audience appears in the introduction', async (t) => {
  t.match(introOf(await generate({ targetAudience: 'busy home baristas' })), /for busy home baristas/);
  t.match(introOf(await generate({ targetAudience: 'café owners', style: 'academic' })), /for café owners/);
  t.match(introOf(await generate({ targetAudience: null })), /for anyone interested in brewing better coffee at home/);
  t.not((await generate({ targetAudience: 'students' })).content, (await generate({ targetAudience: 'chefs' })).content);
});

t.test('passages are quoted and attributed to their files', async (t) => {
  const post = await generate({ length: 'long' });
  const quotes = post.content.match(/^> .+$/gm) ?? [];
  const flatten = (text: string) => text.replace(/\s+/g, ' ');
  for (const fileName of ['coffee-brewing-guide.md', 'bean-storage.txt', 'water-notes.md']) {
    const quote = quotes.find((line) => line.endsWith(`— *from ${fileName}*`));
    if (!quote) {
      t.fail(`no quote attributed to ${fileName}`);
      continue;
    }
    const quoted = quote.slice(2, quote.indexOf(' — *from '));
    const sourceText = flatten(passages.filter((p) => p.fileName === fileName).map((p) => p.text).join(' '));
    t.ok(sourceText.includes(quoted), `the quote from ${fileName} is its own text: "${quoted}"`);
  }
  t.equal(quotes.length, 3, 'one quote per file: two passages of the same file share a section');
  t.match(post.content, /\(source: \*coffee-brewing-guide\.md\*\)/, 'key sentences are attributed too');
  t.match(introOf(post), /\*coffee-brewing-guide\.md\*, \*bean-storage\.txt\* and \*water-notes\.md\*/);
  t.match(post.description, /coffee-brewing-guide\.md and 2 more sources/);
  t.equal(post.category, 'Food & Drink');
  t.ok(post.tags.includes('coffee') && post.tags.includes('brewing'), `tags come from the topic: ${post.tags}`);
  t.ok(post.tags.some((tag) => ['water', 'beans', 'grind', 'extraction'].includes(tag)), `tags come from the passages: ${post.tags}`);
});

t.test('the best passages come first and the length caps the number of source sections', async (t) => {
  const short = await generate({ length: 'short' });
  t.equal((short.content.match(/^> /gm) ?? []).length, 2, 'short posts quote at most two sources');
  t.ok(short.content.indexOf('coffee-brewing-guide.md') < short.content.indexOf('bean-storage.txt'), 'highest score first');
  t.notMatch(short.content, /water-notes\.md/, 'the weakest source is left out of a short post');
});

t.test('without passages the post is still complete', async (t) => {
  const post = await generate({ passages: [], topic: 'Kubernetes autoscaling for small teams', length: 'medium' });
  t.match(post.title, /Kubernetes Autoscaling for Small Teams/);
  t.ok(post.description.length > 20 && /[.!?]$/.test(post.description), 'a sentence of description');
  t.equal(post.category, 'Technology');
  t.ok(post.tags.length >= 3 && post.tags.length <= 6, `3-6 tags: ${post.tags}`);
  for (const tag of post.tags) t.equal(tag, tag.toLowerCase(), `tag "${tag}" is lower case`);
  t.equal(new Set(post.tags).size, post.tags.length, 'tags are unique');
  t.ok(post.tags.includes('kubernetes') && post.tags.includes('autoscaling'));

  const blocks = post.content.split('\n\n');
  t.notMatch(blocks[0], /^#/, 'opens with an introduction paragraph');
  t.match(blocks[0], /Kubernetes autoscaling for small teams/);
  t.ok(headings(post).length >= 3, `several sections: ${headings(post)}`);
  t.match(post.content, /^## Conclusion$/m, 'ends with a conclusion');
  t.ok(post.content.lastIndexOf('## Conclusion') > post.content.lastIndexOf('## Examples'), 'conclusion comes last');
  t.notMatch(post.content, /^> |\*from |## References/m, 'no quotes or references without sources');
  t.notMatch(post.content, /\{\w+\}|undefined/, 'no unfilled placeholders');
});

t.test('the topic reads naturally mid-sentence and in titles', async (t) => {
  const post = await generate({ topic: 'The future of remote work', passages: [], style: 'creative' });
  t.notMatch(post.content, /, The future/, 'an ordinary first word loses its capital mid-sentence');
  t.match(post.content, /the future of remote work/);
  t.notMatch(post.title, / The /, 'small words stay lower case inside a title');
  const named = await generate({ topic: 'Kubernetes autoscaling', passages: [], style: 'academic' });
  t.match(named.content, /, Kubernetes autoscaling/, 'a name keeps its capital');
});

t.test('Markdown in passages is reduced to plain quotable prose', async (t) => {
  const post = await generate({
    passages: [
      {
        fileId: 'f-md',
        fileName: 'notes.md',
        score: 1,
        text: '## Setup\n\n```sh\nrm -rf /\n```\n\nRead the [official **guide**](https://example.com) before installing the `espresso` machine carefully.\n- Descale the machine every month with citric acid',
      },
    ],
  });
  t.notMatch(post.content, /rm -rf|```|\]\(|https:\/\/example\.com/, 'code blocks and link targets are dropped');
  t.match(post.content, /Read the official guide before installing the espresso machine carefully\./);
});

t.test('is deterministic', async (t) => {
  for (const style of STYLES) {
    const request: GenerationRequest = { ...base, style, length: 'long' };
    const first = await new BuiltinGenerator().generate(request);
    const second = await new BuiltinGenerator().generate(structuredClone(request));
    t.equal(JSON.stringify(second), JSON.stringify(first), `${style}: byte-identical output`);
  }
  t.not((await generate({ topic: 'Tea' })).title, (await generate({ topic: 'Coffee' })).title);
});

t.test('honours an aborted signal', async (t) => {
  const controller = new AbortController();
  controller.abort(new Error('shutting down'));
  await t.rejects(generator.generate(base, controller.signal), { message: 'shutting down' });
});
