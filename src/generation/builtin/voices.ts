/**
 * Phrase banks of the styles and tones. Placeholders: {topic} as typed, {Topic} capitalised,
 * {Topic} title case, {audience}, {file}, {k1}-{k3} focus keywords, {A}/{B} heading keywords.
 */

import type { Style, Tone } from '../../limits.js';
import type { AspectId } from './aspects.js';

export interface StyleVoice {
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

export const STYLE_VOICES: Record<Style, StyleVoice> = {
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

export interface ToneVoice {
  opener: string;
  closers: readonly string[];
  conclusion: string;
  /** Persuasive posts end with an explicit call to action. */
  callToAction: string | null;
}

export const TONE_VOICES: Record<Tone, ToneVoice> = {
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
