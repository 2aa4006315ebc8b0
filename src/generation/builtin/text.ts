/** Text helpers of the builtin composer: word counts, templates, casing, reading source prose. */

import { STOPWORDS } from '../../text/stopwords.js';

/** Bounds the work per passage, so a huge chunk cannot slow the composer down. */
const MAX_PASSAGE_CHARS = 5000;

/** Letters and digits, Latin and beyond; the General Punctuation block (— … “) is not a word. */
export const WORD_PATTERN = /[A-Za-z0-9\u00C0-\u1FFF\u2070-\uFFFF]+(?:['’-][A-Za-z0-9\u00C0-\u1FFF\u2070-\uFFFF]+)*/g;

/** Words as a reader counts them: Markdown markers and punctuation do not count. */
export function countWords(text: string): number {
  return text.match(WORD_PATTERN)?.length ?? 0;
}

export function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (placeholder, key: string) => vars[key] ?? placeholder);
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The topic as it reads mid-sentence: an ordinary first word loses its capital ("Brewing coffee"
 * becomes "brewing coffee"), a name keeps it ("Kubernetes autoscaling"). A word counts as ordinary
 * when it is a function word, a gerund, or the sources themselves write it in lower case.
 */
export function midSentence(topic: string, sourceText: string): string {
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
export function titleCase(text: string): string {
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

export function contract(text: string): string {
  return CONTRACTIONS.reduce((acc, [pattern, replacement]) => acc.replace(pattern, replacement), text);
}

/** FNV-1a: a stable, cheap seed so the same topic always picks the same phrasing. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export function pick<T>(items: readonly T[], index: number): T {
  return items[index % items.length];
}

export function clipWords(text: string, maxWords: number): string {
  const words = text.split(' ');
  return words.length <= maxWords ? text : `${words.slice(0, maxWords).join(' ').replace(/[,;:.]$/, '')}…`;
}

/** Source text as plain prose: code blocks dropped, Markdown markers removed, headings ended. */
export function plainText(markdown: string): string {
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

export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?]["”’)\]]?)\s+(?=["“‘(]?[\p{Lu}\p{N}])/u)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== '');
}

/** Case-sensitive whole-word search. */
export function containsWord(text: string, word: string): boolean {
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + 1)) {
    const before = text.charAt(at - 1);
    const after = text.charAt(at + word.length);
    if (!/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after)) return true;
  }
  return false;
}

/** Content words: lower case, no stopwords, no bare numbers. */
export function keywordsOf(words: readonly string[], minLength: number): string[] {
  const keywords: string[] = [];
  for (const word of words) {
    const lower = word.toLowerCase();
    if (lower.length >= minLength && !STOPWORDS.has(lower) && !/^\d+$/.test(lower)) keywords.push(lower);
  }
  return keywords;
}

export function tokens(text: string, minLength: number): string[] {
  return keywordsOf(text.match(WORD_PATTERN) ?? [], minLength);
}

/** Most frequent first; ties keep first appearance, so the ranking is deterministic. */
export function rankByFrequency(words: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  return [...counts.keys()].sort((a, b) => counts.get(b)! - counts.get(a)!);
}

export function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
