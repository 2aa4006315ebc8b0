/**
 * The topic as the writer's own sentences need it: what kind of phrase it is (a subject, a
 * "how to ..." phrase, a question), its number (one subject or several), its form in the
 * middle of a sentence (names keep their capitals, other words lose them) and in a title.
 */

import { queryTerms } from '../../knowledge/search.js';
import { isTitleCase } from '../relevance.js';
import { tagWords, type TaggedWord } from '../../text/nlp.js';
import { STOPWORDS } from '../../text/stopwords.js';
import { nounPhrases } from '../../text/phrases.js';
import { titleCase } from './text.js';

export type TopicKind = 'subject' | 'howto' | 'question';

export interface Topic {
  kind: TopicKind;
  /** As typed, tidied: single spaces, no closing full stop (a question keeps its mark). */
  text: string;
  /** Mid-sentence form: "remote work tips for new managers", "brewing coffee at home" (how-to). */
  subject: string;
  /** Several things ("tips", "owners and cash flow"): verbs agree with it. */
  plural: boolean;
  /** How-to topics: "how to brew coffee at home", mid-sentence. */
  how: string | null;
  /** Questions: the question mid-sentence, with its mark ("what makes a good pour-over?"). */
  question: string | null;
  /** Title-case form for titles and headings. */
  title: string;
  /** Title-case noun-phrase form ("Brewing Coffee at Home" for a how-to); null for a question. */
  titleSubject: string | null;
  /** Noun phrases of the topic, lower case unless names ("remote work tips", "new managers"). */
  phrases: string[];
  /** Content words of the topic (lower case), for categories and tags. */
  words: string[];
  /**
   * The topic names the post's own form: a guide, tips, highlights, a checklist, a numbered
   * list ("A beginner's guide to home brewing", "10 ways to save energy at home"). Titles and
   * descriptions then use it as it is instead of wrapping it in "a guide to ...".
   */
  framed: boolean;
}

/** Words naming a post's form, ending the topic's first clause ("... release highlights", "The ultimate camping checklist"). */
const FORM_WORDS =
  /\b(?:guide|guidebook|handbook|tips|tricks|hacks|highlights|notes|checklist|list|overview|introduction|primer|tutorial|basics|essentials|ways|mistakes|ideas|steps|reasons|lessons|secrets|facts|questions|answers|recap|roundup|faq|101|explained|review|comparison)$/i;

/** Whether the topic names the post's form (Topic.framed). */
export function isFramed(text: string): boolean {
  const [firstClause, afterColon] = text.split(/\s*:\s*/, 2) as [string, string | undefined];
  // A number opens a list: "10 ways to ...", "Top 7 tips ...", "... : 20 quick recipes".
  if (/^(?:the\s+)?(?:top\s+)?\d{1,3}\s+\p{L}/iu.test(firstClause) || (afterColon !== undefined && /^\d{1,3}\s/.test(afterColon))) return true;
  const head = firstClause.split(/\s+(?:to|for|of|on|about|in|with)\s+/i)[0]!.replace(/[?.!]+$/, '');
  if (FORM_WORDS.test(head)) return true;
  // "Houseplant care: a practical guide", "Sourdough: everything you need to know".
  return afterColon !== undefined && (FORM_WORDS.test(afterColon.split(/\s+(?:to|for|of|on|about)\s+/i)[0]!) || /^everything (?:you|I)\b/i.test(afterColon));
}

const QUESTION_START = /^(what|why|how|when|where|which|who|whom|whose|is|are|can|could|should|would|will|do|does|did|has|have)\b/i;
const HOW_TO = /^how\s+to\s+/i;
const VOWEL_GROUPS = /[aeiouy]+/g;
/** Names the tagger's lexicon knows as ordinary words ("march", "may"), but always capitalised. */
const CALENDAR_NAMES = new Set(
  'january february march april may june july august september october november december monday tuesday wednesday thursday friday saturday sunday'.split(' '),
);

/** "brew" -> "brewing", "make" -> "making", "run" -> "running", "set up" -> "setting up". */
export function gerund(verb: string): string {
  const lower = verb.toLowerCase();
  if (/ing$/.test(lower)) return verb;
  if (/ie$/.test(lower)) return `${verb.slice(0, -2)}ying`;
  if (/[^aeio]e$/.test(lower) && lower !== 'be') return `${verb.slice(0, -1)}ing`;
  if (/[^aeiou][aeiou][bdgmnprt]$/.test(lower) && (lower.match(VOWEL_GROUPS) ?? []).length === 1) return `${verb}${verb.slice(-1)}ing`;
  return `${verb}ing`;
}

/**
 * A word as it reads inside a sentence. Kept as typed: words with capitals of their own
 * (SAML, OpenID, V60), a capital the writer chose mid-topic ("for Kubernetes"), a word the
 * sources write with a capital, and a word the tagger's lexicon does not know (a name:
 * "Kubernetes", "Zanzibar"). Lowered: every other capital ("Remote work", "Small business").
 */
function midSentenceWord(word: TaggedWord, first: boolean, titleCaseTopic: boolean, sourceText: string, next?: TaggedWord): string {
  const text = word.text;
  if (!/^\p{Lu}[\p{Ll}'’-]*$/u.test(text)) return text;
  if (!first && !titleCaseTopic) return text;
  // "Orbit Analytics release notes": a capital followed by another starts a name.
  if (first && !titleCaseTopic && next && /^\p{Lu}/u.test(next.text) && !STOPWORDS.has(text.toLowerCase())) return text;
  const lower = text.toLowerCase();
  if (CALENDAR_NAMES.has(lower)) return text;
  if (sourceText) {
    const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const capitalMid = new RegExp(`[\\p{Ll},;:] ${escaped}\\b`, 'u').test(sourceText);
    const lowerAnywhere = new RegExp(`(^|[^\\p{L}])${lower.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}])`, 'u').test(sourceText);
    if (capitalMid && !lowerAnywhere) return text;
    if (lowerAnywhere) return lower;
  }
  if (STOPWORDS.has(lower)) return lower;
  return word.unknown && word.pos !== 'VERB' ? text : lower;
}

/** Rebuilds text from tagged words with the spacing of the original. */
function join(words: readonly { text: string; spaceBefore: boolean }[]): string {
  return words.map((w, i) => (i > 0 && w.spaceBefore ? ' ' : '') + w.text).join('');
}

export function analyseTopic(raw: string, sourceText = ''): Topic {
  let text = raw.replace(/\s+/g, ' ').trim().replace(/[.!:;,]+$/, '').trim() || 'The subject';
  const isQuestion = text.endsWith('?') || (QUESTION_START.test(text) && !HOW_TO.test(text));
  if (isQuestion && !text.endsWith('?')) text = `${text}?`;
  const titleCaseTopic = isTitleCase(text);
  const tagged = tagWords(text, { lowerAll: titleCaseTopic });
  const mid = tagged.map((word, i) => ({ ...word, text: midSentenceWord(word, i === 0, titleCaseTopic, sourceText, tagged[i + 1]) }));
  const midText = join(mid);
  const phrases = nounPhrases(mid, { heading: true }).map((p) => p.text);
  const words = queryTerms(text).map((term) => term.join('-')).filter((word) => /\p{L}/u.test(word));

  if (HOW_TO.test(text)) {
    // "how to brew better coffee at home": the subject is the gerund ("brewing better coffee at home").
    const rest = mid.slice(2);
    const verb = rest[0];
    const gerundForm = verb ? [{ ...verb, text: gerund(verb.text.toLowerCase()) }, ...rest.slice(1)] : rest;
    const subject = join(gerundForm) || 'the subject';
    return {
      kind: 'howto',
      text,
      subject,
      plural: false,
      how: midText.replace(/^How/, 'how'),
      question: null,
      title: titleCase(text),
      titleSubject: titleCase(subject),
      phrases,
      words,
      framed: false,
    };
  }
  if (isQuestion) {
    const question = midText.charAt(0).toLowerCase() + midText.slice(1);
    return {
      kind: 'question',
      text,
      subject: phrases[0] ?? question.replace(/\?$/, ''),
      plural: false,
      how: null,
      question,
      title: titleCase(text),
      titleSubject: null,
      phrases,
      words,
      framed: false,
    };
  }
  return {
    kind: 'subject',
    text,
    subject: midText,
    plural: isPlural(tagged),
    how: null,
    question: null,
    title: titleCase(text),
    titleSubject: titleCase(text),
    phrases,
    words,
    framed: isFramed(text),
  };
}

/**
 * Whether a subject phrase is plural: its head noun (the last noun before a preposition or
 * conjunction) is plural, or it joins two nouns with "and".
 */
function isPlural(words: readonly TaggedWord[]): boolean {
  let head: TaggedWord | null = null;
  for (const [i, word] of words.entries()) {
    if (word.pos === 'ADP' || word.pos === 'SCONJ' || word.pos === 'PUNCT') break;
    if (word.pos === 'CCONJ' && word.text.toLowerCase() === 'and' && head && words.slice(i + 1).some((w) => w.pos === 'NOUN' || w.pos === 'PROPN')) return true;
    if (word.pos === 'NOUN' || word.pos === 'PROPN') head = word;
  }
  if (!head) return false;
  const lower = head.text.toLowerCase();
  return head.lemma !== lower && (/s$/.test(lower) || !/s$/.test(head.lemma));
}

/** A phrase (a topic, a source heading) as it reads mid-sentence; see midSentenceWord. */
export function midSentence(text: string, sourceText = ''): string {
  const titleCaseText = isTitleCase(text);
  const tagged = tagWords(text, { lowerAll: titleCaseText });
  return join(tagged.map((word, i) => ({ ...word, text: midSentenceWord(word, i === 0, titleCaseText, sourceText, tagged[i + 1]) })));
}
