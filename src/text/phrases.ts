/**
 * Noun phrases from tagged words: what a key term, a heading or a tag may be. A phrase is a run
 * of adjectives and nouns ending in a noun; it never starts with a stopword or a number, and
 * its head is never a verb or a stopword.
 */

import type { TaggedWord } from './nlp.js';
import { STOPWORDS } from './stopwords.js';

export interface NounPhrase {
  /** As it reads mid-sentence: "grind size", "OpenID Connect providers". */
  text: string;
  /** Comparison key: lower case, head in its dictionary form ("light roast"). */
  key: string;
  /** Lower-case dictionary form of the head noun. */
  head: string;
}

const NOMINAL = new Set(['NOUN', 'PROPN']);
const MODIFIER = new Set(['ADJ', 'NOUN', 'PROPN', 'NUM']);
const MAX_WORDS = 3;
const OBJECT_PRONOUNS = new Set(['them', 'it', 'him', 'her', 'us', 'me']);

interface Word {
  text: string;
  pos: string;
  lemma: string;
  unknown: boolean;
  first: boolean;
}

/**
 * A base-form "verb" between an article, adjective or number and a noun ("the right grind
 * size"), or opening a heading before a noun (`heading`: "Grind size"), modifies the noun.
 */
export function nounModifiers(tagged: readonly TaggedWord[], heading = false): TaggedWord[] {
  return tagged.map((word, i) => {
    const before = tagged[i - 1];
    const after = tagged[i + 1];
    const baseVerb = word.pos === 'VERB' && word.lemma === word.text.toLowerCase();
    const between = (before !== undefined && ['DET', 'ADJ', 'NUM'].includes(before.pos)) || tagged[i - 2]?.pos === 'DET';
    return baseVerb && after?.pos === 'NOUN' && (between || (heading && i === 0)) ? { ...word, pos: 'NOUN' } : word;
  });
}

/** Words joined by a hyphen without spaces ("pour-over", "medium-fine") become one word. */
function mergeHyphenated(words: readonly TaggedWord[]): Word[] {
  const merged: Word[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const previous = merged.at(-1);
    const next = words[i + 1];
    if (word.text === '-' && !word.spaceBefore && previous && next && !next.spaceBefore && /\p{L}/u.test(next.text)) {
      previous.text += `-${next.text}`;
      previous.lemma += `-${next.lemma}`;
      previous.pos = next.pos === 'ADJ' ? 'ADJ' : 'NOUN';
      previous.unknown = false;
      i++;
      continue;
    }
    merged.push({ text: word.text, pos: word.pos, lemma: word.lemma, unknown: word.unknown, first: merged.length === 0 || /^[.!?]$/.test(merged.at(-1)!.text) });
  }
  return merged;
}

const isStop = (word: Word) => STOPWORDS.has(word.text.toLowerCase()) || STOPWORDS.has(word.lemma);
const isPluralNoun = (word: Word) => word.pos === 'NOUN' && word.lemma !== word.text.toLowerCase() && /s$/i.test(word.text);
const hasLetters = (text: string) => /\p{L}{2,}/u.test(text);

/** A word as it reads mid-sentence: a capital that only marks a sentence start is dropped. */
function midSentence(word: Word): string {
  if (word.first && /^\p{Lu}[\p{Ll}'’-]*$/u.test(word.text) && !word.unknown && word.pos !== 'PROPN') return word.text.toLowerCase();
  return word.text;
}

function phraseOf(run: readonly Word[]): NounPhrase | null {
  let words = [...run];
  while (words.length && (words[0]!.pos === 'NUM' || isStop(words[0]!) || !hasLetters(words[0]!.text))) words.shift();
  while (words.length && !NOMINAL.has(words.at(-1)!.pos)) words.pop();
  if (words.length === 0) return null;
  words = words.slice(-MAX_WORDS);
  const head = words.at(-1)!;
  if (isStop(head) || !hasLetters(head.text) || head.text.length < 3) return null;
  // Only the words after the last stopword or bare number belong to the phrase.
  let start = 0;
  words.forEach((w, i) => {
    if (isStop(w) || /^\d+$/.test(w.text)) start = i + 1;
  });
  words = words.slice(start);
  if (words.length === 0) return null;
  return {
    text: words.map(midSentence).join(' '),
    key: [...words.slice(0, -1).map((w) => w.text.toLowerCase()), head.lemma].join(' '),
    head: head.lemma,
  };
}

/**
 * The noun phrases of tagged text, in order. A base-form verb between an article or adjective
 * and a noun ("the right grind size") is a noun modifier; so is one opening a heading or topic
 * before a noun (`heading`: "Grind size", where the tagger sees an imperative).
 */
export function nounPhrases(tagged: readonly TaggedWord[], { heading = false } = {}): NounPhrase[] {
  const words = mergeHyphenated(nounModifiers(tagged, heading));
  const phrases: NounPhrase[] = [];
  let run: Word[] = [];
  const flush = () => {
    const phrase = run.length ? phraseOf(run) : null;
    if (phrase) phrases.push(phrase);
    run = [];
  };
  for (const [i, word] of words.entries()) {
    const next = words[i + 1];
    // "in order to" is a preposition, not an order.
    if (word.text.toLowerCase() === 'order' && words[i - 1]?.text.toLowerCase() === 'in' && next?.text.toLowerCase() === 'to') {
      flush();
      continue;
    }
    // A plural "noun" followed by a noun, article, pronoun, adjective or number is a verb the
    // tagger missed ("size controls extraction", "scorches light roasts", "damages them").
    const verbLike =
      isPluralNoun(word) &&
      next !== undefined &&
      (['NOUN', 'DET', 'NUM'].includes(next.pos) || (next.pos === 'ADJ' && next.text.toLowerCase() !== 'such') || OBJECT_PRONOUNS.has(next.text.toLowerCase()));
    if (MODIFIER.has(word.pos) && !verbLike) run.push(word);
    else flush();
  }
  flush();
  return phrases;
}
