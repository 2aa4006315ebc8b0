/**
 * Mechanical checks of a written post against the prose rules (tests and the writer benchmark
 * read posts with them): paragraphs that start or end mid-sentence, headings that are a bare
 * noun, a closing paragraph that lists nouns, a sentence written twice, tags that are not noun
 * phrases, and the order of lengths.
 */

import { STYLE_VOICES } from './voices.js';
import { isBareHeading, isTagPhrase, listsThings, withoutTransition } from './prose.js';

export interface ProseViolations {
  /** Paragraphs starting or ending mid-sentence. */
  midSentence: string[];
  /** Section headings of one content word (or a unit). */
  bareHeadings: string[];
  /** Closing sentences listing three things or more. */
  nounListEndings: string[];
  /** Sentences that appear twice (transitions left out). */
  repeatedSentences: string[];
  /** Tags that are not noun phrases naming a subject. */
  badTags: string[];
}

/** Headings the writer itself names (conclusion, examples, references): fixed, not about the topic. */
const FIXED_HEADINGS = new Set(['References', ...Object.values(STYLE_VOICES).flatMap((v) => [v.conclusionHeading, v.examplesHeading])]);

const HEADING = /^#{1,6} /;
const LIST_LINE = /^\s*(?:[-*]|\d+\.)\s+/;
const CITATION = /\s*(?:\(source: \*[^*]+\*\)|\[\d+\])\s*$/;
const SOURCE_LINE = /^(?:Source: \*[^*]+\*\.|\[\d+\])$/;
// "*To cover:* ..." and the like: the writer's own markers, not part of a sentence.
const LEADING_MARKER = /^\*{1,2}[^*]+\*{1,2}\s*/;
const STARTS_SENTENCE = /^["“‘(]?[\p{Lu}\p{N}]/u;
const ENDS_SENTENCE = /[.!?]["'”’)\]]*$/u;

/** Body paragraphs: blocks that are not headings, lists or an attribution line. */
function paragraphs(content: string): string[] {
  return content
    .split(/\n{2,}/)
    .map((block) => block.trim())
    .filter((block) => block && !HEADING.test(block) && !LIST_LINE.test(block) && !SOURCE_LINE.test(block));
}

const normalize = (text: string) => text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

/** The sentences of a post's body, list items included, markers and citations left out. */
export function sentencesOf(content: string): string[] {
  const sentences: string[] = [];
  for (const block of content.split(/\n{2,}/)) {
    if (HEADING.test(block.trim())) continue;
    for (let line of block.split('\n')) {
      if (SOURCE_LINE.test(line.trim())) continue;
      line = line.replace(LIST_LINE, '').replace(LEADING_MARKER, '').replace(CITATION, '').replace(/[*_`]/g, '').trim();
      if (!line) continue;
      for (const sentence of line.split(/(?<=[.!?])\s+(?=["“(]?[\p{Lu}\p{N}])/u)) if (/\p{L}/u.test(sentence)) sentences.push(sentence.trim());
    }
  }
  return sentences;
}

export function checkProse(post: { content: string; tags: readonly string[] }): ProseViolations {
  const midSentence = paragraphs(post.content).filter((p) => {
    // A bold lead-in ("**Take action today:** choose ...") starts the sentence; a lead into a list ends with a colon.
    const text = p.replace(CITATION, '').replace(/[*_`]/g, '').trim();
    return !STARTS_SENTENCE.test(text) || !(ENDS_SENTENCE.test(text) || text.endsWith(':'));
  });
  const bareHeadings = (post.content.match(/^## .+$/gm) ?? []).map((h) => h.slice(3).trim()).filter((h) => !FIXED_HEADINGS.has(h) && isBareHeading(h));
  // The closing paragraph: the last one under the last section heading that is not the references.
  const sections = post.content.split(/^## /m);
  const closingSection = [...sections].reverse().find((s) => !s.startsWith('References')) ?? '';
  const closing = paragraphs(closingSection.split('\n').slice(1).join('\n'));
  const nounListEndings = closing.flatMap((p) => sentencesOf(p)).filter(listsThings);
  const seen = new Set<string>();
  const repeatedSentences: string[] = [];
  for (const sentence of sentencesOf(post.content)) {
    const key = normalize(withoutTransition(sentence));
    if (key.split(' ').length < 4) continue;
    if (seen.has(key)) repeatedSentences.push(sentence);
    seen.add(key);
  }
  const badTags = post.tags.filter((tag) => !isTagPhrase(tag));
  return { midSentence, bareHeadings, nounListEndings, repeatedSentences, badTags };
}

/** Whether words of the long, medium and short posts on one topic fall in that order, strictly. */
export const lengthOrderHolds = (words: { short: number; medium: number; long: number }) => words.long > words.medium && words.medium > words.short;
