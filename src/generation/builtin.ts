import { MAX_PROMPT_PASSAGES, topPassages } from './prompt.js';
import {
  WORD_TARGETS,
  type GeneratedPost,
  type GenerationRequest,
  type GenerationResult,
  type Generator,
  type Length,
  type Passage,
  type Style,
  type Tone,
} from './types.js';
import { MAX_TITLE_LENGTH } from '../posts/service.js';

/**
 * Offline composer: writes a complete, source-grounded post from the topic and the passages
 * without any model. Deterministic (no clock, no randomness: variety comes from a hash of the
 * topic) and linear in the passages it is given.
 */

export const BUILTIN_MODEL = 'builtin-composer-1';

/** Bounds the work per passage, so a huge chunk cannot slow the composer down. */
const MAX_PASSAGE_CHARS = 5000;
const MAX_SENTENCE_WORDS = 40;
const MIN_SENTENCE_WORDS = 5;
/** The posts service's limit. */
const MAX_TAGS = 6;
const MIN_TAGS = 3;

/** How much of the knowledge base each length has room for. */
const SOURCE_SECTIONS: Record<Length, number> = { short: 2, medium: 4, long: 8 };
const KEY_SENTENCES: Record<Length, number> = { short: 1, medium: 2, long: 3 };

// ---------------------------------------------------------------------------------------------
// Phrase banks. Placeholders: {topic} as typed, {Topic} capitalised, {Topic} title case,
// {audience}, {file}, {k1}-{k3} focus keywords, {A}/{B} heading keywords.
// ---------------------------------------------------------------------------------------------

type AspectId =
  | 'why'
  | 'core'
  | 'start'
  | 'pitfalls'
  | 'practices'
  | 'tools'
  | 'measuring'
  | 'tradeoffs'
  | 'applying'
  | 'growth'
  | 'ahead';

interface StyleVoice {
  titles: readonly string[];
  description: string;
  intro: string;
  connectors: readonly string[];
  pairHeadings: readonly string[];
  singleHeadings: readonly string[];
  sourceLeads: readonly string[];
  morePoints: string;
  aspectHeadings: Record<AspectId, string>;
  examplesHeading: string;
  examplesLead: string;
  conclusionHeading: string;
  /** Technical posts list key points and takeaways as bullets. */
  bullets: boolean;
  /** Academic posts cite sources by number and end with a References list. */
  numberedCitations: boolean;
  /** Casual posts use contractions in the composer's own sentences (never in quotes). */
  contractions: boolean;
}

const STYLE_VOICES: Record<Style, StyleVoice> = {
  professional: {
    titles: ['{Topic}: A Practical Guide', '{Topic}: What You Need to Know', "A Professional's Guide to {Topic}"],
    description: 'A practical guide to {topic} for {audience}.',
    intro: 'This guide is written for {audience} and focuses on practical, actionable advice.',
    connectors: ['In practice,', 'In most cases,', 'From a practical standpoint,', 'In day-to-day work,', 'Put simply,'],
    pairHeadings: ['Getting {A} and {B} Right', '{A} and {B}: What Matters', 'Managing {A} and {B}'],
    singleHeadings: ['Getting {A} Right', '{A}: What Matters', 'Managing {A}'],
    sourceLeads: ['{file} offers a clear perspective here.', 'The guidance in {file} is worth highlighting.'],
    morePoints: 'The same source adds useful detail.',
    aspectHeadings: {
      why: 'Why {Topic} Matters',
      core: 'The Core Ideas',
      start: 'Getting Started',
      pitfalls: 'Common Pitfalls',
      practices: 'Best Practices',
      tools: 'Tools and Resources',
      measuring: 'Measuring Success',
      tradeoffs: 'Balancing Trade-offs',
      applying: 'Putting It Into Practice',
      growth: 'Building Expertise Over Time',
      ahead: 'Looking Ahead',
    },
    examplesHeading: 'Examples in Practice',
    examplesLead: 'The following examples show how these ideas translate into everyday work:',
    conclusionHeading: 'Conclusion',
    bullets: false,
    numberedCitations: false,
    contractions: false,
  },
  casual: {
    titles: ["Let's Talk About {Topic}", '{Topic}, Made Simple', 'Everything I Wish I Knew About {Topic}'],
    description: 'A friendly, no-nonsense look at {topic} for {audience}.',
    intro: 'This one is for {audience}, so get comfortable and let us dig in.',
    connectors: ['Honestly,', "Here's the thing:", 'Truth be told,', "Let's be real:", 'Good news:'],
    pairHeadings: ["Let's Talk {A} and {B}", 'The Lowdown on {A} and {B}', '{A}, {B} and You'],
    singleHeadings: ["Let's Talk {A}", 'The Lowdown on {A}', '{A} and You'],
    sourceLeads: ['Here is what {file} has to say.', '{file} puts it nicely.'],
    morePoints: 'There is more where that came from.',
    aspectHeadings: {
      why: 'Why Should You Care?',
      core: 'The Basics, Minus the Jargon',
      start: 'How to Get Started',
      pitfalls: 'Mistakes Everyone Makes',
      practices: 'Tips That Actually Help',
      tools: 'Stuff That Makes It Easier',
      measuring: "How Do You Know It's Working?",
      tradeoffs: "You Can't Have Everything",
      applying: 'What This Looks Like Day to Day',
      growth: 'Getting Better, Bit by Bit',
      ahead: "What's Next?",
    },
    examplesHeading: 'Some Examples',
    examplesLead: 'Here are a few examples to make it concrete:',
    conclusionHeading: 'Wrapping Up',
    bullets: false,
    numberedCitations: false,
    contractions: true,
  },
  technical: {
    titles: ['{Topic}: A Technical Deep Dive', 'Understanding {Topic}: Concepts and Mechanics', '{Topic} Explained in Depth'],
    description: 'A technical walkthrough of {topic} for {audience}, covering concepts, mechanics and trade-offs.',
    intro: 'This article is for {audience} and covers the key concepts, the mechanics and the trade-offs involved.',
    connectors: ['Specifically,', 'In concrete terms,', 'Technically speaking,', 'More precisely,', 'By design,'],
    pairHeadings: ['{A} and {B}: Technical Details', '{A} and {B} in Detail', '{A} and {B} Under the Hood'],
    singleHeadings: ['{A}: Technical Details', 'How {A} Works', '{A} Under the Hood'],
    sourceLeads: ['The reference material in {file} is precise on this point.', '{file} specifies the relevant details.'],
    morePoints: 'Key points:',
    aspectHeadings: {
      why: 'Problem Statement',
      core: 'Key Concepts',
      start: 'Setup and First Steps',
      pitfalls: 'Failure Modes',
      practices: 'Recommended Practices',
      tools: 'Tooling and Resources',
      measuring: 'Metrics and Validation',
      tradeoffs: 'Trade-offs',
      applying: 'Applying It in Real Conditions',
      growth: 'Iterative Improvement',
      ahead: 'Future Directions',
    },
    examplesHeading: 'Worked Examples',
    examplesLead: 'The following worked examples apply the concepts step by step:',
    conclusionHeading: 'Summary',
    bullets: true,
    numberedCitations: false,
    contractions: false,
  },
  creative: {
    titles: ['The Art of {Topic}', 'Rethinking {Topic}', '{Topic}: A Story in Small Steps'],
    description: 'A fresh, imaginative take on {topic} for {audience}.',
    intro: 'Written for {audience}, it treats the subject less as a checklist and more as a craft.',
    connectors: ['Picture this:', 'Seen up close,', 'Imagine it this way:', 'Step back for a moment:', 'Here the story turns:'],
    pairHeadings: ['Where {A} Meets {B}', 'The Dance of {A} and {B}', 'Of {A} and {B}'],
    singleHeadings: ['The Art of {A}', 'In Praise of {A}', 'The Quiet Power of {A}'],
    sourceLeads: ['{file} captures the heart of it.', 'In {file}, the idea comes alive.'],
    morePoints: 'The story continues from there.',
    aspectHeadings: {
      why: 'Why {Topic} Deserves a Closer Look',
      core: 'The Building Blocks',
      start: 'Taking the First Step',
      pitfalls: 'Where Things Go Wrong',
      practices: 'Habits Worth Keeping',
      tools: 'The Toolbox',
      measuring: 'Reading the Signs',
      tradeoffs: 'The Balancing Act',
      applying: 'From Idea to Everyday Practice',
      growth: 'A Journey, Not a Destination',
      ahead: 'The Road Ahead',
    },
    examplesHeading: 'Examples From the Field',
    examplesLead: 'A few snapshots bring the ideas to life:',
    conclusionHeading: 'Final Thoughts',
    bullets: false,
    numberedCitations: false,
    contractions: false,
  },
  academic: {
    titles: ['{Topic}: An Analytical Overview', 'Toward an Understanding of {Topic}', '{Topic}: Principles and Evidence'],
    description: 'An analytical overview of {topic} for {audience}.',
    intro: 'This overview is intended for {audience} and examines the subject systematically.',
    connectors: ['Furthermore,', 'Moreover,', 'Consequently,', 'It should be noted that', 'In this regard,'],
    pairHeadings: ['On {A} and {B}', 'The Relationship Between {A} and {B}', '{A} and {B}: An Analysis'],
    singleHeadings: ['On {A}', 'The Role of {A}', '{A}: An Analysis'],
    sourceLeads: ['The source {file} addresses this directly.', 'This aspect is examined in {file}.'],
    morePoints: 'Furthermore, the source establishes the following.',
    aspectHeadings: {
      why: 'Significance of the Subject',
      core: 'Conceptual Framework',
      start: 'Methodological Starting Points',
      pitfalls: 'Limitations and Common Errors',
      practices: 'Principles of Good Practice',
      tools: 'Instruments and Resources',
      measuring: 'Evaluation Criteria',
      tradeoffs: 'Competing Considerations',
      applying: 'Practical Implications',
      growth: 'Development of Expertise',
      ahead: 'Directions for Further Inquiry',
    },
    examplesHeading: 'Illustrative Examples',
    examplesLead: 'The following examples illustrate the principles discussed above:',
    conclusionHeading: 'Conclusion',
    bullets: false,
    numberedCitations: true,
    contractions: false,
  },
};

interface ToneVoice {
  opener: string;
  closers: readonly string[];
  conclusion: string;
  /** Persuasive posts end with an explicit call to action. */
  callToAction: string | null;
}

const TONE_VOICES: Record<Tone, ToneVoice> = {
  informative: {
    opener: 'This post explains {topic}: what it involves, why it matters and how to approach it.',
    closers: [
      'In short, progress here comes step by step.',
      'This is worth keeping in mind as the details accumulate.',
      'The key takeaway is that small, deliberate changes add up.',
      'Understanding this makes the next steps easier to follow.',
      'That context helps explain what comes next.',
      'Each of these points builds on the previous one.',
      'Seen together, these points form a consistent picture.',
      'The next section builds directly on this.',
    ],
    conclusion: 'With these foundations in place, the path from understanding to practice is clear.',
    callToAction: null,
  },
  persuasive: {
    opener: 'If you have been putting off {topic}, now is the time to change that.',
    closers: [
      'That is exactly why {topic} deserves your attention now.',
      'The payoff is real, and it starts with a single step.',
      'Do not let this advantage pass you by.',
      'Every week you wait is a week of better results left on the table.',
      'The case for acting on this is hard to ignore.',
      'Once you see the difference, you will not want to go back.',
      'The sooner you start, the sooner the results show.',
      'This is an investment that keeps paying off.',
    ],
    conclusion: 'The benefits are within reach, and the first step is a small one.',
    callToAction:
      '**Take action today:** choose one idea from this post, put it into practice this week, and see the difference for yourself.',
  },
  conversational: {
    opener: 'Have you ever wondered what really makes {topic} work? You are not alone.',
    closers: [
      'Sound familiar?',
      'Have you noticed this in your own work?',
      'What would you try first?',
      'You have probably seen this happen yourself, right?',
      'Makes sense, right?',
      'How does that compare with your experience?',
      'Ever tried it this way?',
      'Curious how this plays out for you?',
    ],
    conclusion: 'So, which idea will you try first? Give it a go and see what you discover.',
    callToAction: null,
  },
  authoritative: {
    opener: '{Topic} is a discipline, and like any discipline it rewards a rigorous approach.',
    closers: [
      'The evidence on this point is clear.',
      'Make no mistake: this is where results are won or lost.',
      'Experienced practitioners agree on this without hesitation.',
      'This principle is not optional.',
      'Ignore it, and the results will suffer.',
      'There is no shortcut around this.',
      'This is settled practice, not opinion.',
      'Treat this as a rule, not a suggestion.',
    ],
    conclusion: 'Follow these principles consistently and the results will follow.',
    callToAction: null,
  },
};

/** Topic-only sections, used to reach the word target when the sources run out. */
const ASPECTS: readonly { id: AspectId; paragraphs: readonly string[] }[] = [
  {
    id: 'why',
    paragraphs: [
      '{Topic} shapes results in ways that are easy to underestimate. Small decisions about {k1} compound over time, and the difference between a rushed approach and a deliberate one shows up quickly. Understanding the reasons behind each step makes the whole subject easier to reason about.',
      'There is also a cost to getting it wrong. Inconsistent habits around {k2} lead to results that are hard to repeat, and the causes are rarely obvious at first. A clear mental model turns guesswork into a process that can be checked and improved.',
      'The subject rarely stands alone, either. It connects to {k3} and to the wider goals it is meant to serve, so progress in one place tends to unlock progress elsewhere.',
      'Most importantly, the effort pays back quickly. A little structure early on saves a great deal of correction later, and the confidence that comes from understanding the subject makes every later decision easier.',
    ],
  },
  {
    id: 'core',
    paragraphs: [
      '{Topic} rests on a few ideas that reinforce one another. The first is {k1}, which sets the baseline that everything else builds on. The second is {k2}, which determines how reliably good results can be repeated.',
      'A third idea is balance. Pushing too hard on any single factor usually costs something elsewhere, so the aim is a combination that holds up in everyday conditions rather than a perfect score on one measure.',
      'Context matters as well. The same technique can work brilliantly in one setting and poorly in another, so every rule of thumb about {k3} should be read together with the conditions it was written for.',
      'These ideas are simple to state and harder to apply consistently. Writing them down, even as a short checklist, keeps them visible when time is short and shortcuts look tempting.',
    ],
  },
  {
    id: 'start',
    paragraphs: [
      'The best way to begin with {topic} is to start small. Pick one part of the process, define what a good result looks like, and repeat it until it feels routine before adding anything new.',
      'Gather the essentials before worrying about refinements. A reliable setup for {k1}, a simple way to record what was tried and a fixed point of comparison matter more than any advanced technique.',
      'Set a realistic rhythm. Short, regular sessions with a clear goal are easier to sustain than long ones, and they leave time to reflect on what each attempt taught.',
      'Expect the first attempts to be uneven. That is normal: each round produces information, and a short note about what changed and what happened is worth more than memory alone.',
    ],
  },
  {
    id: 'pitfalls',
    paragraphs: [
      'The most common mistake is changing several things at once. When results shift, it becomes impossible to tell which change made the difference, and useful lessons get lost.',
      'Another frequent problem is neglecting {k2}. It rarely fails dramatically; instead, quality drifts slowly until the gap becomes too large to ignore and much harder to correct.',
      'It is also easy to copy a recipe without understanding why it works. Advice about {topic} is always written for particular conditions, and it needs adjusting when those conditions differ.',
      'A subtler trap is perfectionism. Waiting for ideal conditions before starting delays the feedback that would have shown what actually matters, and it turns a learnable skill into a source of stress.',
    ],
  },
  {
    id: 'practices',
    paragraphs: [
      'Consistency beats intensity. A modest routine around {k1}, followed every time, produces better results than occasional bursts of effort, and it makes problems far easier to spot.',
      'Measure before adjusting. Whether the question concerns {k2} or {k3}, a quick check against a known reference prevents a lot of wasted work and keeps discussions grounded in facts.',
      'Keep the process simple enough to explain. If a step cannot be justified in a sentence, it is a candidate for removal, and the remaining steps become easier to follow.',
      'Review and refine on a schedule. A short look back every few weeks, asking what worked, what did not and what to try next, keeps improvement deliberate instead of accidental.',
    ],
  },
  {
    id: 'tools',
    paragraphs: [
      'The right tools make {topic} easier, but they are rarely the deciding factor. A simple, reliable setup that is used consistently beats an elaborate one that is used occasionally.',
      'When choosing tools for {k1}, favour accuracy and repeatability over features. A tool that produces the same result every time makes it possible to see the effect of every other change.',
      'Resources matter as much as equipment. Good reference material, a few trusted examples and a place to keep notes turn isolated attempts into a body of knowledge that grows over time.',
    ],
  },
  {
    id: 'measuring',
    paragraphs: [
      'Progress with {topic} is easier to see when it is measured. Choose one or two indicators that reflect the result that matters, and record them the same way each time.',
      'Numbers are only part of the picture. Qualitative notes about {k1}, such as what looked or felt different, often explain a change that the figures only hint at.',
      'Review the record regularly. Patterns that are invisible in a single attempt become obvious across ten, and they point directly to the next improvement worth making.',
    ],
  },
  {
    id: 'tradeoffs',
    paragraphs: [
      'Every approach to {topic} involves trade-offs. Speed competes with quality, flexibility with consistency, and the effort spent on {k1} is effort not spent elsewhere.',
      'The right balance depends on the goal. A quick, good-enough result is sometimes exactly what is needed, while at other times careful attention to {k2} is worth every extra minute.',
      'Making trade-offs explicit helps. When the priorities are written down, decisions become easier to explain, and revisiting them later is a matter of checking whether the priorities have changed.',
    ],
  },
  {
    id: 'applying',
    paragraphs: [
      'Real conditions shape {topic} through constraints: limited time, imperfect tools and competing priorities. A good approach accepts those limits and still protects the steps that matter most.',
      'One useful habit is to separate routine work from experiments. Routine work follows the proven process for {k1}; experiments change one variable at a time and are clearly labelled as such.',
      'Sharing what works also pays off. A short write-up of a successful approach to {k2} saves others from repeating the same trial and error, and invites improvements in return.',
      'Finally, adapt the approach to the people involved. What works for an expert may overwhelm a beginner, so the same principles about {k3} often need different levels of detail for different readers.',
    ],
  },
  {
    id: 'growth',
    paragraphs: [
      'Expertise in {topic} grows through repetition with reflection. Each attempt is a small experiment, and the lessons from many small experiments add up to a depth of understanding no single guide can provide.',
      'Early progress tends to be fast, then it slows. That plateau is normal: it signals that the obvious gains have been made and that further improvement depends on finer attention to {k1} and {k2}.',
      'Learning from others accelerates the process. Comparing notes, reading widely and asking why an approach works shortens the path from beginner to confident practitioner.',
    ],
  },
  {
    id: 'ahead',
    paragraphs: [
      '{Topic} keeps evolving as tools, knowledge and expectations change. Staying curious and revisiting assumptions every so often keeps a working approach from going stale.',
      'The fundamentals, however, change slowly. Attention to {k1}, {k2} and {k3} will remain relevant, even as the details of how they are handled continue to improve.',
      'Whatever changes, the habit of careful observation will stay valuable. It is the one skill that makes every new technique easier to evaluate and adopt.',
    ],
  },
];

const GENERIC_EXAMPLES: readonly string[] = [
  '**Starting small with {k1}:** take one part of {topic}, apply the advice for a week, and compare the result with the previous approach.',
  '**Troubleshooting {k2}:** when results disappoint, change a single variable, starting with {k2}, and note exactly what happens.',
  '**Making it repeatable:** once an approach works, write it down as a short checklist so it can be repeated, shared and improved.',
];

const EXAMPLE_COUNT = 3;
const MAX_SOURCE_EXAMPLES = 2;
const EXAMPLE_MARKERS = /\d|\b(?:for example|for instance|e\.g\.|such as)\b/i;

/** Stand-ins for source keywords: topic words alone make poor nouns ("decisions about remote"). */
const FALLBACK_FOCUS = ['preparation', 'technique', 'the details'];

const CATEGORY_KEYWORDS: readonly [string, readonly string[]][] = [
  ['Technology', ['software', 'code', 'coding', 'programming', 'api', 'database', 'cloud', 'server', 'javascript', 'typescript', 'python', 'kubernetes', 'docker', 'web', 'app', 'apps', 'computer', 'network', 'security', 'ai', 'algorithm', 'devops', 'linux', 'developer', 'developers']],
  ['Food & Drink', ['coffee', 'tea', 'food', 'recipe', 'recipes', 'cooking', 'baking', 'brew', 'brewing', 'wine', 'beer', 'kitchen', 'meal', 'espresso', 'bread', 'beans']],
  ['Health & Fitness', ['health', 'fitness', 'exercise', 'workout', 'sleep', 'nutrition', 'diet', 'running', 'yoga', 'wellness', 'medical']],
  ['Business', ['business', 'marketing', 'sales', 'startup', 'management', 'leadership', 'strategy', 'customer', 'customers', 'product', 'revenue', 'company', 'work', 'remote', 'career', 'productivity', 'office', 'hiring']],
  ['Personal Finance', ['money', 'budget', 'budgeting', 'saving', 'savings', 'investing', 'debt', 'retirement', 'finance']],
  ['Science', ['science', 'research', 'physics', 'chemistry', 'biology', 'climate', 'space', 'experiment', 'study', 'energy']],
  ['Education', ['education', 'learning', 'teaching', 'school', 'student', 'students', 'course', 'university']],
  ['Travel', ['travel', 'trip', 'destination', 'flight', 'hotel', 'hiking', 'tourism', 'journey']],
  ['Home & Garden', ['garden', 'gardening', 'home', 'plant', 'plants', 'diy', 'furniture']],
];

const STOPWORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by can could did do does doing down during each even few for from further get gets had has have having he her here hers herself him himself his how however i if in into is it its itself just let like made make makes many may me might more most much must my myself no nor not now of off often on once one only or other our ours ourselves out over own per same she should so some such than that the their theirs them themselves then there these they this those through to too under until up upon us use used uses using very via was way ways we well were what when where which while who whom why will with within without would yet you your yours yourself yourselves ' +
    'able across already always another anyone anything around away back best better come done every first good great into keep know last less little long lot lots need new next old part really right say see seem seems several since still take thing things think two want whether'
  ).split(' '),
);

// ---------------------------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------------------------

/** Letters and digits, Latin and beyond; the General Punctuation block (— … “) is not a word. */
const WORD_PATTERN = /[A-Za-z0-9\u00C0-\u1FFF\u2070-\uFFFF]+(?:['’-][A-Za-z0-9\u00C0-\u1FFF\u2070-\uFFFF]+)*/g;

/** Words as a reader counts them: Markdown markers and punctuation do not count. */
export function countWords(text: string): number {
  return text.match(WORD_PATTERN)?.length ?? 0;
}

function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (placeholder, key: string) => vars[key] ?? placeholder);
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The topic as it reads mid-sentence: an ordinary first word loses its capital ("Brewing coffee"
 * becomes "brewing coffee"), a name keeps it ("Kubernetes autoscaling"). A word counts as ordinary
 * when it is a function word, a gerund, or the sources themselves write it in lower case.
 */
function midSentence(topic: string, sourceText: string): string {
  const first = topic.split(' ')[0];
  const lower = first.toLowerCase();
  const capitalOnlyAtStart = first.slice(1) === first.slice(1).toLowerCase();
  const ordinary = STOPWORDS.has(lower) || /ing$/.test(lower) || containsWord(sourceText, lower);
  return capitalOnlyAtStart && ordinary ? lower + topic.slice(first.length) : topic;
}

const SMALL_WORDS = new Set(['a', 'an', 'and', 'as', 'at', 'but', 'by', 'for', 'in', 'nor', 'of', 'on', 'or', 'the', 'to', 'vs', 'with']);

/**
 * Title case: small words lower case except at the start or after a colon; words with capitals
 * of their own beyond the first letter (API, iOS, McDonald) stay as written.
 */
function titleCase(text: string): string {
  const words = text.split(' ');
  return words
    .map((word, i) => {
      const startsPhrase = i === 0 || words[i - 1].endsWith(':');
      if (!startsPhrase && SMALL_WORDS.has(word.toLowerCase())) return word.toLowerCase();
      if (/\p{Lu}/u.test(word.slice(1))) return word;
      return capitalize(word);
    })
    .join(' ');
}

const CONTRACTIONS: readonly [RegExp, string][] = [
  [/\b([Ii])t is\b/g, "$1t's"],
  [/\b([Tt])hat is\b/g, "$1hat's"],
  [/\b([Tt])here is\b/g, "$1here's"],
  [/\b([Yy])ou are\b/g, "$1ou're"],
  [/\b([Yy])ou have\b/g, "$1ou've"],
  [/\b([Yy])ou will\b/g, "$1ou'll"],
  [/\b([Ll])et us\b/g, "$1et's"],
  [/\b([Dd])o not\b/g, "$1on't"],
  [/\b([Dd])oes not\b/g, "$1oesn't"],
  [/\b([Ii])s not\b/g, "$1sn't"],
  [/\b([Aa])re not\b/g, "$1ren't"],
  [/\bcannot\b/g, "can't"],
  [/\bwill not\b/g, "won't"],
];

function contract(text: string): string {
  return CONTRACTIONS.reduce((acc, [pattern, replacement]) => acc.replace(pattern, replacement), text);
}

/** FNV-1a: a stable, cheap seed so the same topic always picks the same phrasing. */
function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function pick<T>(items: readonly T[], index: number): T {
  return items[index % items.length];
}

function clipWords(text: string, maxWords: number): string {
  const words = text.split(' ');
  return words.length <= maxWords ? text : `${words.slice(0, maxWords).join(' ').replace(/[,;:.]$/, '')}…`;
}

/** Source text as plain prose: code blocks dropped, Markdown markers removed, headings ended. */
function plainText(markdown: string): string {
  const lines = markdown
    .slice(0, MAX_PASSAGE_CHARS)
    .replace(/```[\s\S]*?(?:```|$)/g, ' ')
    .split(/\r?\n/);
  const prose = lines.map((line) => {
    const structural = /^\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s)/.test(line);
    const text = line
      .replace(/^\s*(?:#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)/, '')
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/(\*\*|__|`)(.+?)\1/g, '$2')
      .replace(/\*([^*\s][^*]*)\*/g, '$1')
      .trim();
    // A heading or list item is a sentence of its own, not the start of the next one.
    return structural && text !== '' && !/[.!?:;]$/.test(text) ? `${text}.` : text;
  });
  return prose.join(' ').replace(/\s+/g, ' ').trim();
}

function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?]["”’)\]]?)\s+(?=["“‘(]?[\p{Lu}\p{N}])/u)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== '');
}

/** Case-sensitive whole-word search. */
function containsWord(text: string, word: string): boolean {
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + 1)) {
    const before = text.charAt(at - 1);
    const after = text.charAt(at + word.length);
    if (!/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after)) return true;
  }
  return false;
}

/** Content words: lower case, no stopwords, no bare numbers. */
function keywordsOf(words: readonly string[], minLength: number): string[] {
  const keywords: string[] = [];
  for (const word of words) {
    const lower = word.toLowerCase();
    if (lower.length >= minLength && !STOPWORDS.has(lower) && !/^\d+$/.test(lower)) keywords.push(lower);
  }
  return keywords;
}

function tokens(text: string, minLength: number): string[] {
  return keywordsOf(text.match(WORD_PATTERN) ?? [], minLength);
}

/** Most frequent first; ties keep first appearance, so the ranking is deterministic. */
function rankByFrequency(words: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  return [...counts.keys()].sort((a, b) => counts.get(b)! - counts.get(a)!);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

// ---------------------------------------------------------------------------------------------
// Analysis of the sources
// ---------------------------------------------------------------------------------------------

interface SourceDigest {
  fileName: string;
  /** Number in the References list (academic style). */
  ref: number;
  text: string;
  /** Content words in order of appearance. */
  words: string[];
  sentences: string[];
  quote: string;
  keySentences: string[];
  keywords: string[];
}

/** Passages grouped per file, best file first, each reduced to its quote and key sentences. */
function digestSources(passages: readonly Passage[], topicWords: ReadonlySet<string>, keyCount: number): SourceDigest[] {
  const byFile = new Map<string, Passage[]>();
  for (const passage of topPassages(passages, MAX_PROMPT_PASSAGES)) {
    const group = byFile.get(passage.fileId);
    if (group) group.push(passage);
    else byFile.set(passage.fileId, [passage]);
  }
  const digests: SourceDigest[] = [];
  for (const group of byFile.values()) {
    const text = group.map((p) => plainText(p.text)).join(' ').trim();
    if (text === '') continue;
    const analysed = unique(splitSentences(text)).map((sentence) => {
      const words = sentence.match(WORD_PATTERN) ?? [];
      return { sentence, wordCount: words.length, keywords: keywordsOf(words, 3) };
    });
    const words = analysed.flatMap((a) => a.keywords);
    const frequency = new Map<string, number>();
    for (const word of words) frequency.set(word, (frequency.get(word) ?? 0) + 1);

    const candidates = analysed.filter((a) => a.wordCount >= MIN_SENTENCE_WORDS);
    const pool = candidates.length > 0 ? candidates : [{ sentence: text, wordCount: countWords(text), keywords: words }];
    // Sentences dense in the source's own vocabulary and the topic's words carry its message.
    const ranked = pool.map((a, index) => {
      const weight = a.keywords.reduce((sum, w) => sum + (frequency.get(w) ?? 0) + (topicWords.has(w) ? 3 : 0), 0);
      const sentence = a.wordCount > MAX_SENTENCE_WORDS ? clipWords(a.sentence, MAX_SENTENCE_WORDS) : a.sentence;
      return { sentence, index, score: weight / Math.sqrt(a.wordCount + 1) };
    });
    const sentences = ranked.map((r) => r.sentence);
    ranked.sort((a, b) => b.score - a.score || a.index - b.index);
    const keys = ranked.slice(1, 1 + keyCount).sort((a, b) => a.index - b.index);
    digests.push({
      fileName: group[0].fileName,
      ref: digests.length + 1,
      text,
      words,
      sentences,
      quote: ranked[0].sentence,
      keySentences: keys.map((k) => k.sentence),
      keywords: rankByFrequency(words).filter((w) => !topicWords.has(w)),
    });
  }
  return digests;
}

function deriveCategory(topicWords: readonly string[], sourceWords: readonly string[]): string {
  const sourceCounts = new Map<string, number>();
  for (const word of sourceWords) sourceCounts.set(word, (sourceCounts.get(word) ?? 0) + 1);
  let best = { name: '', score: 0 };
  for (const [name, keywords] of CATEGORY_KEYWORDS) {
    let score = 0;
    for (const keyword of keywords) {
      if (topicWords.includes(keyword)) score += 3;
      score += Math.min(sourceCounts.get(keyword) ?? 0, 3);
    }
    if (score > best.score) best = { name, score };
  }
  if (best.score > 0) return best.name;
  const fallback = topicWords[0] ?? rankByFrequency(sourceWords)[0];
  return fallback ? capitalize(fallback) : 'General';
}

function deriveTags(topicWords: readonly string[], sourceKeywords: readonly string[], category: string): string[] {
  const tags = unique([...topicWords, ...sourceKeywords]).slice(0, MAX_TAGS);
  for (const filler of [category.toLowerCase().replace(' & ', ' and '), 'guide', 'overview']) {
    if (tags.length >= MIN_TAGS) break;
    if (!tags.includes(filler)) tags.push(filler);
  }
  return tags;
}

// ---------------------------------------------------------------------------------------------
// Composition
// ---------------------------------------------------------------------------------------------

class Composer {
  private readonly style: StyleVoice;
  private readonly tone: ToneVoice;
  private readonly seed: number;
  private readonly vars: Record<string, string>;
  private readonly sources: SourceDigest[];
  private readonly focus: string[];
  private readonly tags: string[];
  private readonly category: string;
  /** Keywords already used in a heading, so two sections never share a title. */
  private readonly headingWords = new Set<string>();
  private closerIndex = 0;
  private connectorIndex = 0;

  constructor(private readonly req: GenerationRequest) {
    this.style = STYLE_VOICES[req.style];
    this.tone = TONE_VOICES[req.tone];
    const topic = req.topic.replace(/\s+/g, ' ').trim().replace(/[.!?:;,]+$/, '') || 'the subject';
    this.seed = hashString(topic.toLowerCase());

    const topicWords = unique(tokens(topic, 2));
    const allSources = digestSources(req.passages, new Set(topicWords), KEY_SENTENCES[req.length]);
    this.sources = allSources.slice(0, SOURCE_SECTIONS[req.length]);
    const sourceWords = allSources.flatMap((s) => s.words);
    const sourceKeywords = rankByFrequency(sourceWords).filter((w) => !topicWords.includes(w));

    this.category = deriveCategory(topicWords, sourceWords);
    this.tags = deriveTags(topicWords, sourceKeywords, this.category);
    this.focus = unique([...sourceKeywords.slice(0, 3), ...FALLBACK_FOCUS]);
    const topicInSentence = midSentence(topic, allSources.map((s) => s.text).join(' '));
    this.vars = {
      topic: topicInSentence,
      Topic: capitalize(topic),
      audience: req.targetAudience?.trim() || `anyone interested in ${topicInSentence}`,
      k1: this.focus[0],
      k2: this.focus[1],
      k3: this.focus[2],
    };
  }

  compose(): GeneratedPost {
    const target = WORD_TARGETS[this.req.length];
    const intro = this.intro();
    const sourceSections = this.sources.map((source, i) => this.sourceSection(source, i));
    const examples = this.req.includeExamples ? this.examples() : [];
    const conclusion = this.conclusion();

    const used = countWords([intro, ...sourceSections, ...examples, ...conclusion].join('\n'));
    const [lead, ...rest] = this.aspectSections(target - used);

    // "Why it matters" reads best before the source material, the other topic sections after it.
    const blocks = [intro, ...(lead ? [lead] : []), ...sourceSections, ...rest, ...examples, ...conclusion];
    return {
      title: titleCase(fill(pick(this.style.titles, this.seed), this.vars)).slice(0, MAX_TITLE_LENGTH),
      description: this.description(),
      category: this.category,
      tags: this.tags,
      content: `${blocks.join('\n\n')}\n`,
    };
  }

  /** The composer's own prose, in the style's register (quotes from sources never pass here). */
  private say(template: string, extra: Record<string, string> = {}): string {
    const text = fill(template, { ...this.vars, ...extra });
    return this.style.contractions ? contract(text) : text;
  }

  private nextCloser(): string {
    return this.say(pick(this.tone.closers, this.seed + this.closerIndex++));
  }

  /** Opens a paragraph with the style's connector ("Furthermore, the ..."). */
  private withConnector(paragraph: string): string {
    const connector = pick(this.style.connectors, this.seed + this.connectorIndex++);
    if (paragraph.startsWith('{Topic}')) return `${connector} ${paragraph.replace('{Topic}', '{topic}')}`;
    return `${connector} ${paragraph.charAt(0).toLowerCase()}${paragraph.slice(1)}`;
  }

  private cite(source: SourceDigest): string {
    return this.style.numberedCitations ? `[${source.ref}]` : `(source: *${source.fileName}*)`;
  }

  private description(): string {
    const first = this.say(this.style.description);
    const [source, ...others] = this.sources;
    if (!source) return first;
    const more = others.length === 0 ? '' : ` and ${others.length} more source${others.length === 1 ? '' : 's'}`;
    return `${first} Grounded in ${source.fileName}${more}.`;
  }

  private intro(): string {
    const sentences = [this.say(this.tone.opener), this.say(this.style.intro)];
    if (this.sources.length > 0) {
      const files = this.sources.map((s) => `*${s.fileName}*`);
      const list = files.length === 1 ? files[0] : `${files.slice(0, -1).join(', ')} and ${files.at(-1)}`;
      const count = this.sources.length === 1 ? 'one source' : `${this.sources.length} sources`;
      sentences.push(this.say(`It draws on ${count} from the knowledge base (${list}) and quotes them where they matter most.`));
      if (this.style.numberedCitations) sentences.push('Sources are cited by number and listed at the end.');
    } else {
      sentences.push(this.say('It focuses on widely applicable principles rather than narrow specifics.'));
    }
    return sentences.join(' ');
  }

  private sectionHeading(source: SourceDigest, index: number): string {
    const [a, b] = source.keywords.filter((w) => !this.headingWords.has(w));
    for (const word of [a, b]) if (word) this.headingWords.add(word);
    if (a && b) return fill(pick(this.style.pairHeadings, index), { A: titleCase(a), B: titleCase(b) });
    if (a) return fill(pick(this.style.singleHeadings, index), { A: titleCase(a) });
    return titleCase(source.fileName.replace(/\.[^.]+$/, '').replace(/[-_]+/g, ' '));
  }

  private sourceSection(source: SourceDigest, index: number): string {
    const file = `*${source.fileName}*`;
    const citation = this.style.numberedCitations ? ` [${source.ref}]` : '';
    const parts = [
      `## ${this.sectionHeading(source, index)}`,
      this.say(pick(this.style.sourceLeads, index), { file }),
      `> ${source.quote} — *from ${source.fileName}*${citation}`,
    ];
    if (source.keySentences.length > 0) {
      if (this.style.bullets) {
        parts.push(`Key points from ${file}:`, source.keySentences.map((s) => `- ${s}`).join('\n'));
      } else {
        parts.push(`${this.say(this.style.morePoints)} ${source.keySentences.join(' ')} ${this.cite(source)}`);
      }
    }
    if (index % 2 === 0) parts.push(this.nextCloser());
    return parts.join('\n\n');
  }

  /** Topic-only sections, paragraph by paragraph, until the word budget is spent. */
  private aspectSections(budget: number): string[] {
    const sections: string[] = [];
    let used = 0;
    for (const [aspectIndex, aspect] of ASPECTS.entries()) {
      const paragraphs: string[] = [];
      for (const [i, template] of aspect.paragraphs.entries()) {
        const paragraph = this.say(i === 0 ? this.withConnector(template) : template);
        const cost = countWords(paragraph) + (i === 0 ? 4 : 0);
        // Overshoot by at most half a paragraph rather than stop well short of the target.
        if (used + cost / 2 > budget) break;
        paragraphs.push(paragraph);
        used += cost;
      }
      if (paragraphs.length === 0) break;
      if (aspectIndex % 3 === 0) paragraphs[paragraphs.length - 1] += ` ${this.nextCloser()}`;
      sections.push(`## ${titleCase(fill(this.style.aspectHeadings[aspect.id], this.vars))}\n\n${paragraphs.join('\n\n')}`);
    }
    return sections;
  }

  private examples(): string[] {
    const quoted = new Set(this.sources.flatMap((s) => [s.quote, ...s.keySentences]));
    const fromSources = this.sources
      .flatMap((source) =>
        source.sentences
          .filter((s) => !quoted.has(s) && EXAMPLE_MARKERS.test(s))
          .map((s) => `**From ${source.fileName}:** ${s} ${this.cite(source)}`),
      )
      .slice(0, MAX_SOURCE_EXAMPLES);
    const generic = GENERIC_EXAMPLES.map((template) => this.say(template));
    const items = [...fromSources, ...generic].slice(0, EXAMPLE_COUNT);
    return [
      `## ${this.style.examplesHeading}`,
      `${this.say(this.style.examplesLead)}\n\n${items.map((item, i) => `${i + 1}. ${item}`).join('\n')}`,
    ];
  }

  private conclusion(): string[] {
    const { k1, k2, k3 } = this.vars;
    const summary = [
      this.say(this.withConnector(`{Topic} comes down to doing a handful of things well, above all ${k1}, ${k2} and ${k3}.`)),
    ];
    if (this.sources.length > 0) {
      summary.push(this.say('The sources quoted above show how these ideas play out in practice.'));
    }
    summary.push(this.say(this.tone.conclusion));
    const blocks = [`## ${this.style.conclusionHeading}`, summary.join(' ')];
    if (this.style.bullets) {
      blocks.push(
        [
          `- **${capitalize(k1)}:** establish a baseline and measure it.`,
          `- **${capitalize(k2)}:** change one variable at a time.`,
          `- **${capitalize(k3)}:** document what works so it can be repeated.`,
        ].join('\n'),
      );
    }
    if (this.tone.callToAction) blocks.push(this.say(this.tone.callToAction));
    if (this.style.numberedCitations && this.sources.length > 0) {
      blocks.push('## References', this.sources.map((s) => `${s.ref}. ${s.fileName}`).join('\n'));
    }
    return blocks;
  }
}

export class BuiltinGenerator implements Generator {
  readonly provider = 'builtin' as const;
  readonly model = BUILTIN_MODEL;

  async generate(req: GenerationRequest, signal?: AbortSignal): Promise<GenerationResult> {
    signal?.throwIfAborted();
    return { post: new Composer(req).compose(), provider: this.provider, model: this.model };
  }
}
