/**
 * The writer's own words, by style and tone: titles, the introduction and conclusion around
 * the facts, headings of the examples and conclusion sections. Every template is written to
 * read correctly for any topic: a subject phrase (singular or plural), a "how to" phrase or a
 * question, each with its own variant where the grammar differs.
 *
 * Placeholders: {subject} (mid-sentence), {Subject} (at a sentence start), {how} ("how to ..."),
 * {question} / {Question} (the topic as a question), {is} / {s} (agreement with the subject:
 * "is"/"are", "rewards"/"reward"), {audience}, {Title} (title case, any kind), {TitleSubject}
 * (title case noun phrase: not for questions), {keys} (a list of the post's key terms),
 * {firstKey}.
 */

import type { Style, Tone } from '../../limits.js';
import type { TopicKind } from './topic.js';

/** One template per kind of topic. */
export type ByKind = Record<TopicKind, string>;

export interface StyleVoice {
  /** Titles that follow the topic ({Title}...): for every kind of topic. */
  titles: readonly string[];
  /** Titles that embed the topic as a noun phrase: not for questions. */
  subjectTitles: readonly string[];
  description: ByKind;
  /**
   * The description of a topic that is itself the post's form ("A beginner's guide to home
   * brewing", "Orbit Analytics 4.3 release highlights", "10 ways to save energy"): the topic
   * names the post, so it is not "a guide to" it again.
   */
  framedDescription: string;
  /** Who the post is for (after the opener). */
  audience: string;
  examplesHeading: string;
  examplesLead: string;
  conclusionHeading: string;
  /** Technical posts give the facts as bullet points. */
  bullets: boolean;
  /** Academic posts cite sources by number and end with a References list. */
  numberedCitations: boolean;
  /** Casual posts use contractions in the writer's own sentences (never in the sources' words). */
  contractions: boolean;
}

export const STYLE_VOICES: Record<Style, StyleVoice> = {
  professional: {
    titles: ['{Title}: A Practical Guide', '{Title}: What You Need to Know'],
    subjectTitles: ["A Professional's Guide to {TitleSubject}"],
    description: {
      subject: 'A practical guide to {subject} for {audience}.',
      howto: 'A practical guide to {subject} for {audience}.',
      question: '{Question} A practical answer for {audience}.',
    },
    framedDescription: '{Subject}, set out for {audience}.',
    audience: 'This guide is written for {audience}.',
    examplesHeading: 'Examples in Practice',
    examplesLead: 'The sources give these concrete cases:',
    conclusionHeading: 'Conclusion',
    bullets: false,
    numberedCitations: false,
    contractions: false,
  },
  casual: {
    titles: ['{Title}, Made Simple', '{Title}: The Friendly Version'],
    subjectTitles: ["Let's Talk About {TitleSubject}", 'Everything I Wish I Knew About {TitleSubject}'],
    description: {
      subject: 'A friendly, no-nonsense look at {subject} for {audience}.',
      howto: 'A friendly, no-nonsense look at {subject} for {audience}.',
      question: '{Question} A friendly, no-nonsense answer for {audience}.',
    },
    framedDescription: '{Subject}, the friendly, no-nonsense version for {audience}.',
    audience: "This one's for {audience}, so get comfortable.",
    examplesHeading: 'Some Examples',
    examplesLead: 'Here are a few examples to make it concrete:',
    conclusionHeading: 'Wrapping Up',
    bullets: false,
    numberedCitations: false,
    contractions: true,
  },
  technical: {
    titles: ['{Title}: A Technical Deep Dive', '{Title}: Concepts and Details'],
    subjectTitles: ['{TitleSubject} Explained in Depth'],
    description: {
      subject: 'A technical walkthrough of {subject} for {audience}.',
      howto: 'A technical walkthrough of {subject} for {audience}.',
      question: '{Question} A technical answer for {audience}.',
    },
    framedDescription: '{Subject}, with the technical details, for {audience}.',
    audience: 'It is written for {audience} and keeps to the specifics.',
    examplesHeading: 'Worked Examples',
    examplesLead: 'Concrete cases from the sources:',
    conclusionHeading: 'Summary',
    bullets: true,
    numberedCitations: false,
    contractions: false,
  },
  creative: {
    titles: ['{Title}: A Story in Small Steps', '{Title}: A Closer Look'],
    subjectTitles: ['The Art of {TitleSubject}', 'Rethinking {TitleSubject}'],
    description: {
      subject: 'A fresh, close look at {subject} for {audience}.',
      howto: 'A fresh, close look at {subject} for {audience}.',
      question: '{Question} A fresh answer for {audience}.',
    },
    framedDescription: '{Subject}, told up close for {audience}.',
    audience: 'Written for {audience}, it lets the details speak for themselves.',
    examplesHeading: 'Examples From the Field',
    examplesLead: 'A few snapshots bring the ideas to life:',
    conclusionHeading: 'Final Thoughts',
    bullets: false,
    numberedCitations: false,
    contractions: false,
  },
  academic: {
    titles: ['{Title}: An Analytical Overview', '{Title}: Principles and Evidence'],
    subjectTitles: ['Toward an Understanding of {TitleSubject}'],
    description: {
      subject: 'An analytical overview of {subject} for {audience}.',
      howto: 'An analytical overview of {subject} for {audience}.',
      question: '{Question} An analytical answer for {audience}.',
    },
    framedDescription: '{Subject}: an analytical overview for {audience}.',
    audience: 'This overview is intended for {audience}.',
    examplesHeading: 'Illustrative Examples',
    examplesLead: 'The following examples, taken from the sources, illustrate the points above:',
    conclusionHeading: 'Conclusion',
    bullets: false,
    numberedCitations: true,
    contractions: false,
  },
};

export interface ToneVoice {
  /** First sentence(s) of a post with sources. */
  opener: ByKind;
  /** First sentence(s) of an outline draft. */
  outlineOpener: ByKind;
  /** Closing line, with the post's first key term ({firstKey}): a point, never a list of terms. */
  conclusion: ByKind;
  /** Closing line when the post has fewer than two key terms. */
  shortConclusion: ByKind;
  /** Persuasive posts end with an explicit call to action. */
  callToAction: string | null;
}

export const TONE_VOICES: Record<Tone, ToneVoice> = {
  informative: {
    opener: {
      subject: 'This post covers {subject}.',
      howto: 'This post explains {how}.',
      question: '{Question} This post answers it from the sources.',
    },
    outlineOpener: {
      subject: 'This is an outline for a post on {subject}.',
      howto: 'This is an outline for a post on {how}.',
      question: '{Question} This is an outline for a post that answers it.',
    },
    conclusion: {
      subject: 'In short, {subject} comes down to getting {firstKey} right, and the rest builds on it.',
      howto: 'In short, {subject} comes down to getting {firstKey} right, and the rest builds on it.',
      question: 'So, {question} Above all, the answer turns on {firstKey}.',
    },
    shortConclusion: {
      subject: 'That is what the sources say about {subject}.',
      howto: 'That is what the sources say about {subject}.',
      question: 'That is what the sources say in answer to the question.',
    },
    callToAction: null,
  },
  persuasive: {
    opener: {
      subject: '{Subject} {is} worth getting right, and the details below show how.',
      howto: 'Knowing {how} pays off, and the details below show the way.',
      question: '{Question} The answer is worth knowing, and the details below give it.',
    },
    outlineOpener: {
      subject: '{Subject} {is} worth a post of {its} own, and this outline plans it.',
      howto: 'Knowing {how} is worth a post of its own, and this outline plans it.',
      question: '{Question} The answer is worth a post of its own, and this outline plans it.',
    },
    conclusion: {
      subject: 'Put these points into practice one at a time, starting with {firstKey}.',
      howto: 'Put these points into practice one at a time, starting with {firstKey}.',
      question: 'So, {question} Start with {firstKey}, and the rest of the answer follows.',
    },
    shortConclusion: {
      subject: 'Put this into practice, and the results will show.',
      howto: 'Put this into practice, and the results will show.',
      question: 'Put the answer into practice, and the results will show.',
    },
    callToAction: '**Take action today:** choose one point from this post, put it into practice this week, and see the difference for yourself.',
  },
  conversational: {
    opener: {
      subject: 'Curious about {subject}? You are in the right place.',
      howto: 'Want to know {how}? Let us walk through it.',
      question: '{Question} Good question. Let us look at what the sources say.',
    },
    outlineOpener: {
      subject: 'Curious about {subject}? So are we, and this outline plans the post.',
      howto: 'Want to know {how}? This outline plans the post that will explain it.',
      question: '{Question} Good question. This outline plans the post that will answer it.',
    },
    conclusion: {
      subject: 'So, why not start with {firstKey} and see what changes?',
      howto: 'So, why not start with {firstKey} and see what changes?',
      question: 'So, {question} Start with {firstKey}, and see how far it takes you.',
    },
    shortConclusion: {
      subject: 'So, what will you try first?',
      howto: 'So, what will you try first?',
      question: 'So, does that answer the question for you?',
    },
    callToAction: null,
  },
  authoritative: {
    opener: {
      subject: '{Subject} reward{s} a rigorous approach.',
      howto: 'Knowing {how} comes down to getting a few things exactly right.',
      question: '{Question} The answer rests on a few firm facts.',
    },
    outlineOpener: {
      subject: '{Subject} reward{s} a rigorous approach, and so does a post about {them}.',
      howto: 'Knowing {how} comes down to a few things done right, and so does a post about it.',
      question: '{Question} The answer deserves a rigorous post, and this outline plans it.',
    },
    conclusion: {
      subject: 'Get {firstKey} right first, and the rest follows.',
      howto: 'Get {firstKey} right first, and the rest follows.',
      question: 'So, {question} The answer comes down to {firstKey} first of all.',
    },
    shortConclusion: {
      subject: 'Follow what the sources say, and the results will follow.',
      howto: 'Follow what the sources say, and the results will follow.',
      question: 'Follow what the sources say, and the answer holds.',
    },
    callToAction: null,
  },
};
