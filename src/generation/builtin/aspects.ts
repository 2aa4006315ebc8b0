/**
 * The outline draft written when no source covers the topic: section headings and what each
 * section should cover, by kind of topic, instead of prose that would claim what no source
 * says. Placeholders as in voices.ts, plus {It}/{it}/{them}/{s} for agreement with the subject.
 */

import type { TopicKind } from './topic.js';

export interface OutlineSection {
  heading: string;
  cover: string;
}

/** Sections in order; a short post takes the first few, a long one all of them. */
export const OUTLINE: Record<TopicKind, readonly OutlineSection[]> = {
  subject: [
    { heading: '{TitleSubject}: The Basics', cover: 'What {subject} {is}, in a sentence or two, and who needs to know.' },
    { heading: 'Why {It} Matter{s}', cover: 'The problem {subject} solve{s} and what goes wrong without {them}, with one real case.' },
    { heading: 'How {It} Work{s} in Practice', cover: 'The steps, settings or decisions involved, in the order a reader meets them, with the figures that matter.' },
    { heading: 'Common Mistakes', cover: 'Two or three mistakes people make, how to spot each one and how to fix it.' },
    { heading: 'Where to Start', cover: 'One concrete first step for the reader, and where to read further.' },
    { heading: 'Measuring the Result', cover: 'How a reader can tell it is working: what to measure, and what a good result looks like.' },
  ],
  howto: [
    { heading: 'What You Need', cover: 'The tools, materials and knowledge needed before starting, with quantities.' },
    { heading: 'Step by Step', cover: 'The steps of {subject} in order, each with its amount, setting or time.' },
    { heading: 'Common Mistakes', cover: 'What usually goes wrong, how to notice it and how to correct it.' },
    { heading: 'Checking the Result', cover: 'How to tell that it worked, and what to adjust when it did not.' },
    { heading: 'Going Further', cover: 'Variations worth trying once the basics work, and where to learn more.' },
  ],
  question: [
    { heading: 'The Short Answer', cover: 'Answer the question in two or three sentences.' },
    { heading: 'The Details', cover: 'The reasons behind the answer, with figures and a named source for each claim.' },
    { heading: 'What the Answer Depends On', cover: 'The cases in which the answer changes, and why.' },
    { heading: 'Putting It to Use', cover: 'What a reader should do differently once they know the answer.' },
    { heading: 'Further Reading', cover: 'Two or three sources that go deeper.' },
  ],
};

export const OUTLINE_SECTIONS = { short: 3, medium: 4, long: 6 } as const;

export const OUTLINE_EXAMPLES: OutlineSection = {
  heading: 'Examples',
  cover: 'Two or three concrete cases, each with what was done and what came of it.',
};

export const OUTLINE_CONCLUSION: OutlineSection = {
  heading: 'Conclusion',
  cover: 'The two or three points a reader should remember, in one short paragraph.',
};
