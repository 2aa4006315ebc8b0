/**
 * What the sources say about the topic: the relevant passages reduced to distinct, readable
 * facts (sentences, list items, records), the ones most about the topic selected for the
 * length, grouped into sections by what they are about and put in reading order; and the key
 * terms, category and tags they suggest.
 */

import type { Length } from '../../limits.js';
import { WINDOW_FLOOR, analysedPassage, coverage, groundingPassages, prepareNouns, type AnalysedUnit, type TopicProfile } from '../relevance.js';
import { sentenceKey, stemsOf, type SourceRecord } from '../sources.js';
import { WORD_TARGETS, type Passage } from '../types.js';
import { tagMany, tagWords } from '../../text/nlp.js';
import { STOPWORDS } from '../../text/stopwords.js';
import { nounPhrases, type NounPhrase } from '../../text/phrases.js';
import { midSentence, type Topic } from './topic.js';
import { hasUnspacedScript, separateWords } from '../../text/cjk.js';
import { countWords } from './text.js';
import { isTagPhrase, listsThings } from './prose.js';
import { isUnitOfMeasurement, usageCount } from '../../text/wordnet.js';

export interface Fact {
  kind: 'sentence' | 'item' | 'record';
  text: string;
  record?: SourceRecord;
  fileName: string;
  /** Rank of its passage among the relevant ones (0: best). */
  rank: number;
  /** Reading order: files by their best passage, then the file's own order. */
  order: number;
  heading: string | null;
  /** Share of the topic's terms the fact itself holds. */
  own: number;
  /** The same with the headings above it (and, for half, the sentences next to it). */
  context: number;
  words: number;
  phrases: NounPhrase[];
  /** Concrete: figures, names of things, "for example". */
  concrete: boolean;
}

export interface Section {
  /** A noun phrase, as it reads mid-sentence (the renderer sets the heading's case). */
  title: string;
  facts: Fact[];
}

export interface Digest {
  /** Passages that passed the relevance floor, distinct, best first. */
  passages: Passage[];
  sections: Section[];
  examples: Fact[];
  /** A sentence held back to close the post with (a point the conclusion makes), or null. */
  takeaway: Fact | null;
  /** Files cited, each once, in order of first use. */
  files: string[];
  /** Noun phrases of the facts used, most telling first (in two facts or more). */
  keyTerms: NounPhrase[];
  /** Multi-word noun phrases of a single fact, for tags when key terms are few. */
  minorTerms: NounPhrase[];
  /** Words of all usable facts about the topic (what the sources had to say). */
  availableWords: number;
  usedWords: number;
  /** A long post with nothing more from the sources than a medium one: its own framing makes it longer. */
  sameAsMedium: boolean;
}

/** Words of a post's own framing (introduction, conclusion, headings): the rest is for facts. */
const FRAME_WORDS = 110;
const MAX_SECTIONS: Record<Length, number> = { short: 3, medium: 5, long: 8 };
/**
 * Share of what the sources have on the topic a post of each length may use: with little
 * source text, a short post uses less of it rather than every length using all of it (a long
 * post is then never shorter than a short one).
 */
const SOURCE_SHARE: Record<Length, number> = { short: 0.5, medium: 1, long: 1 };
/** A takeaway is held back for the conclusion when the post has at least this many sentences. */
const TAKEAWAY_MIN_SENTENCES = 4;
const TAKEAWAY_MAX_WORDS = 35;
const MAX_EXAMPLES = 3;
const MIN_FACT_WORDS = 4;
const MAX_FACT_WORDS = 55;
/** A fact naming less than this share of what the best fact names is not about the topic by itself. */
const OWN_SHARE = 0.6;
/** Facts sharing this much of their vocabulary say the same thing. */
const NEAR_DUPLICATE = 0.85;

const FIRST_PERSON = /\b(?:I|me|my|mine|I'm|I've|I'd|I'll)\b/;
// Refers back to something the reader of an excerpt has not seen.
const ANAPHORIC = /^(?:this|these|that|those|it|its|they|their|he|she|his|her|such|both|also|however|but|and|so|then|there|here|again|otherwise|instead|yes|no|not)\b/i;
// "... can therefore collect": a conclusion drawn from the sentence before.
const CONCLUDES = /\b(?:therefore|thus|hence|consequently|as a result)\b/i;
const DOT_LEADERS = /(?:\.\s?){4,}|…{2,}|_{3,}/;
// Text out of a PDF form: line numbers ("1 Credit carryforward"), numbers in a row, arrows, and
// lines run together ("shown on return Your social security number Before you begin").
const FORM_TEXT = /^\d+\s+\p{Lu}|(?:^|\s)\d+\s+\d+(?:\s|$)|[▶►◀■□●]|\p{Ll} (?:Your|Before|The|If|Enter|Also|This|You|For|Use|See)\b/u;
const CONCRETE = /\d|\b(?:for example|for instance|e\.g\.|such as)\b/i;
const URL = /\bhttps?:\/\/|\bwww\./i;

/** Words as a reader counts them, Chinese and Japanese words included (not one per run). */
export const factWords = (text: string) => countWords(hasUnspacedScript(text) ? separateWords(text, ' ') : text);

function usable(unit: AnalysedUnit): boolean {
  if (unit.kind === 'heading') return false;
  if (unit.kind === 'record') return unit.record !== undefined && unit.record.title.length > 0;
  const words = factWords(unit.text);
  if (!unit.complete || words < MIN_FACT_WORDS || words > MAX_FACT_WORDS) return false;
  if (FIRST_PERSON.test(unit.text) || DOT_LEADERS.test(unit.text) || FORM_TEXT.test(unit.text)) return false;
  const letters = (unit.text.match(/\p{L}/gu) ?? []).length;
  const visible = unit.text.replace(/\s/g, '').length;
  if (letters < visible * 0.6) return false;
  // A sentence that is mostly an address says nothing on its own.
  if (URL.test(unit.text) && words < 8) return false;
  return true;
}

/** Jaccard similarity of two word sets. */
function similarity(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared / (a.size + b.size - shared || 1);
}

interface Candidate extends Fact {
  key: string;
  wordSet: Set<string>;
  anaphoric: boolean;
  /** Order of the unit before it in the same passage, when that unit is a usable fact. */
  previous: number | null;
}

function candidatesOf(passages: readonly Passage[], profile: TopicProfile): Candidate[] {
  const candidates: Candidate[] = [];
  const seen = new Map<string, Candidate>();
  // Reading order: files in the order of their best passage, a file's passages in its own order.
  const fileOrder = [...new Set(passages.map((p) => p.fileId))];
  const analysed = passages.map(analysedPassage);
  prepareNouns(profile, analysed.flat());
  for (const [rank, passage] of passages.entries()) {
    const place = fileOrder.indexOf(passage.fileId) * 1e8 + (passage.ordinal ?? rank) * 1e4;
    const units = analysed[rank]!;
    let previousUsable: Candidate | null = null;
    for (const [i, unit] of units.entries()) {
      if (!usable(unit)) {
        if (unit.kind !== 'heading') previousUsable = null;
        continue;
      }
      const key = sentenceKey(unit.text);
      const wordSet = new Set(key.split(' '));
      const duplicate = seen.get(key) ?? candidates.find((c) => wordSet.size >= 6 && similarity(c.wordSet, wordSet) >= NEAR_DUPLICATE);
      if (duplicate) {
        // The same fact again (a second copy of a file, overlapping chunks): keep the first.
        previousUsable = duplicate;
        continue;
      }
      const underHeadings = [...unit.trailUnits, unit];
      const around = [units[i - 1], units[i + 1]].filter((u): u is AnalysedUnit => u !== undefined && u.kind !== 'heading');
      const candidate: Candidate = {
        kind: unit.kind as Fact['kind'],
        text: unit.text,
        record: unit.record,
        fileName: passage.fileName,
        rank,
        order: place + i,
        heading: unit.heading,
        own: coverage(profile, [unit]),
        // The headings it is under count in full, its neighbours' words for half.
        context: Math.max(coverage(profile, underHeadings), coverage(profile, [...underHeadings, ...around]) / 2),
        words: factWords(unit.kind === 'record' ? `${unit.record!.title} ${unit.record!.body ?? ''}` : unit.text),
        phrases: [],
        concrete: CONCRETE.test(unit.text),
        key,
        wordSet,
        anaphoric: unit.kind === 'sentence' && (ANAPHORIC.test(unit.text) || CONCLUDES.test(unit.text)),
        previous: previousUsable ? previousUsable.order : null,
      };
      seen.set(key, candidate);
      candidates.push(candidate);
      previousUsable = candidate;
    }
  }
  return candidates;
}

const headingPhrases = new Map<string, string | null>();

/** A source heading usable as a section title: a noun phrase, not a question or a sentence. */
function headingPhrase(heading: string | null): string | null {
  if (heading === null) return null;
  if (!headingPhrases.has(heading)) {
    if (headingPhrases.size > 1000) headingPhrases.clear();
    headingPhrases.set(heading, analyseHeading(heading));
  }
  return headingPhrases.get(heading)!;
}

function analyseHeading(heading: string | null): string | null {
  if (!heading || heading.length > 60 || /[?!]$/.test(heading) || /^\d+([.)]|$)/.test(heading)) return null;
  const tagged = tagWords(heading, { lowerAll: true });
  if (tagged.length === 0 || tagged.length > 8) return null;
  const [first, second] = tagged;
  if (['AUX', 'PRON', 'CCONJ', 'SCONJ', 'INTJ', 'DET'].includes(first!.pos) && first!.text.toLowerCase() !== 'the') return null;
  // "Cleaning", "Cooking": an activity, a fine name for a section.
  if (tagged.length === 1 && /\p{L}{3,}ing$/u.test(first!.text)) return heading.replace(/[:.;,]+$/, '');
  // "Install the blog", "Use it": an instruction, not a name for a section.
  if (first!.pos === 'VERB' && (!second || ['DET', 'PRON', 'ADV'].includes(second.pos))) return null;
  if (!tagged.some((w) => (w.pos === 'NOUN' || w.pos === 'PROPN') && !STOPWORDS.has(w.text.toLowerCase()) && /\p{L}{2,}/u.test(w.text))) return null;
  return heading.replace(/[:.;,]+$/, '');
}

/** A heading's comparison key. */
const headingKey = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

/**
 * How closely a fact is about the topic: 1, it names a fair part of it; 2, the headings above it name
 * enough of it; 3, it sits under the same heading as, or next to, a fact of
 * tier 1 in the same passage (the context a reader needs); null, not about the topic.
 */
function tiers(candidates: readonly Candidate[]): Map<Candidate, number> {
  const tier = new Map<Candidate, number>();
  // Naming a part of the topic counts when it is a fair part of what the best fact names.
  const best = Math.max(0, ...candidates.map((c) => c.own));
  const names = (c: Candidate) => c.own > 0 && c.own >= best * OWN_SHARE;
  const first = candidates.filter(names);
  for (const c of candidates) {
    if (names(c)) tier.set(c, 1);
    else if (c.context >= WINDOW_FLOOR) tier.set(c, 2);
    else if (first.some((f) => f.rank === c.rank && f.heading === c.heading && (f.heading !== null || Math.abs(f.order - c.order) <= 1))) tier.set(c, 3);
  }
  return tier;
}

function score(fact: Candidate): number {
  return 2 * fact.own + fact.context + (fact.concrete ? 0.2 : 0) - fact.rank * 0.05;
}

/** Facts about the topic, closest first, within `budget` words; anaphoric ones only after their antecedent. */
function select(candidates: Candidate[], tier: ReadonlyMap<Candidate, number>, budget: number): Candidate[] {
  const ranked = [...tier.keys()].sort((a, b) => tier.get(a)! - tier.get(b)! || score(b) - score(a) || a.order - b.order);
  const chosen = new Set<Candidate>();
  let used = 0;
  for (const fact of ranked) {
    if (used + fact.words > budget && chosen.size > 0) continue;
    chosen.add(fact);
    used += fact.words;
  }
  const byOrder = new Map(candidates.map((c) => [c.order, c]));
  // Drop a "This ..." or "It ..." sentence whose antecedent is not in the post.
  let changed = true;
  while (changed) {
    changed = false;
    for (const fact of chosen) {
      if (fact.anaphoric && (fact.previous === null || !chosen.has(byOrder.get(fact.previous)!))) {
        chosen.delete(fact);
        changed = true;
      }
    }
  }
  return [...chosen].sort((a, b) => a.order - b.order);
}

/** Groups facts into sections: by the source's own heading, else by a noun phrase they share. */
function group(facts: readonly Candidate[], profile: TopicProfile, maxSections: number): Section[] {
  interface Group {
    title: string;
    key: string;
    facts: Candidate[];
  }
  const groups: Group[] = [];
  const byKey = new Map<string, Group>();
  const add = (title: string, fact: Candidate) => {
    const key = headingKey(title);
    let g = byKey.get(key);
    if (!g) {
      g = { title, key, facts: [] };
      byKey.set(key, g);
      groups.push(g);
    }
    g.facts.push(fact);
    return g;
  };

  const unheaded: Candidate[] = [];
  const follows = new Map<Candidate, Candidate>();
  const byOrder = new Map(facts.map((f) => [f.order, f]));
  for (const fact of facts) {
    const title = headingPhrase(fact.heading);
    const antecedent = fact.anaphoric && fact.previous !== null ? byOrder.get(fact.previous) : undefined;
    if (antecedent) follows.set(fact, antecedent);
    else if (title) add(title, fact);
    else unheaded.push(fact);
  }

  // Facts without a heading: greedily, the noun phrase most of them share names a section.
  const topicKeys = new Set(profile.terms.map((t) => t.stems.join(' ')));
  const phraseCounts = new Map<string, { phrase: NounPhrase; facts: Set<Candidate> }>();
  for (const fact of unheaded) {
    for (const phrase of fact.phrases) {
      const entry = phraseCounts.get(phrase.key) ?? { phrase, facts: new Set<Candidate>() };
      entry.facts.add(fact);
      phraseCounts.set(phrase.key, entry);
    }
  }
  const assigned = new Map<Candidate, Group>();
  const isTopicPhrase = (phrase: NounPhrase) => topicKeys.has(stemsOf(phrase.text).join(' '));
  for (;;) {
    let best: { phrase: NounPhrase; facts: Candidate[] } | null = null;
    for (const { phrase, facts: holding } of phraseCounts.values()) {
      const open = [...holding].filter((f) => !assigned.has(f));
      // A phrase naming the whole topic says nothing about a part of it; nor does "person".
      if (open.length < 2 || isTopicPhrase(phrase) || GENERIC_HEADS.has(phrase.key) || namesUnit(phrase.key) || tooCommon(phrase.key)) continue;
      if (!best || open.length > best.facts.length || (open.length === best.facts.length && phrase.text.split(' ').length > best.phrase.text.split(' ').length)) {
        best = { phrase, facts: open };
      }
    }
    if (!best) break;
    for (const fact of best.facts) assigned.set(fact, add(best.phrase.text, fact));
  }
  // The rest joins the section of the fact before it in the same passage, else one of its own.
  let previous: Candidate | null = null;
  for (const fact of facts) {
    if (!assigned.has(fact) && unheaded.includes(fact)) {
      const before = previous && previous.rank === fact.rank ? (assigned.get(previous) ?? byKey.get(headingKey(headingPhrase(previous.heading) ?? ''))) : undefined;
      // Its own title: a phrase of several words if it has one, never a unit or a word too common to name anything.
      const own = fact.phrases.filter((p) => !isTopicPhrase(p) && !namesUnit(p.key) && !tooCommon(p.key));
      const title = (own.find((p) => p.text.includes(' ')) ?? own[0] ?? fact.phrases[0])?.text ?? fact.fileName.replace(/\.[^.]+$/, '').replace(/[-_]+/g, ' ');
      const g = before ?? add(title, fact);
      if (before) before.facts.push(fact);
      assigned.set(fact, g);
    }
    previous = fact;
  }

  // "This ..." and "It ..." sentences stay right after the sentence they lean on.
  for (const [fact, antecedent] of follows) {
    let root = antecedent;
    while (follows.has(root)) root = follows.get(root)!;
    const g = groups.find((candidate) => candidate.facts.includes(root));
    if (g) g.facts.push(fact);
  }
  // Reading order: sections by their first fact, facts by their place in the sources.
  for (const g of groups) g.facts.sort((a, b) => a.order - b.order);
  let ordered = groups.filter((g) => g.facts.length > 0).sort((a, b) => a.facts[0]!.order - b.facts[0]!.order);
  // A lone short fact reads better inside its neighbour's section; so do sections past the maximum.
  const mergeInto = (from: Group, into: Group) => {
    into.facts.push(...from.facts);
    into.facts.sort((a, b) => a.order - b.order);
    ordered = ordered.filter((g) => g !== from);
  };
  for (const g of [...ordered]) {
    const words = g.facts.reduce((sum, f) => sum + f.words, 0);
    const index = ordered.indexOf(g);
    const neighbour = ordered[index - 1] ?? ordered[index + 1];
    if (g.facts.length === 1 && words < 12 && neighbour && neighbour.facts[0]!.fileName === g.facts[0]!.fileName) mergeInto(g, neighbour);
  }
  while (ordered.length > maxSections) {
    // Merge the smallest section into the one before it (or after it, for the first).
    const smallest = ordered.reduce((min, g) => (g.facts.length < min.facts.length ? g : min), ordered[0]!);
    const index = ordered.indexOf(smallest);
    mergeInto(smallest, ordered[index - 1] ?? ordered[index + 1]!);
  }
  return ordered.map((g) => ({ title: g.title, facts: g.facts }));
}

/**
 * Examples: concrete facts (figures, "such as") that stand on their own, taken out of sections
 * that keep at least two facts; never a section's first fact (it sets the scene) nor one the
 * next fact leans on.
 */
function pickExamples(sections: readonly Section[]): Fact[] {
  const picked: Fact[] = [];
  for (const section of sections) {
    let left = section.facts.length;
    for (const [i, fact] of section.facts.entries()) {
      const next = section.facts[i + 1] as Candidate | undefined;
      if (i === 0 || left <= 2 || !fact.concrete || fact.kind === 'record' || next?.anaphoric) continue;
      picked.push(fact);
      left--;
    }
  }
  return picked.sort((a, b) => b.own - a.own || a.order - b.order).slice(0, MAX_EXAMPLES);
}

/**
 * Uses in WordNet's sense-tagged corpus at which a single word is too common to name a part of a
 * subject ("morning", "water", "home", "time"), as a section's title or a tag of its own.
 */
const COMMON_WORD_USES = 80;
export const tooCommon = (key: string) => !key.includes(' ') && usageCount(key) >= COMMON_WORD_USES;

/** A phrase naming a unit of measurement ("square metre", "mm hydrostatic head") is no section's subject. */
const namesUnit = (key: string) => isUnitOfMeasurement(key) || key.split(' ').some((word) => isUnitOfMeasurement(word));

/**
 * The sentence the conclusion closes on: the one most about the topic that stands on its own
 * (no "This ..." leaning back, none leaning on it, not a section's opening, not a list of
 * things), taken out of a section that keeps two facts or more.
 */
const LEANS_BACK = /\b(?:it|its|they|them|their|this|these|those|he|she|his|her)\b/i;

function pickTakeaway(sections: readonly Section[]): Fact | null {
  const sentences = sections.flatMap((s) => s.facts).filter((f) => f.kind === 'sentence');
  if (sentences.length < TAKEAWAY_MIN_SENTENCES) return null;
  let best: Fact | null = null;
  for (const section of sections) {
    if (section.facts.length < 3) continue;
    for (const [i, fact] of section.facts.entries()) {
      const next = section.facts[i + 1] as Candidate | undefined;
      if (i === 0 || fact.kind !== 'sentence' || (fact as Candidate).anaphoric || next?.anaphoric || fact.words > TAKEAWAY_MAX_WORDS || LEANS_BACK.test(fact.text) || listsThings(fact.text)) continue;
      if (!best || score(fact as Candidate) > score(best as Candidate)) best = fact;
    }
  }
  return best;
}

/** Words that name a place in a document, a date or anyone at all, not a subject. */
const GENERIC_HEADS = new Set(
  `version line page section part chapter number item example case note table figure year month day week time
  january february march april may june july august september october november december person people someone
  everyone thing stuff kind sort type lot bit point fact`.split(/\s+/),
);

/**
 * Noun phrases of the facts used, ranked by how many facts hold them (headings count double):
 * `key` those in two facts or more, `minor` the multi-word ones of a single fact.
 */
function keyTermsOf(sections: readonly Section[], examples: readonly Fact[]): { key: NounPhrase[]; minor: NounPhrase[] } {
  const counts = new Map<string, { phrase: NounPhrase; count: number; first: number }>();
  const bump = (phrase: NounPhrase, by: number, order: number) => {
    const entry = counts.get(phrase.key) ?? { phrase, count: 0, first: order };
    entry.count += by;
    counts.set(phrase.key, entry);
  };
  for (const section of sections) {
    // Section titles name the parts of a post with several; one section's title is just its subject.
    if (sections.length >= 2) {
      for (const phrase of nounPhrases(tagWords(midSentence(section.title)), { heading: true })) bump(phrase, 2, section.facts[0]!.order);
    }
    for (const fact of section.facts) for (const phrase of new Map(fact.phrases.map((p) => [p.key, p])).values()) bump(phrase, 1, fact.order);
  }
  for (const fact of examples) for (const phrase of fact.phrases) bump(phrase, 1, fact.order);
  // A phrase in one fact only is as likely a tagging accident as a key term.
  const ranked = [...counts.values()].filter((e) => !GENERIC_HEADS.has(e.phrase.key) && !/[.:;]/.test(e.phrase.text) && isTagPhrase(e.phrase.text)).sort((a, b) => b.count - a.count || a.first - b.first);
  return {
    key: ranked.filter((e) => e.count >= 2).map((e) => e.phrase),
    minor: ranked.filter((e) => e.count === 1 && e.phrase.text.includes(' ')).map((e) => e.phrase),
  };
}

export function digest(topic: Topic, profile: TopicProfile, passages: readonly Passage[], length: Length, target: number, includeExamples: boolean): Digest {
  const relevant = groundingPassages(topic.text, passages);
  const candidates = candidatesOf(relevant, profile);
  const tier = tiers(candidates);
  const available = [...tier.keys()].reduce((sum, f) => sum + f.words, 0);
  const budgetOf = (l: Length) => Math.min(Math.max((l === length ? target : WORD_TARGETS[l]) - FRAME_WORDS, 60), Math.ceil(available * SOURCE_SHARE[l]));
  const wordsOf = (facts: readonly Candidate[]) => facts.reduce((sum, f) => sum + f.words, 0);
  // A short post uses fewer of the sources' words than a medium one would, whenever it can.
  const forMedium = select(candidates, tier, budgetOf('medium'));
  const selected =
    length === 'medium' ? forMedium : select(candidates, tier, length === 'short' ? Math.min(budgetOf('short'), wordsOf(forMedium) - 1) : budgetOf('long'));
  // Noun phrases of the facts used (grouping, key terms): tagged in one pass.
  const tagged = tagMany(selected.map((fact) => (fact.record ? `${fact.record.title}. ${fact.record.body ?? ''}` : fact.text)));
  selected.forEach((fact, i) => (fact.phrases = nounPhrases(tagged[i]!)));

  let sections = group(selected, profile, MAX_SECTIONS[length]);
  let examples: Fact[] = [];
  if (includeExamples) {
    examples = pickExamples(sections);
    sections = sections.map((section) => ({ ...section, facts: section.facts.filter((f) => !examples.includes(f)) }));
  }
  const takeaway = pickTakeaway(sections);
  if (takeaway) sections = sections.map((section) => ({ ...section, facts: section.facts.filter((f) => f !== takeaway) }));
  const files: string[] = [];
  for (const fact of [...sections.flatMap((s) => s.facts), ...examples, ...(takeaway ? [takeaway] : [])]) if (!files.includes(fact.fileName)) files.push(fact.fileName);
  examples.sort((a, b) => a.order - b.order);
  const sameAsMedium = length === 'long' && wordsOf(selected) <= wordsOf(forMedium);
  const terms = keyTermsOf(sections, examples);
  return {
    passages: relevant,
    sections,
    examples,
    takeaway,
    files,
    keyTerms: terms.key,
    minorTerms: terms.minor,
    availableWords: available,
    sameAsMedium,
    usedWords: selected.reduce((sum, f) => sum + f.words, 0),
  };
}

const CATEGORY_KEYWORDS: readonly [string, readonly string[]][] = [
  ['Technology', ['software', 'code', 'coding', 'programming', 'api', 'database', 'cloud', 'server', 'javascript', 'typescript', 'python', 'kubernetes', 'docker', 'web', 'app', 'apps', 'computer', 'network', 'security', 'ai', 'algorithm', 'devops', 'linux', 'developer', 'developers', 'blog', 'dashboard', 'endpoint', 'mysql', 'sql', 'coldfusion', 'analytics', 'release', 'sign-on']],
  ['Food & Drink', ['coffee', 'tea', 'food', 'recipe', 'recipes', 'cooking', 'baking', 'brew', 'brewing', 'wine', 'beer', 'kitchen', 'meal', 'espresso', 'bread', 'beans', 'grind', 'roast', 'latte', 'pour-over']],
  ['Health & Fitness', ['health', 'fitness', 'exercise', 'workout', 'sleep', 'nutrition', 'diet', 'running', 'yoga', 'wellness', 'medical']],
  ['Business', ['business', 'marketing', 'sales', 'startup', 'management', 'leadership', 'strategy', 'customer', 'customers', 'product', 'revenue', 'company', 'work', 'remote', 'career', 'productivity', 'office', 'hiring', 'manager', 'managers', 'tax', 'credit']],
  ['Personal Finance', ['money', 'budget', 'budgeting', 'saving', 'savings', 'investing', 'debt', 'retirement', 'finance', 'homebuyer']],
  ['Science', ['science', 'research', 'physics', 'chemistry', 'biology', 'climate', 'space', 'experiment', 'study', 'energy', 'nuclear']],
  ['Education', ['education', 'learning', 'teaching', 'school', 'student', 'students', 'course', 'university']],
  ['Travel', ['travel', 'trip', 'destination', 'flight', 'hotel', 'hiking', 'tourism', 'journey', 'camping', 'tent', 'trekking', 'backpack']],
  ['Home & Garden', ['garden', 'gardening', 'home', 'plant', 'plants', 'diy', 'furniture']],
];

/** The category whose keywords the topic (three times over) and the key terms name most. */
export function deriveCategory(topicWords: readonly string[], keyTerms: readonly NounPhrase[]): string {
  const termWords = keyTerms.slice(0, 12).flatMap((p) => p.key.split(' '));
  let best = { name: '', score: 0 };
  for (const [name, keywords] of CATEGORY_KEYWORDS) {
    let total = 0;
    for (const keyword of keywords) {
      if (topicWords.includes(keyword)) total += 3;
      total += Math.min(termWords.filter((w) => w === keyword).length, 3);
    }
    if (total > best.score) best = { name, score: total };
  }
  if (best.score > 0) return best.name;
  return 'General';
}

/** A handful of tags, well under the posts service's limit. */
const MAX_TAGS = 6;
const MIN_TAGS = 3;
/** Heads that frame a post ("remote work tips"): the tag is what they are about ("remote work"). */
const FRAMING_HEADS = new Set(['tip', 'trick', 'guide', 'basic', 'basics', 'benefit', 'idea', 'step', 'way', 'reason', 'introduction', 'overview', 'lesson', 'secret', 'fact', 'question']);

/** Tags: the topic's noun phrases, then the key terms; lower case, noun phrases only. */
export function deriveTags(topic: Topic, keyTerms: readonly NounPhrase[], category: string): string[] {
  const fromTopic = nounPhrases(tagWords(topic.text, { lowerAll: true }), { heading: true }).flatMap((phrase) => {
    const words = phrase.text.split(' ');
    if (FRAMING_HEADS.has(phrase.head)) words.pop();
    return words.length ? [words.join(' ')] : [];
  });
  const tags: string[] = [];
  const fromTerms = keyTerms.map((p) => p.text).filter((text) => !tooCommon(text.toLowerCase()));
  for (const candidate of [...fromTopic, ...fromTerms]) {
    const tag = candidate.toLowerCase().trim();
    if (tag.length < 2 || tag.length > 40 || STOPWORDS.has(tag) || tags.includes(tag) || !isTagPhrase(tag)) continue;
    tags.push(tag);
    if (tags.length >= MAX_TAGS) break;
  }
  const filler = category.toLowerCase().replace(' & ', ' and ');
  if (tags.length < MIN_TAGS && category !== 'General' && !tags.includes(filler)) tags.push(filler);
  return tags;
}
