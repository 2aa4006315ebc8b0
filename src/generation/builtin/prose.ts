/**
 * Prose rules of the builtin writer: how the sources' sentences are joined (transitions, never
 * a sentence cut in two), what a section heading and a tag may be (a phrase about the topic, a
 * noun phrase that names a subject), and which sentence can close a post.
 */

import { tagWords } from '../../text/nlp.js';
import { nounPhrases } from '../../text/phrases.js';
import { STOPWORDS } from '../../text/stopwords.js';
import { isUnitOfMeasurement, usageByPart } from '../../text/wordnet.js';

/** Connectives that add a point to the one before: true whatever the two sentences say. */
export const TRANSITIONS = ['Also', 'In addition', 'Beyond that', 'On top of that', 'Moreover'] as const;

/** Leads into the sentence the conclusion closes on (a full sentence follows the colon). */
export const TAKEAWAY_LEAD = 'If one point is to stay with you, let it be this:';

/** A sentence that already leans on the one before, or that must keep its first word as written. */
const OWN_CONNECTIVE =
  /^(?:also|in addition|beyond that|on top of that|besides|likewise|however|but|and|or|so|yet|still|then|next|first|second|third|finally|for example|for instance|in short|moreover|further|furthermore|instead|otherwise|meanwhile|similarly|that said|even so|as a result|because|since|although|though|while|when|once|after|before|if|unless)\b/i;
const START_AS_WRITTEN = /^["“‘(\d]|^\p{Lu}{2}|^I\b/u;

/** Sentences one transition can open: not a connective already, and a first word that can lose its capital. */
export function takesTransition(sentence: string): boolean {
  if (OWN_CONNECTIVE.test(sentence) || START_AS_WRITTEN.test(sentence) || !/^\p{Lu}\p{Ll}/u.test(sentence)) return false;
  const first = tagWords(sentence.split(/\s+/, 3).join(' '))[0];
  // A name keeps its capital, and "Also, Lisbon ..." reads as well as any.
  return first !== undefined && first.pos !== 'PROPN' && !first.unknown;
}

/** "Also, store them ..." from "Store them ...". */
export function withTransition(sentence: string, transition: string): string {
  return `${transition}, ${sentence.charAt(0).toLowerCase()}${sentence.slice(1)}`;
}

/** The transition a sentence was given, if any ("Also, ..." -> "Also"). */
export function transitionOf(sentence: string): string | null {
  return TRANSITIONS.find((t) => sentence.startsWith(`${t}, `)) ?? null;
}

/** The source's sentence again, without the transition the writer put before it. */
export function withoutTransition(sentence: string): string {
  const transition = transitionOf(sentence);
  if (!transition) return sentence;
  const rest = sentence.slice(transition.length + 2);
  return `${rest.charAt(0).toUpperCase()}${rest.slice(1)}`;
}

const LIST_WORD = new Set(['NOUN', 'PROPN', 'ADJ', 'NUM', 'DET']);
/** Items of a list that names things: a few nouns and their modifiers each. */
const MAX_ITEM_WORDS = 3;
const MIN_LIST_ITEMS = 3;

/**
 * A sentence that ends in a list of three things or more ("... is water, grind size, ratios and
 * freshness."), as a closing line must not: read back from its end, items split at commas and
 * "and"/"or", each of a few nouns and modifiers (a verb in an item makes it a step, not a name).
 */
export function listsThings(sentence: string): boolean {
  const words = tagWords(sentence.trim().replace(/[.?!]+$/, ''));
  const items: (typeof words)[] = [[]];
  for (const word of words) {
    if (word.text === ',' || (word.pos === 'CCONJ' && /^(?:and|or)$/i.test(word.text))) {
      if (items.at(-1)!.length > 0) items.push([]);
    } else items.at(-1)!.push(word);
  }
  if (items.length < MIN_LIST_ITEMS || !/,/.test(sentence)) return false;
  let count = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    const nominal = item.length > 0 && item.length <= MAX_ITEM_WORDS && item.every((w) => LIST_WORD.has(w.pos));
    // The first item is what ends the clause before the list ("... is water"): its last word names it.
    const opening = item.length > 0 && ['NOUN', 'PROPN'].includes(item.at(-1)!.pos);
    if (nominal) count++;
    else {
      if (opening) count++;
      break;
    }
  }
  return count >= MIN_LIST_ITEMS;
}

/** Content words of a heading (articles and other stopwords left out). */
export const contentWords = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}'’-]+/u)
    .filter((w) => w && !STOPWORDS.has(w));

/** A heading of one content word ("Soil", "Square Metre" counts as a unit, see below) says nothing about the topic. */
export function isBareHeading(title: string): boolean {
  const words = contentWords(title);
  return words.length <= 1 || isUnitOfMeasurement(words.join(' '));
}

/** Mostly a verb in general English ("rest", "care"): not a tag on its own. */
function mostlyVerb(word: string): boolean {
  const usage = usageByPart(word);
  return usage.verb > 0 && usage.verb >= usage.noun * 0.6;
}

/**
 * A tag names what a post is about: a noun phrase of at most three words, its head a noun, no
 * figures, no unit of measurement ("square metre", "mm"), no stopword alone, no word that is
 * mostly a verb alone ("rest").
 */
export function isTagPhrase(tag: string): boolean {
  const lower = tag.toLowerCase().trim();
  const words = lower.split(/\s+/);
  if (lower.length < 2 || lower.length > 40 || words.length > 3 || /\d/.test(lower)) return false;
  if (words.every((w) => STOPWORDS.has(w))) return false;
  if (isUnitOfMeasurement(lower) || words.some((w) => isUnitOfMeasurement(w))) return false;
  if (words.length === 1 && mostlyVerb(lower)) return false;
  const phrases = nounPhrases(tagWords(lower, { lowerAll: true }), { heading: true });
  return phrases.some((p) => p.text.toLowerCase() === lower);
}
