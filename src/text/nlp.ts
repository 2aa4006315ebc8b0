/**
 * Part-of-speech tagging and stemming for English, through wink-nlp and its light English
 * model (no network, no native code). The model is loaded on first use, not at import, so
 * processes that never write a post (the admin CLI, the extractor) do not pay for it.
 */

import { createRequire } from 'node:module';
import type { ItsHelpers, Model, WinkMethods } from 'wink-nlp';

/** A tagged word: Universal Dependencies part of speech (NOUN, PROPN, VERB, ADJ, ...). */
export interface TaggedWord {
  /** As written in the text. */
  text: string;
  pos: string;
  /** Dictionary form, lower case ("tips" -> "tip", "roasted" -> "roast"). */
  lemma: string;
  /** The tagger's lexicon does not know the word (in lower case): often a name or a code. */
  unknown: boolean;
  /** Space before the word in the text. */
  spaceBefore: boolean;
}

const require = createRequire(import.meta.url);

/**
 * wink-nlp adds every word it has not seen to its vocabulary, for the life of the instance:
 * past this many additions the instance is replaced, so a long-running server cannot grow it
 * without bound.
 */
const MAX_LEARNED_WORDS = 200_000;
const OOV_PROBE = 'qxzvjqxzvjwk';

interface Tagger {
  nlp: WinkMethods;
  its: ItsHelpers;
  /** Vocabulary size of the model as loaded: ids past it are words it learned since. */
  known: number;
}

let model: Model | null = null;
let tagger: Tagger | null = null;

function loadModel(): Model {
  model ??= require('wink-eng-lite-web-model') as Model;
  return model;
}

function getTagger(): Tagger {
  if (!tagger) {
    const winkNLP = require('wink-nlp') as (model: Model, pipe?: string[]) => WinkMethods;
    const nlp = winkNLP(loadModel(), ['sbd', 'pos']);
    const known = nlp.readDoc(OOV_PROBE).tokens().out(nlp.its.uniqueId) as unknown as number[];
    tagger = { nlp, its: nlp.its, known: known[0]! };
  }
  return tagger;
}

/** A word written with a leading capital only ("Remote", not "SAML", "OpenID" or "V60"). */
const CAPITALIZED = /^\p{Lu}[\p{Ll}'’-]*$/u;

/**
 * Tags `text`. The light model reads a capital as a strong sign of a name ("Use water" becomes
 * a proper noun), so the words the caller marks as possibly ordinary (a sentence's first word,
 * every word of a title-case topic) are tagged in lower case and reported as written.
 */
export function tagWords(text: string, { lowerFirst = true, lowerAll = false } = {}): TaggedWord[] {
  const t = getTagger();
  let first = true;
  const input = text.replace(/\S+/g, (word) => {
    const lower = (lowerAll || (lowerFirst && first)) && CAPITALIZED.test(word);
    first = false;
    return lower ? word.toLowerCase() : word;
  });
  const doc = t.nlp.readDoc(input);
  const tokens = doc.tokens();
  const values = tokens.out(t.its.value) as string[];
  const pos = tokens.out(t.its.pos) as string[];
  const lemmas = tokens.out(t.its.lemma as unknown as typeof t.its.value) as (string | null)[];
  const ids = tokens.out(t.its.uniqueId) as unknown as number[];
  const spaces = tokens.out(t.its.precedingSpaces) as string[];
  const words: TaggedWord[] = [];
  let cursor = 0;
  for (let i = 0; i < values.length; i++) {
    if (pos[i] === 'SPACE') continue;
    const value = values[i]!;
    // The text as written (case restored) at the token's place in the input.
    const at = input.indexOf(value, cursor);
    const written = at === -1 ? value : text.slice(at, at + value.length);
    if (at !== -1) cursor = at + value.length;
    // The model has no lemma for some tokens ("cannot" before a comma): the word is its own.
    words.push({ text: written, pos: pos[i]!, lemma: (lemmas[i] ?? value).toLowerCase(), unknown: doc.isOOV(value.toLowerCase()), spaceBefore: (spaces[i] ?? '') !== '' });
  }
  if (Math.max(0, ...ids) > t.known + MAX_LEARNED_WORDS) tagger = null;
  return words;
}

/**
 * Tags several texts in one pass of the tagger (much cheaper than one call each), each as
 * tagWords(text) would: its first word tagged in lower case.
 */
export function tagMany(texts: readonly string[]): TaggedWord[][] {
  if (texts.length === 0) return [];
  const SEPARATOR = '\n\n';
  const lowered = texts.map((text) => text.replace(/^\s*\S+/, (word) => (CAPITALIZED.test(word.trim()) ? word.toLowerCase() : word)));
  const joined = lowered.join(SEPARATOR);
  const words = tagWords(joined, { lowerFirst: false });
  const result: TaggedWord[][] = texts.map(() => []);
  let index = 0;
  let end = lowered[0]!.length;
  let offset = 0;
  for (const word of words) {
    const at = joined.indexOf(word.text, offset);
    offset = at === -1 ? offset : at + word.text.length;
    while (index < texts.length - 1 && at >= end) {
      index++;
      end += SEPARATOR.length + lowered[index]!.length;
    }
    const start = end - lowered[index]!.length;
    // Report words as written (the first word's capital restored).
    const written = at === -1 ? word.text : texts[index]!.slice(at - start, at - start + word.text.length);
    result[index]!.push({ ...word, text: written || word.text, spaceBefore: result[index]!.length === 0 ? false : word.spaceBefore });
  }
  return result;
}

/** Porter2 stem of a lower-case word (the model's own stemmer). */
export function stem(word: string): string {
  const addon = (loadModel().addons as { stem?: (word: string) => string }).stem;
  return addon ? addon(word) : word;
}
