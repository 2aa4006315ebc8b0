/**
 * Which retrieved passages may ground a post. Full-text search ranks whatever shares a word
 * with the topic ("Remote work tips" finds a coffee guide because "V60 filters work best"), so
 * a passage grounds a post only when it is about the topic:
 *
 * - it covers the topic's terms: at least WINDOW_FLOOR of their weight within two consecutive
 *   sentences (with the headings they sit under), or PASSAGE_FLOOR anywhere in it. A term's
 *   weight is 1, half for a verb or adverb and for words after "for", "at" or "with" (who it is
 *   for, where: "... for new managers", "... at home"), and nothing for words that frame a post
 *   rather than name its subject ("tips", "guide", "benefits");
 *   A passage holding the whole of the topic's main noun phrase is relevant too, when the rest
 *   of the topic only weighs half ("coffee" for "brewing better coffee at home");
 * - its search score is at least SCORE_FLOOR of the best relevant passage's;
 * - it is not a copy of a passage already kept (the same file uploaded twice, a .doc beside
 *   its .docx, chunks that overlap): one whose sentences were already seen is dropped.
 *
 * Words are compared as the index compares them: lower case, stemmed, Chinese and Japanese
 * segmented; a token with inner punctuation (`1:16`, `pour-over`) must match as a phrase.
 */

import { queryTerms } from '../knowledge/search.js';
import { nounModifiers, nounPhrases } from '../text/phrases.js';
import { tagMany, tagWords, type TaggedWord } from '../text/nlp.js';
import { STOPWORDS } from '../text/stopwords.js';
import { narrowerByLevel, nounSenses, sameMeaningTerms, usageByPart, usageCount } from '../text/wordnet.js';
import { lightStem, parsePassage, sentenceKey, stemsOf, wordsOf, type SourceUnit } from './sources.js';
import type { GenerationRequest, Passage } from './types.js';

export const WINDOW_FLOOR = 0.6;
export const PASSAGE_FLOOR = 0.8;
export const SCORE_FLOOR = 0.2;
/** A document whose title and headings name this share of the topic... */
export const STRUCTURE_FLOOR = 0.5;
/** ...or whose passages together name this share of it, is about the topic. */
export const DOCUMENT_FLOOR = 0.75;
/** A document whose title and headings name this share of the topic is about it, its head word named or not. */
export const STRUCTURE_NAMES_TOPIC = 0.6;
/** Sentences that must name the topic's head noun when no title or heading does. */
export const HEAD_MENTIONS = 2;
/** Passages naming some of the topic that make a document about it, when they cover SEVERAL_FLOOR of it together. */
export const SEVERAL_PASSAGES = 3;
export const SEVERAL_FLOOR = 0.5;
/** A document whose best passage scores below this share of the best relevant document's is a side mention. */
export const DOCUMENT_SCORE_FLOOR = 0.45;
/**
 * A word used this often in WordNet's sense-tagged corpus is a generic one ("care", "water",
 * "history", "learn", "work", "home"): it names no particular subject, so it never makes a
 * document relevant on its own, nor is it the head of a topic that has a more particular noun.
 */
export const GENERIC_USAGE = 80;
/** A capitalised word of the topic used at most this often is a name (a product, a place, a person). */
export const NAME_USAGE = 2;
/** Rare words of the topic (NAME_USAGE) a document must name to be about it on their strength. */
export const RARE_TERMS = 2;
/** A passage whose sentences were already seen, for this share of its text, is a duplicate. */
const DUPLICATE_SHARE = 0.8;

/** Words that frame a post rather than name its subject (compared by lemma). */
const FRAMING = new Set(
  `tip trick guide guidebook handbook introduction intro basic basics beginner newbie benefit advantage step reason idea
  overview primer tutorial checklist lesson secret fact essential ultimate complete practical quick simple easy top
  everything anything explainer explained question answer thought note hack dos don'ts list mistake way thing highlight
  roundup recap faq`.split(/\s+/),
);
/** After these, the topic says who it is for or where, not what it is about. */
const SECONDARY_AFTER = new Set(['for', 'at', 'with']);
const WEAK_POS = new Set(['VERB', 'ADV', 'AUX']);

export interface TopicTerm {
  /** Stems, in order: several for a phrase. */
  stems: string[];
  weight: number;
  /** A noun in the topic ("remote work"): the same word used as a verb ("V60 filters work best") does not count. */
  noun: boolean;
  /** A verb or adverb of the topic ("choosing", "bloom"): it counts only in a sentence that also holds another term. */
  weak: boolean;
  /**
   * Words naming a kind of what the noun names (WordNet: "vegetables" -> tomato, "containers"
   * -> pot), as stems, by their first stem: a passage using one is about the term too.
   */
  narrower: ReadonlyMap<string, readonly string[][]>;
  /** Of those, the synonyms and direct kinds (one level down: "hive" for "beehive"), as stems. */
  close: readonly string[][];
  /** Other words for the same thing, as stems: synonyms and derived forms ("cyclist": cycle, biker). */
  same: readonly string[][];
  /** The head noun of the topic's main noun phrase: what the topic is about. */
  head: boolean;
  /** A frequent word that names no particular subject (GENERIC_USAGE). */
  generic: boolean;
  /** A rare capitalised word: a name the topic is about ("Lisbon", "Larkspur"). */
  name: boolean;
  /** An adjective ("leaky"): it qualifies the subject rather than naming it. */
  adjective: boolean;
  /** A word or phrase as rare as a name (NAME_USAGE), naming a particular thing ("self-assessment", "chickpea"). */
  rare: boolean;
  /**
   * The verb a how-to topic is about ("compost" in "how to compost at home"): it counts only
   * where used as a verb or its "-ing" noun ("composting"), not as the noun of the same spelling
   * ("fresh compost" in a guide to potting houseplants).
   */
  verb?: boolean;
}

export interface TopicProfile {
  terms: TopicTerm[];
  total: number;
  /**
   * A topic joining two subjects ("comment moderation and trackback spam in BlogCFC") is also
   * covered by a passage on either one (with what they share: "... in BlogCFC").
   */
  alternatives: TopicProfile[];
  /**
   * The topic's main noun phrase ("coffee" in "brewing better coffee at home"), when everything
   * else in it weighs half (verbs, "for ..."/"at ..." phrases): a passage holding all of it is
   * about the topic too.
   */
  core: TopicProfile | null;
  /** The particular nouns right before a generic head, which give it its subject ("tomato" in "potted tomato plants"). */
  headModifiers: TopicTerm[];
  /**
   * The words right before the head that say which one the topic means: its nouns ("water" in
   * "water safety", "release" in "release planning") and, before a generic head, its particular
   * adjectives ("indoor plants"). A document about the topic names each beside the head.
   */
  headQualifiers: TopicTerm[];
  /**
   * The particular thing the topic does, when it opens with it ("watering" potted plants, "when
   * should I replace" a chain): a verb used less than GENERIC_USAGE times as a verb in WordNet's
   * corpus. "Keeping", "making", "getting", "choosing" do nothing particular.
   */
  activity: TopicTerm | null;
}

/** The two subjects of "A and B (in C)": "A in C" and "B in C"; none when the topic has no such "and". */
function alternativesOf(topic: string, tagged: readonly TaggedWord[]): string[] {
  const and = tagged.findIndex((w, i) => w.pos === 'CCONJ' && w.text.toLowerCase() === 'and' && i > 0 && (tagged[i - 1]!.pos === 'NOUN' || tagged[i - 1]!.pos === 'PROPN'));
  if (and === -1) return [];
  const left = tagged.slice(0, and).map((w) => w.text).join(' ');
  const rightWords = tagged.slice(and + 1);
  const preposition = rightWords.findIndex((w) => w.pos === 'ADP');
  const shared = preposition === -1 ? '' : rightWords.slice(preposition).map((w) => w.text).join(' ');
  const right = rightWords.map((w) => w.text).join(' ');
  return left && right ? [`${left} ${shared}`.trim(), right] : [];
}

/** The topic's terms, weighted (see the module comment). */
export function topicProfile(topic: string, split = true): TopicProfile {
  const tagged = nounModifiers(tagWords(topic, { lowerAll: isTitleCase(topic) }), true).map((word, i, all) => {
    // "Brewing better coffee", "Choosing the right grinder": a gerund with an object is a verb.
    const next = all[i + 1];
    const gerund = i === 0 && /ing$/i.test(word.text) && next !== undefined && ['DET', 'ADJ', 'PROPN', 'PRON'].includes(next.pos);
    if (gerund) return { ...word, pos: 'VERB' };
    // "Home decorating", "dog training": a gerund after a noun, ending the phrase, is its head noun
    // (a framing word after it ends the phrase too: "spring cleaning checklist").
    const before = all[i - 1];
    const ends = next === undefined || ['ADP', 'CCONJ', 'PUNCT'].includes(next.pos) || FRAMING.has(next.lemma) || FRAMING.has(next.text.toLowerCase());
    const nominal = word.pos === 'VERB' && /ing$/i.test(word.text) && before?.pos === 'NOUN' && ends;
    return nominal ? { ...word, pos: 'NOUN', lemma: word.text.toLowerCase() } : word;
  });
  const info = new Map<string, { pos: string; lemma: string; secondary: boolean }>();
  let secondary = false;
  // "Tips for better sleep": after framing words alone, "for" leads to the subject itself.
  let subjectSeen = false;
  for (const word of tagged) {
    const lower = word.text.toLowerCase();
    if ((word.pos === 'ADP' || word.pos === 'SCONJ') && SECONDARY_AFTER.has(lower) && subjectSeen) secondary = true;
    // "Caring for a cast-iron pan": a generic word is no subject yet, so "for" still leads to it.
    if ((word.pos === 'NOUN' || word.pos === 'PROPN' || word.pos === 'VERB') && !FRAMING.has(word.lemma) && !FRAMING.has(lower) && !isGeneric(word.lemma)) subjectSeen = true;
    if (!info.has(lower)) info.set(lower, { pos: word.pos, lemma: word.lemma, secondary });
  }
  const titleCase = isTitleCase(topic);
  const capitalised = new Set(
    topic
      .split(/\s+/)
      .slice(1)
      .map((word) => word.replace(/^[^\p{L}]+|[^\p{L}\p{N}]+$/gu, ''))
      .filter((word) => /^\p{Lu}/u.test(word))
      .map((word) => word.toLowerCase()),
  );
  const joined = compounds(topic, queryTerms(topic));
  // The words of a compound WordNet knows ("frying pan") are a noun, whatever the tagger made of them.
  for (const [last, compound] of joined) {
    for (const word of [compound.split(' ')[0]!, last]) {
      const known = info.get(word);
      if (known) info.set(word, { ...known, pos: 'NOUN' });
    }
  }
  let terms = queryTerms(topic).map((words) => {
    const first = info.get(words[0]!);
    const single = words.length === 1;
    // "5 mistakes", "in 6 steps": a small number counts what the post lists, not its subject.
    const framing = single && (FRAMING.has(words[0]!) || (first !== undefined && FRAMING.has(first.lemma)) || /^\d{1,3}$/.test(words[0]!));
    let weight = framing ? 0 : first?.secondary ? 0.5 : 1;
    if (single && first && WEAK_POS.has(first.pos)) weight /= 2;
    const noun = single && first !== undefined && (first.pos === 'NOUN' || first.pos === 'PROPN') && /^[a-z]+$/.test(words[0]!);
    const weak = single && first !== undefined && WEAK_POS.has(first.pos);
    const stems = words.flatMap((word) => stemsOf(word));
    const wordNet = noun && weight > 0 && first.pos === 'NOUN';
    const { byFirst: narrower, close } = wordNet ? narrowerStems(first.lemma, stems) : { byFirst: NONE, close: [] };
    // The last word of a compound WordNet knows ("frying pan", "fish tank") also goes by the compound's synonyms ("skillet", "aquarium").
    const compound = single ? (joined.get(words[0]!) ?? [...joined.values()].find((c) => c.split(' ')[0] === words[0])) : undefined;
    // Of the compound's synonyms, those that are not another form of one of its words ("opening" for "chess opening").
    const compoundStems = compound ? stemsOf(compound) : [];
    const compoundSame = compound ? sameMeaningTerms(compound).filter((word) => !stemsOf(word).some((stem) => compoundStems.includes(stem))) : [];
    const sameWords = [...(wordNet ? sameMeaningTerms(first.lemma) : []), ...compoundSame];
    const same = sameWords.map((word) => stemsOf(word)).filter((s) => s.length > 0 && s.join(' ') !== stems.join(' '));
    const generic = single && /^[a-z]+$/.test(words[0]!) && isGeneric(first?.lemma ?? words[0]!);
    // A generic noun or verb says less about the subject than a particular one.
    if (generic && first?.pos !== 'ADJ') weight /= 2;
    const name = single && !generic && ((capitalised.has(words[0]!) && !titleCase) || first?.pos === 'PROPN') && /^\p{L}/u.test(words[0]!) && usageCount(words[0]!) <= NAME_USAGE;
    const adjective = single && first?.pos === 'ADJ';
    const rare = !generic && !weak && weight >= 1 && words.every((word) => /^\p{L}/u.test(word)) && usageCount(words.join('-')) <= NAME_USAGE;
    return { stems, weight, noun, weak, narrower, close, same, head: false, generic, name, adjective, rare };
  });
  // A topic made only of framing words ("Tips and tricks") is about those words.
  if (terms.length > 0 && terms.every((term) => term.weight === 0)) terms = terms.map((term) => ({ ...term, weight: 1 }));
  terms = terms.filter((term) => term.weight > 0 && term.stems.length > 0);
  markHead(terms, tagged, info);
  // A generic head ("history" in "a short history of the bicycle") gives way to the topic's particular noun.
  // Only for a particular noun the generic one is "of" or "for": "history of the bicycle", "care for a tattoo"
  // (in "potted plants in summer" the plants stay the subject).
  const head = terms.find((term) => term.head);
  const headAt = head ? tagged.findIndex((word) => stemsOf(word.text)[0] === head.stems[0]) : -1;
  const preposition = headAt === -1 ? -1 : tagged.findIndex((word, i) => i > headAt && word.pos === 'ADP');
  const complement = preposition !== -1 && ['of', 'for'].includes(tagged[preposition]!.text.toLowerCase());
  const after = new Set(complement ? tagged.slice(preposition + 1).flatMap((word) => stemsOf(word.text)) : []);
  const particular = terms.find((term) => term.noun && !term.generic && !term.weak && term.weight >= 1 && after.has(term.stems[0]!));
  if (head?.generic && particular) {
    head.head = false;
    particular.head = true;
  }
  // "Learning to swim": after a generic verb and "to", the verb is the subject.
  for (let i = 0; i + 2 < tagged.length; i++) {
    const [verb, to, subject] = [tagged[i]!, tagged[i + 1]!, tagged[i + 2]!];
    if (verb.pos !== 'VERB' || !isGeneric(verb.lemma) || to.text.toLowerCase() !== 'to' || subject.pos !== 'VERB') continue;
    const term = terms.find((t) => t.stems.length === 1 && t.stems[0] === stemsOf(subject.text)[0]);
    if (!term) continue;
    for (const t of terms) t.head = false;
    Object.assign(term, { head: true, weak: false, weight: Math.max(term.weight, 1) });
    break;
  }
  // A compound's first word is no head: "frying" in "frying pan" is the pan's.
  const firstOfCompound = terms.find((term) => term.head && term.stems.length === 1 && [...joined.values()].some((compound) => stemsOf(compound.split(' ')[0]!)[0] === term.stems[0]));
  if (firstOfCompound) {
    const compound = [...joined.entries()].find(([, c]) => stemsOf(c.split(' ')[0]!)[0] === firstOfCompound.stems[0])!;
    const last = terms.find((term) => term.stems.length === 1 && term.stems[0] === stemsOf(compound[0])[0]);
    if (last) {
      firstOfCompound.head = false;
      last.head = true;
    }
  }
  const alternatives = split ? alternativesOf(topic, tagged).map((part) => topicProfile(part, false)) : [];
  return {
    terms,
    total: terms.reduce((sum, term) => sum + term.weight, 0),
    alternatives,
    core: coreOf(terms, tagged),
    headModifiers: modifiersOfHead(terms, tagged),
    headQualifiers: qualifiersOfHead(terms, tagged, joined),
    activity: activityOf(terms, tagged),
  };
}

/** Words that may come before the verb a topic opens with: "how to", "when should I", "why do we". */
const BEFORE_ACTIVITY = new Set(['ADV', 'SCONJ', 'PART', 'AUX', 'PRON']);

/** See TopicProfile.activity. */
function activityOf(terms: readonly TopicTerm[], tagged: readonly TaggedWord[]): TopicTerm | null {
  const at = tagged.findIndex((word) => !BEFORE_ACTIVITY.has(word.pos));
  const verb = tagged[at];
  if (!verb || verb.pos !== 'VERB' || FRAMING.has(verb.lemma)) return null;
  const lemma = verb.lemma.toLowerCase();
  if (!/^[a-z]+$/.test(lemma) || Math.max(usageByPart(lemma).verb, usageByPart(lightStem(lemma)).verb) >= GENERIC_USAGE) return null;
  return terms.find((term) => term.stems.length === 1 && term.stems[0] === stemsOf(verb.text)[0]) ?? null;
}

const NONE: ReadonlyMap<string, readonly string[][]> = new Map();

function isGeneric(word: string): boolean {
  const lower = word.toLowerCase();
  if (!/^[a-z]+$/.test(lower) || FRAMING.has(lower)) return false;
  // "caring" -> "care", "learning" -> "learn": the tagger's lemma or the stem, whichever WordNet counts.
  return Math.max(usageCount(lower), usageCount(lightStem(lower))) >= GENERIC_USAGE;
}

/** Neighbouring words of the topic that WordNet knows as one noun ("frying pan", "fish tank"), by their last word. */
function compounds(topic: string, terms: string[][]): Map<string, string> {
  const text = wordsOf(topic).join(' ');
  const found = new Map<string, string>();
  for (let i = 0; i + 1 < terms.length; i++) {
    const [term, next] = [terms[i]!, terms[i + 1]!];
    const compound = `${term[0]} ${next[0]}`;
    if (term.length === 1 && next.length === 1 && text.includes(compound) && nounSenses(compound).length > 0) found.set(next[0]!, compound);
  }
  return found;
}
interface NarrowerStems {
  /** Every narrower word's stems, by first stem. */
  byFirst: ReadonlyMap<string, readonly string[][]>;
  /** Those of the synonyms and direct kinds (one level down: "hive" for "beehive"). */
  close: readonly string[][];
}

const narrowerCache = new Map<string, NarrowerStems>();

/** The stems of the words WordNet files under a noun, from one walk of its hyponyms (remembered per noun). */
function narrowerStems(lemma: string, own: readonly string[]): NarrowerStems {
  let found = narrowerCache.get(lemma);
  if (!found) {
    const byFirst = new Map<string, string[][]>();
    const close: string[][] = [];
    for (const { word, level } of narrowerByLevel(lemma)) {
      const stems = stemsOf(word);
      if (stems.length === 0 || stems.some((stem) => stem.length < 3) || stems.join(' ') === own.join(' ')) continue;
      const list = byFirst.get(stems[0]!) ?? [];
      list.push(stems);
      byFirst.set(stems[0]!, list);
      if (level <= 1) close.push(stems);
    }
    if (narrowerCache.size > 500) narrowerCache.clear();
    narrowerCache.set(lemma, (found = { byFirst, close }));
  }
  return found;
}

/**
 * Marks the head noun of the topic's main noun phrase (the first one that is not framing: "plants"
 * in "Watering potted plants in summer", "sleep" in "Tips for better sleep at home").
 */
function markHead(terms: TopicTerm[], tagged: readonly TaggedWord[], info: ReadonlyMap<string, { secondary: boolean }>): void {
  const termOf = (word: string) => {
    const [stem] = stemsOf(word);
    return terms.find((term) => term.stems.length === 1 && term.stems[0] === stem) ?? terms.find((term) => stem !== undefined && term.stems.includes(stem));
  };
  // The last noun of the first run of nouns that is the subject, not who it is for or where
  // ("at home", "for new managers") nor framing ("tips"): "home decorating", "young dog".
  const run: string[] = [];
  let head: string | undefined;
  for (const word of [...tagged, null]) {
    const lower = word?.text.toLowerCase() ?? '';
    const nominal = word !== null && (word.pos === 'NOUN' || word.pos === 'PROPN') && !FRAMING.has(word.lemma) && !FRAMING.has(lower) && !info.get(lower)?.secondary;
    if (nominal && termOf(lower)) run.push(lower);
    else if (run.length) {
      head = run.at(-1);
      break;
    }
  }
  // Else the verb of "how to compost at home", else the first noun phrase.
  const howTo = /^how\s+to\s+(\p{L}+)/iu.exec(tagged.map((w) => w.text).join(' '))?.[1];
  const phrase = nounPhrases(tagged, { heading: true })[0]?.text.split(' ').at(-1);
  const term = head ? termOf(head) : howTo ? termOf(howTo) : phrase ? termOf(phrase) : undefined;
  if (!term) return;
  term.head = true;
  if (!head && howTo && term.weak && term.stems.length === 1) term.verb = true;
  if (term.weak) Object.assign(term, { weak: false, weight: Math.max(term.weight, 1) });
}

/** A profile of some of a topic's terms alone (no alternatives, no core). */
function termsOnly(terms: TopicTerm[]): TopicProfile {
  return { terms, total: terms.reduce((sum, term) => sum + term.weight, 0), alternatives: [], core: null, headModifiers: [], headQualifiers: [], activity: null };
}

/** The particular nouns of the run of nouns ending at a generic head ("tomato" in "potted tomato plants"). */
function modifiersOfHead(terms: readonly TopicTerm[], tagged: readonly TaggedWord[]): TopicTerm[] {
  const head = terms.find((term) => term.head);
  if (!head?.generic || head.stems.length > 1) return [];
  const at = tagged.findIndex((word) => stemsOf(word.text)[0] === head.stems[0]);
  const modifiers: TopicTerm[] = [];
  for (let i = at - 1; i >= 0 && (tagged[i]!.pos === 'NOUN' || tagged[i]!.pos === 'PROPN'); i--) {
    const [stem] = stemsOf(tagged[i]!.text);
    const term = terms.find((t) => t.stems.length === 1 && t.stems[0] === stem);
    if (term && term.noun && !term.generic && !term.weak) modifiers.push(term);
  }
  return modifiers;
}

/**
 * The words of the run of nouns and adjectives ending at the head that say which one it is:
 * its nouns, and its particular adjectives when the head is generic ("indoor plants"; "new" or
 * "better" qualify nothing in particular). A compound WordNet knows ("rain barrel") goes by its
 * own synonyms ("water butt"), so its first word is not asked for beside the head.
 */
function qualifiersOfHead(terms: readonly TopicTerm[], tagged: readonly TaggedWord[], joined: ReadonlyMap<string, string>): TopicTerm[] {
  const head = terms.find((term) => term.head);
  // The English tagger's reading of a Spanish or German topic says nothing about which word qualifies which.
  if (!head || head.stems.length > 1 || !head.noun || !mostlyEnglish(tagged)) return [];
  const at = tagged.findIndex((word) => stemsOf(word.text)[0] === head.stems[0]);
  const compound = [...joined.entries()].find(([last]) => stemsOf(last)[0] === head.stems[0])?.[1];
  const qualifiers: TopicTerm[] = [];
  for (let i = at - 1; i >= 0 && ['NOUN', 'PROPN', 'ADJ'].includes(tagged[i]!.pos); i--) {
    const word = tagged[i]!;
    if (FRAMING.has(word.lemma) || FRAMING.has(word.text.toLowerCase())) break;
    const [stem] = stemsOf(word.text);
    if (compound !== undefined && i === at - 1 && stemsOf(compound.split(' ')[0]!)[0] === stem) continue;
    const term = terms.find((t) => t.stems.length === 1 && t.stems[0] === stem);
    if (!term || term.weak) continue;
    // Before a generic head, its particular nouns are its subject (headModifiers), not a sense to tell apart.
    if (term.adjective ? head.generic && !term.generic : term.noun && !head.generic) qualifiers.push(term);
  }
  return qualifiers;
}

/** Three words in four are English ones: stopwords, or words WordNet knows (any inflection). */
function mostlyEnglish(tagged: readonly TaggedWord[]): boolean {
  const words = tagged.map((word) => word.text.toLowerCase()).filter((word) => /^\p{L}+$/u.test(word));
  const known = words.filter((word) => STOPWORDS.has(word) || usageCount(word) > 0 || usageCount(lightStem(word)) > 0 || nounSenses(word).length > 0);
  return known.length >= words.length * 0.75;
}

function coreOf(terms: readonly TopicTerm[], tagged: readonly TaggedWord[]): TopicProfile | null {
  const main = nounPhrases(tagged, { heading: true }).find((phrase) => !FRAMING.has(phrase.head) || phrase.text.includes(' '));
  if (!main) return null;
  const words = main.text.split(' ');
  if (FRAMING.has(main.head)) words.pop();
  const stems = new Set(words.flatMap((word) => stemsOf(word)));
  const core = terms.filter((term) => term.stems.every((stem) => stems.has(stem)));
  const rest = terms.filter((term) => !core.includes(term));
  if (core.length === 0 || rest.some((term) => term.weight > 0.5)) return null;
  return termsOnly(core);
}

/** Most words capitalised: "Remote Work Tips for New Managers". */
export function isTitleCase(text: string): boolean {
  const words = text.match(/\p{L}{4,}/gu) ?? [];
  return words.length >= 2 && words.filter((word) => /^\p{Lu}/u.test(word)).length >= words.length * 0.75;
}

/** Text to match topic terms in: its stems, and (computed when first needed) those used as nouns. */
export interface MatchUnit {
  /** The text matched, when known (for words WordNet reads as a compound). */
  readonly text?: string;
  stems: string[];
  /** A title or heading: it names what the text under it is about, verbs included ("Watering"). */
  structural?: boolean;
  /** Stems of the words not tagged as verbs. */
  nouns(): ReadonlySet<string>;
  /** Stems of the words tagged as nouns (not adjectives: "free" advice is no kind of release). */
  properNouns(): ReadonlySet<string>;
}

/** `checkNouns` false: every word counts as a noun (headings, too short to tag reliably). */
export function matchUnit(text: string, checkNouns = true): MatchUnit {
  const stems = stemsOf(text);
  let tagged: NounSets | null = checkNouns ? null : { nouns: new Set(stems), properNouns: new Set(stems) };
  return {
    text,
    stems,
    structural: !checkNouns,
    nouns() {
      tagged ??= nounSets(tagWords(text));
      return tagged.nouns;
    },
    properNouns() {
      tagged ??= nounSets(tagWords(text));
      return tagged.properNouns;
    },
  };
}

/** True when `stems` holds the sequence (its stems next to each other for a phrase). */
function holdsSequence(stems: readonly string[], sequence: readonly string[]): boolean {
  const [first, ...rest] = sequence;
  for (let i = stems.indexOf(first!); i !== -1; i = stems.indexOf(first!, i + 1)) {
    if (rest.every((s, k) => stems[i + 1 + k] === s)) return true;
  }
  return false;
}

/**
 * True when the unit names the term: its own words, or a word for a kind of it ("tomatoes" for
 * "vegetables"); a noun of the topic counts only where it is used as a noun.
 */
function names(unit: MatchUnit, term: TopicTerm): boolean {
  return namesItself(unit, term) || namesKindOf(unit, term);
}

function namesItself(unit: MatchUnit, term: TopicTerm): boolean {
  if (holdsSequence(unit.stems, term.stems) && (!term.noun || unit.nouns().has(term.stems[0]!)) && (!term.verb || usedAsVerb(unit, term.stems[0]!))) return true;
  return term.same.some((sequence) => holdsSequence(unit.stems, sequence));
}

/** True when the unit uses the stem as a verb or an "-ing" word (a title or heading: any use). */
function usedAsVerb(unit: MatchUnit, stem: string): boolean {
  if (unit.structural || unit.text === undefined) return true;
  return tagWords(unit.text).some((word) => (word.pos === 'VERB' || /ing$/i.test(word.text)) && stemsOf(word.text)[0] === stem);
}

function namesKindOf(unit: MatchUnit, term: TopicTerm): boolean {
  if (term.narrower.size === 0) return false;
  for (let i = 0; i < unit.stems.length; i++) {
    const candidates = term.narrower.get(unit.stems[i]!);
    if (!candidates) continue;
    for (const sequence of candidates) {
      if (!sequence.every((s, k) => unit.stems[i + k] === s)) continue;
      if (sequence.length > 1 || (unit.properNouns().has(sequence[0]!) && !inOtherCompound(unit, i))) return true;
    }
  }
  return false;
}

const unitWords = new WeakMap<MatchUnit, string[]>();

/**
 * True when the word at `i` ends a compound WordNet knows as a noun of its own, which then is
 * what the text names ("coffee beans" are seeds, not beans the vegetable). Only called on a
 * word that matched as a single narrower word, so the compound is not a narrower one.
 */
function inOtherCompound(unit: MatchUnit & { text?: string }, i: number): boolean {
  if (i === 0 || unit.text === undefined) return false;
  let words = unitWords.get(unit);
  if (!words) unitWords.set(unit, (words = wordsOf(unit.text)));
  return nounSenses(`${words[i - 1]} ${words[i]}`).length > 0;
}

/** Share of the topic's weight that the units cover together (0-1), the best of its alternatives. */
export function coverage(profile: TopicProfile, units: readonly MatchUnit[]): number {
  if (profile.total === 0) return 0;
  const has = names;
  let covered = 0;
  for (const term of profile.terms) {
    // "Choosing ... size": a verb counts beside another term of the topic, in the same sentence.
    const found = term.weak
      ? units.some((unit) => has(unit, term) && (unit.structural || profile.terms.some((other) => other !== term && !other.weak && has(unit, other))))
      : units.some((unit) => has(unit, term));
    if (found) covered += term.weight;
  }
  return Math.max(covered / profile.total, ...profile.alternatives.map((alternative) => coverage(alternative, units)));
}

/** Units of a passage with what they match, and the headings above them as units too. */
export interface AnalysedUnit extends SourceUnit, Omit<MatchUnit, 'text'> {
  trailUnits: MatchUnit[];
}

export function analysePassage(text: string): AnalysedUnit[] {
  const headings = new Map<string, MatchUnit>();
  const headingUnit = (heading: string) => {
    let unit = headings.get(heading);
    if (!unit) headings.set(heading, (unit = matchUnit(heading, false)));
    return unit;
  };
  return parsePassage(text).map((unit) => {
    const stems = stemsOf(unit.text);
    const all = unit.kind === 'heading' ? { nouns: new Set(stems), properNouns: new Set(stems) } : null;
    const sets = () => all ?? nounCache.get(analysed) ?? tagNouns([analysed])[0]!;
    const analysed: AnalysedUnit = { ...unit, stems, structural: unit.kind === 'heading', nouns: () => sets().nouns, properNouns: () => sets().properNouns, trailUnits: unit.trail.map(headingUnit) };
    return analysed;
  });
}

interface NounSets {
  nouns: ReadonlySet<string>;
  properNouns: ReadonlySet<string>;
}

function nounSets(words: readonly TaggedWord[]): NounSets {
  return {
    nouns: new Set(words.filter((w) => !WEAK_POS.has(w.pos)).flatMap((w) => stemsOf(w.text))),
    properNouns: new Set(words.filter((w) => w.pos === 'NOUN' || w.pos === 'PROPN').flatMap((w) => stemsOf(w.text))),
  };
}

const nounCache = new WeakMap<AnalysedUnit, NounSets>();

/** Tags units in one pass of the tagger and remembers which of their words are used as nouns. */
function tagNouns(units: readonly AnalysedUnit[]): NounSets[] {
  const sets = tagMany(units.map((u) => u.text)).map(nounSets);
  units.forEach((unit, i) => nounCache.set(unit, sets[i]!));
  return sets;
}

/**
 * Tags, in one pass, the units of passages that hold one of the topic's noun terms: only they
 * can need the check (the tagger costs far more than anything else here).
 */
export function prepareNouns(profile: TopicProfile, units: readonly AnalysedUnit[]): void {
  const nounStems = new Set<string>();
  const collect = (p: TopicProfile) => {
    for (const term of p.terms) {
      if (term.noun) nounStems.add(term.stems[0]!);
      for (const [first, sequences] of term.narrower) if (sequences.some((sequence) => sequence.length === 1)) nounStems.add(first);
    }
    p.alternatives.forEach(collect);
    if (p.core) collect(p.core);
  };
  collect(profile);
  const pending = units.filter((unit) => unit.kind !== 'heading' && !nounCache.has(unit) && unit.stems.some((stem) => nounStems.has(stem)));
  if (pending.length) tagNouns(pending);
}

/**
 * Passages analysed once, not once per post: the relevance floor and the writer share the work,
 * and so do the posts of a batch, which draw on the same documents (on the same thread). The
 * analysis (and the nouns tagged in it later) depends on the text alone. The most recently used
 * passages are kept, up to ANALYSED_TEXT_BUDGET characters of text (their analysis takes about
 * ten times that in memory).
 */
const analysed = new Map<string, AnalysedUnit[]>();
let analysedChars = 0;
export const ANALYSED_TEXT_BUDGET = 2_000_000;

export function analysedPassage({ text }: Pick<Passage, 'text'>): AnalysedUnit[] {
  let units = analysed.get(text);
  if (units) {
    // The most recently used last: the first is the one to forget.
    analysed.delete(text);
    analysed.set(text, units);
    return units;
  }
  analysed.set(text, (units = analysePassage(text)));
  analysedChars += text.length;
  for (const [oldest] of analysed) {
    if (analysedChars <= ANALYSED_TEXT_BUDGET) break;
    analysed.delete(oldest);
    analysedChars -= oldest.length;
  }
  return units;
}

/**
 * How well a passage covers the topic: the best two-sentence window, the whole passage, and
 * whether a window holds all of the topic's core.
 */
export function passageCoverage(profile: TopicProfile, units: readonly AnalysedUnit[]): { window: number; passage: number; core: boolean } {
  let window = 0;
  let core = false;
  for (let i = 0; i < units.length && (window < 1 || (profile.core && !core)); i++) {
    const unit = units[i]!;
    const next = units[i + 1];
    const windowUnits = [...unit.trailUnits, unit, ...(next ? [next] : [])];
    window = Math.max(window, coverage(profile, windowUnits));
    if (profile.core && !core) core = coverage(profile.core, windowUnits) === 1;
  }
  const passage = coverage(profile, units);
  return { window, passage: Math.max(window, passage), core };
}

export function isRelevant(profile: TopicProfile, units: readonly AnalysedUnit[]): boolean {
  const { window, passage, core } = passageCoverage(profile, units);
  return window >= WINDOW_FLOOR || passage >= PASSAGE_FLOOR || core;
}

/**
 * The score the floors compare: BM25's. A hybrid search's fused rank (about 0.016-0.033 for any
 * passage) says too little about how well a passage matches; null for a passage only the vector
 * ranking found, which the floors leave to the words it holds.
 */
function floorScore(passage: Passage): number | null {
  return passage.lexicalScore === undefined ? passage.score : passage.lexicalScore;
}

/** A document's title as its file name gives it: "balcony-tomatoes.md" -> "balcony tomatoes". */
function fileTitle(fileName: string): string {
  return fileName.replace(/\.[^.]+$/, '').replace(/[-_.]+/g, ' ');
}

interface DocumentEvidence {
  fileId: string;
  passages: { passage: Passage; units: AnalysedUnit[] }[];
}

/**
 * Whether a document is about the topic, judged as a reader would from what the search found
 * of it: its title and headings, and its passages together.
 *
 * - It must name the topic's head noun somewhere (itself or a kind of it: "tomatoes" for
 *   "vegetables"), so a document sharing only modifiers and generic words ("home", "better")
 *   is not about "better sleep at home".
 * - Then any one of: two sentences hold most of the topic (WINDOW_FLOOR); one passage holds
 *   nearly all of it (PASSAGE_FLOOR) or its whole main noun phrase; its title and headings name
 *   at least half of it and its passages together most of it; or its passages together name
 *   nearly all of it (DOCUMENT_FLOOR).
 */
export interface DocumentJudgement {
  fileName: string;
  relevant: boolean;
  /** How the document names the topic's head noun: itself (prominently), a kind of it in its title or headings, in one sentence only, or not. */
  head: 'itself' | 'kind' | 'once' | null;
  /** Its title or a heading names the head noun (itself or a kind of it). */
  headInStructure: boolean;
  /** Coverage of the topic by the title and headings, by everything retrieved of it, by its best two sentences and by its best passage. */
  structure: number;
  spread: number;
  window: number;
  passage: number;
  core: boolean;
  /** Its best BM25 score (-1 when only a vector search found it), and how many passages the search found of it. */
  score: number;
  passages: number;
  /** It names what the topic does (TopicProfile.activity) where the head is generic, or there is no such need. */
  activity: boolean;
}

function judgeDocument(profile: TopicProfile, document: DocumentEvidence): DocumentJudgement {
  const units = document.passages.flatMap(({ units }) => units);
  const first = document.passages[0]!.passage;
  const title = matchUnit(fileTitle(first.fileName), false);
  const headings = new Map<string, MatchUnit>();
  for (const unit of units) {
    if (unit.kind === 'heading') headings.set(unit.text, unit);
    unit.trail.forEach((text, i) => headings.set(text, unit.trailUnits[i]!));
  }
  const structure = [title, ...headings.values()];
  const all = [...structure, ...units];
  let window = 0;
  let passage = 0;
  let core = false;
  for (const { units: passageUnits } of document.passages) {
    const found = passageCoverage(profile, passageUnits);
    window = Math.max(window, found.window);
    passage = Math.max(passage, found.passage);
    core ||= found.core;
  }
  const judgement: DocumentJudgement = {
    fileName: first.fileName,
    relevant: false,
    head: headNamed(profile, all, structure),
    headInStructure: headInStructure(profile, structure),
    structure: coverage(profile, structure),
    spread: coverage(profile, all),
    window,
    passage,
    core,
    score: Math.max(...document.passages.map(({ passage }) => floorScore(passage) ?? -1)),
    passages: document.passages.length,
    activity: true,
  };
  // A head named once makes the document about the topic only as its best source (see groundingPassages).
  // The head alone does not make a document about a topic that says more ("better sleep at
  // home" is not a camping list's sleeping bags): another of its nouns or modifiers must be named too.
  const head = profile.terms.find((term) => term.head);
  // Under a title or heading naming the head ("Fixing a Dripping Tap"), an adjective of the topic ("leaky") need not be named too.
  const othersAll = profile.terms.filter((term) => term !== head && !term.weak && term.weight >= 1);
  const others = judgement.headInStructure && othersAll.every((term) => term.adjective) ? [] : othersAll;
  const rest = head && others.length > 0 ? termsOnly(others) : null;
  // Named in one sentence only, the head must come with some other word of the topic ("car" in
  // "the fastest route by car" is not about buying a used car).
  // Generic words and adjectives ("a short history of ...") do not count as more of the topic.
  const rest_ = head && judgement.head === 'once' ? profile.terms.filter((term) => term !== head) : [];
  const besides = rest_.filter((term) => !term.generic && !term.adjective);
  const onceWithMore = rest_.length === 0 || (besides.length > 0 && coverage(termsOnly(besides), all) > 0);
  // Titles and headings naming most of the topic make up for its head ("weeknight recipes" for "weeknight dinners").
  const headOrTitle = judgement.head !== null || judgement.structure >= STRUCTURE_NAMES_TOPIC;
  const named = headOrTitle && onceWithMore && (rest === null || profile.alternatives.length > 0 || coverage(rest, all) > 0);
  // A one-word core ("car" in "buying a used car") is about the topic only where it is prominent:
  // named by the title or a heading, or in several sentences (or as the subject of a short note).
  // A core of generic words alone ("sleep" in "better sleep at home") names no particular subject.
  core &&= (profile.core?.terms.length ?? 0) > 1 || judgement.headInStructure || judgement.head === 'itself';
  core &&= !(profile.core?.terms.every((term) => term.generic) ?? false);
  judgement.core = core;
  // Several passages on the topic make a document about it, even when its head noun is named once.
  const several = document.passages.filter(({ units: passageUnits }) => coverage(profile, passageUnits.flatMap((unit) => [unit, ...unit.trailUnits])) > 0).length >= SEVERAL_PASSAGES;
  judgement.relevant =
    (named && (window >= WINDOW_FLOOR || passage >= PASSAGE_FLOOR || core || (judgement.structure >= STRUCTURE_FLOOR && judgement.spread >= WINDOW_FLOOR) || judgement.spread >= DOCUMENT_FLOOR)) ||
    (named && several && judgement.spread >= SEVERAL_FLOOR);
  // Every particular noun of the topic named, its head (itself, or a kind of it: "sourdough" for
  // "bread") in the title or a heading: the rest (verbs, adjectives, generic words: "making
  // walking boots last longer", "naturally leavened") only qualifies it.
  const nouns = profile.terms.filter((term) => term.noun && !term.generic && !term.weak && !term.adjective && term.weight >= 1);
  if (head && (judgement.head === 'itself' || judgement.head === 'kind') && judgement.headInStructure && nouns.includes(head) && nouns.every((term) => all.some((unit) => names(unit, term)))) judgement.relevant = true;
  // Where the document names the head, the words saying which one the topic means are named
  // with it: in the same sentence, row or heading, or in a title or heading above it ("the chain"
  // in a bicycle guide). A knife guide's "Safety" section, with a "sink of soapy water" under it,
  // is not about water safety. (Rare words and names, below, have no other sense to tell apart.)
  if (head && !qualifiedHead(head, profile.headQualifiers, title, units)) judgement.relevant = false;
  // Two rare words of the topic, most of those it has ("self-assessment" and "self-employed"),
  // named beside its head, name a particular subject as a name does.
  const rareTerms = profile.terms.filter((term) => term.rare);
  const rareNamed = rareTerms.filter((term) => all.some((unit) => names(unit, term)));
  if (judgement.head !== null && rareNamed.length >= RARE_TERMS && rareNamed.length * 2 >= rareTerms.length) judgement.relevant = true;
  // A rare name the topic is about ("Lisbon", "Larkspur 130"), named prominently, makes the document about it.
  const nameTerms = profile.terms.filter((term) => term.name);
  if (nameTerms.length > 0 && nameTerms.every((term) => namedProminently(term, structure, units))) judgement.relevant = true;
  // Generic words shared by chance ("care", "water", "history") never make a document relevant on their own.
  // (A particular head must be named anyway; a generic one needs a particular word of the topic beside it.)
  const particular = head?.generic ? profile.terms.filter((term) => !term.generic && !term.weak) : [];
  if (particular.length > 0 && !particular.some((term) => all.some((unit) => names(unit, term)))) judgement.relevant = false;
  // A generic head takes its subject from the nouns before it ("tomato" in "potted tomato plants"):
  // a document not naming them is about other plants.
  if (head?.generic && profile.headModifiers.some((term) => !all.some((unit) => names(unit, term)))) judgement.relevant = false;
  // Where the head is generic, what the topic does is much of its subject: a document that never
  // names it is about the things, not about doing it. A seed catalogue's chard "ornamental in
  // pots" is not about watering potted plants (it may still be the best source there is: see
  // groundingPassages). A particular head is the subject itself: notes on storing coffee beans
  // are about brewing better coffee.
  judgement.activity = profile.activity === null || !head?.generic || all.some((unit) => names(unit, profile.activity!));
  return judgement;
}

/**
 * False when the document names the head (itself or a kind of it) but never with all of its
 * qualifiers: each in the same unit as the head, or in the title or a heading above that unit.
 */
function qualifiedHead(head: TopicTerm, qualifiers: readonly TopicTerm[], title: MatchUnit, units: readonly AnalysedUnit[]): boolean {
  if (qualifiers.length === 0) return true;
  // Each unit naming the head, with the title and headings it sits under.
  const contexts: { unit: MatchUnit; above: readonly MatchUnit[] }[] = [{ unit: title, above: [] }];
  for (const unit of units) {
    contexts.push({ unit, above: [title, ...unit.trailUnits.filter((heading) => heading.text !== unit.text)] });
    unit.trailUnits.forEach((heading, i) => contexts.push({ unit: heading, above: [title, ...unit.trailUnits.slice(0, i)] }));
  }
  const naming = contexts.filter(({ unit }) => names(unit, head));
  // Only the qualifiers the document names somewhere: named apart from the head, they name something else.
  const named = qualifiers.filter((term) => term.adjective || contexts.some(({ unit }) => names(unit, term)));
  return naming.length === 0 || naming.some(({ unit, above }) => named.every((term) => names(unit, term) || above.some((heading) => names(heading, term))));
}

/** The term in the title or a heading, or in HEAD_MENTIONS sentences. */
function namedProminently(term: TopicTerm, structure: readonly MatchUnit[], units: readonly MatchUnit[]): boolean {
  return structure.some((unit) => namesItself(unit, term)) || units.filter((unit) => !unit.structural && namesItself(unit, term)).length >= HEAD_MENTIONS;
}

/**
 * How the document names the head noun of the topic (or of one of its alternatives); 'itself'
 * when the topic has none. The head must be prominent: in the title or a heading, or in
 * HEAD_MENTIONS sentences (one passing mention does not make a document about it, unless the
 * text is a note of a few sentences). Named only
 * through a kind of it, the kind must be in the title or a heading: a document about tomatoes is
 * about vegetables, one mentioning roasted beans is not.
 */
function headNamed(profile: TopicProfile, units: readonly MatchUnit[], structure: readonly MatchUnit[]): DocumentJudgement['head'] {
  const head = profile.terms.find((term) => term.head);
  if (!head) return 'itself';
  if (structure.some((unit) => namesItself(unit, head))) return 'itself';
  if (structure.some((unit) => namesKindOf(unit, head))) return 'kind';
  const body = units.filter((unit) => !unit.structural);
  const mentions = body.filter((unit) => namesItself(unit, head)).length;
  if (mentions >= HEAD_MENTIONS) return 'itself';
  // In a short text (a note of a few sentences) one mention is prominent, where the word names
  // the thing itself rather than qualifying another noun ("car camping" is camping).
  if (mentions === 1 && body.length <= 4 && body.some((unit) => namesItself(unit, head) && namedAsHead(unit, head))) return 'itself';
  // A direct kind of it named in several sentences ("hives" for "beehives") is prominent too.
  if (body.filter((unit) => head.close.some((sequence) => holdsSequence(unit.stems, sequence))).length >= HEAD_MENTIONS) return 'kind';
  for (const alternative of profile.alternatives) {
    const named = alternative.terms.some((term) => term.head) ? headNamed(alternative, units, structure) : null;
    if (named) return named;
  }
  // One sentence naming it or a kind of it ("hives" for "beehives") is a single mention.
  return mentions > 0 || body.some((unit) => namesKindOf(unit, head)) ? 'once' : null;
}

/** True when the unit uses the one-word term as a noun of its own, not followed by the noun it qualifies. */
function namedAsHead(unit: MatchUnit, term: TopicTerm): boolean {
  if (term.stems.length > 1 || unit.text === undefined) return true;
  const words = tagWords(unit.text);
  return words.some((word, i) => stemsOf(word.text)[0] === term.stems[0] && !['NOUN', 'PROPN'].includes(words[i + 1]?.pos ?? ''));
}

/** True when a title or heading names the topic's head noun, itself or a kind of it (or an alternative's head). */
function headInStructure(profile: TopicProfile, structure: readonly MatchUnit[]): boolean {
  const head = profile.terms.find((term) => term.head);
  if (!head) return true;
  return structure.some((unit) => names(unit, head)) || profile.alternatives.some((alternative) => alternative.terms.some((term) => term.head) && headInStructure(alternative, structure));
}

function groupByDocument(all: readonly { passage: Passage; units: AnalysedUnit[] }[]): Map<string, DocumentEvidence> {
  const documents = new Map<string, DocumentEvidence>();
  for (const entry of all) {
    const document = documents.get(entry.passage.fileId) ?? { fileId: entry.passage.fileId, passages: [] };
    document.passages.push(entry);
    documents.set(entry.passage.fileId, document);
  }
  return documents;
}

/**
 * The passages that may ground a post on `topic`, best first, at most `limit`: those of the
 * documents about the topic (judgeDocument) that name some of it, each distinct, and
 * scored at least SCORE_FLOOR of the best of them. An empty list means the post must claim no
 * source.
 */
export function groundingPassages(topic: string, passages: readonly Passage[], limit = passages.length): Passage[] {
  const profile = topicProfile(topic);
  if (profile.terms.length === 0 || passages.length === 0) return [];
  const ranked = [...passages].sort((a, b) => b.score - a.score);
  const all = ranked.map((passage) => ({ passage, units: analysedPassage(passage) }));
  prepareNouns(profile, all.flatMap(({ units }) => units));
  const documents = [...groupByDocument(all).values()];
  const judged = documents.map((document) => ({ document, judgement: judgeDocument(profile, document) })).filter(({ judgement }) => judgement.relevant);
  const bestDocument = Math.max(0, ...judged.map(({ judgement }) => judgement.score));
  // A document only the vector ranking found (hybrid search) has no BM25 score to compare: its
  // words decide (judgeDocument), and its head must be prominent as for any second document.
  // Beside the best document, another is about the topic too only when it names the topic's
  // head prominently (title, heading, two sentences), names what the topic does where its head
  // is generic (its activity), and scores near the best: a side mention grounds nothing, nor does
  // a seed catalogue's chard "in pots" for watering potted plants beside a houseplant guide.
  const relevantFiles = new Map(
    judged
      .filter(({ judgement }) => judgement.score === bestDocument || (judgement.head !== 'once' && judgement.activity && (judgement.score < 0 || judgement.score >= bestDocument * DOCUMENT_SCORE_FLOOR)))
      .map(({ document, judgement }) => [document.fileId, judgement]),
  );
  // A passage names some of the topic, or sits in a document whose title and headings name most of it (a recipe row of "weeknight recipes").
  const onTopic = all.filter(({ passage, units }) => {
    const judgement = relevantFiles.get(passage.fileId);
    return judgement !== undefined && (judgement.structure >= STRUCTURE_NAMES_TOPIC || coverage(profile, units.flatMap((unit) => [unit, ...unit.trailUnits])) > 0);
  });
  // Each relevant document's best passage first, so one long document cannot crowd out another.
  const firsts = onTopic.filter((entry, i) => onTopic.findIndex((other) => other.passage.fileId === entry.passage.fileId) === i);
  const relevant = [...firsts, ...onTopic.filter((entry) => !firsts.includes(entry))];
  const best = Math.max(0, ...relevant.map(({ passage }) => floorScore(passage) ?? 0));
  const kept: Passage[] = [];
  const seen = new Set<string>();
  for (const { passage, units } of relevant) {
    if (kept.length >= limit) break;
    const score = floorScore(passage);
    if (best > 0 && score !== null && score < best * SCORE_FLOOR) continue;
    const keys = units.map((unit) => sentenceKey(unit.text)).filter((key) => key !== '');
    const total = keys.reduce((sum, key) => sum + key.length, 0);
    const repeated = keys.filter((key) => seen.has(key)).reduce((sum, key) => sum + key.length, 0);
    if (total === 0 || repeated >= total * DUPLICATE_SHARE) continue;
    for (const key of keys) seen.add(key);
    kept.push(passage);
  }
  return kept;
}

/** The passages a generator grounds a post on (see `GenerationRequest.groundingLimit`). */
export function passagesToGroundOn(req: Pick<GenerationRequest, 'topic' | 'passages' | 'groundingLimit'>): Passage[] {
  return req.groundingLimit === undefined ? req.passages : groundingPassages(req.topic, req.passages, req.groundingLimit);
}

/** How each retrieved document was judged for the topic (for benchmarks and debugging). */
export function explainGrounding(topic: string, passages: readonly Passage[]): { profile: TopicProfile; judgements: DocumentJudgement[] } {
  const profile = topicProfile(topic);
  const ranked = [...passages].sort((a, b) => b.score - a.score);
  const all = ranked.map((passage) => ({ passage, units: analysedPassage(passage) }));
  prepareNouns(profile, all.flatMap(({ units }) => units));
  return { profile, judgements: [...groupByDocument(all).values()].map((document) => judgeDocument(profile, document)) };
}
