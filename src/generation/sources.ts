/**
 * Reading a retrieved passage as a reader would: headings, sentences, list items and records
 * (`key: value` lines, as CSV rows are extracted), and the words of each as the full-text
 * index sees them (stemmed, Chinese and Japanese segmented). Shared by the relevance floor and
 * the builtin writer, so both judge a passage by the same units.
 */

import { separateWords, withoutWordSeparators } from '../text/cjk.js';

/** Bounds the work per passage, so a huge chunk cannot slow a request down. */
const MAX_PASSAGE_CHARS = 6000;

export interface SourceRecord {
  title: string;
  body: string | null;
  details: [string, string][];
}

export interface SourceUnit {
  kind: 'heading' | 'sentence' | 'item' | 'record';
  /** Plain text: Markdown markers, link targets and code removed. */
  text: string;
  /** Nearest heading above the unit in the passage (its own text for a heading). */
  heading: string | null;
  /** The headings the unit is under, outermost first (a Markdown `#` above a `##`). */
  trail: string[];
  /** Begins as a sentence does and ends with its punctuation (always true for records). */
  complete: boolean;
  /** Order in the passage. */
  index: number;
  record?: SourceRecord;
}

const FENCE = /```[\s\S]*?(?:```|$)/g;
const MARKDOWN_HEADING = /^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$/;
const LIST_ITEM = /^\s*(?:[-*+•▪◦]|\d{1,3}[.)])\s+(.+)$/;
const FIELD = /^([\p{L}][\p{L}\p{N} _./()-]{0,39}):\s+(\S.*)$/u;
const URL = /\bhttps?:\/\/\S+|\bwww\.\S+/i;
const TERMINAL = /[.!?。！？…]["'”’)\]]*$/u;
const SENTENCE_START = /^["“‘(]?[\p{Lu}\p{N}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** Inline Markdown reduced to its text. */
export function inlineText(line: string): string {
  return line
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__|`)(.+?)\1/g, '$2')
    .replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/g, '$1$2')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Sentences of a paragraph: a break after . ! ? (and 。！？) before a capital, digit or CJK. */
export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?]["”’)\]]?)\s+(?=["“‘(]?[\p{Lu}\p{N}])|(?<=[。！？])/u)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== '');
}

const wordCount = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** A plain line that reads as a heading: short, no closing punctuation, mostly capitalised words or a number. */
function looksLikeHeading(line: string, alone: boolean): boolean {
  if (line.length > 80 || URL.test(line) || /[=<>{}|;]/.test(line) || /[.,:;!]$/.test(line)) return false;
  const words = line.split(' ');
  if (words.length > 9 || !/^[\p{Lu}\p{N}]/u.test(line)) return false;
  if (line.endsWith('?')) return alone && words.length <= 8;
  const long = words.filter((word) => /^\p{L}{4,}/u.test(word));
  const capitalised = long.filter((word) => /^\p{Lu}/u.test(word));
  return alone || capitalised.length * 2 >= long.length || /\d/.test(line);
}

/**
 * `key: value` lines that are a record (a CSV row: column names as keys, short values), not a
 * definition list ("File Manager: Lets you upload and view files.").
 */
function isRecord(fields: readonly [string, string][]): boolean {
  const identifiers = fields.filter(([key]) => /^[\p{Ll}\p{N}_]+$/u.test(key)).length;
  const lengths = fields.map(([, value]) => value.length).sort((a, b) => a - b);
  const median = lengths[Math.floor(lengths.length / 2)]!;
  return identifiers >= fields.length * 0.8 || median <= 25;
}

function recordOf(fields: [string, string][]): SourceRecord {
  const find = (names: RegExp) => fields.find(([key]) => names.test(key.toLowerCase()));
  const title = find(/^(name|title|product|item|label)$/) ?? fields.find(([key]) => !/(^|_)(id|sku|code)$/i.test(key)) ?? fields[0]!;
  const body = find(/^(description|summary|notes?|details?|text|comment)$/) ?? null;
  const details = fields.filter((field) => field !== title && field !== body);
  return { title: title[1], body: body?.[1] ?? null, details };
}

/** Plain text of a record: its title, body and details, for matching. */
export function recordText(record: SourceRecord): string {
  return [record.title, record.body ?? '', ...record.details.map(([key, value]) => `${key} ${value}`)].join(' ');
}

/** The units of a passage, in order. */
export function parsePassage(raw: string): SourceUnit[] {
  const text = withoutWordSeparators(raw.slice(0, MAX_PASSAGE_CHARS)).replace(FENCE, '\n\n');
  const blocks = text.split(/\n[^\S\n]*\n/).map((block) => block.split('\n').map((line) => line.trim()).filter(Boolean));
  const units: SourceUnit[] = [];
  let heading: string | null = null;
  // Headings by level (1-6 for Markdown, 7 for a plain heading line).
  const levels: (string | undefined)[] = [];
  const setHeading = (text: string, level: number) => {
    heading = text;
    levels.length = level;
    levels[level - 1] = text;
  };
  const push = (unit: Omit<SourceUnit, 'index' | 'heading' | 'trail'>) =>
    units.push({ ...unit, heading, trail: levels.filter((h): h is string => h !== undefined), index: units.length });

  for (const lines of blocks) {
    if (lines.length === 0) continue;
    // A block of `key: value` lines is one record (a CSV row, a metadata block).
    const fields = lines.map((line) => FIELD.exec(line));
    if (lines.length >= 2 && fields.every(Boolean) && isRecord(fields.map((m) => [m![1]!, m![2]!]))) {
      const record = recordOf(fields.map((m) => [m![1]!.trim(), inlineText(m![2]!)]));
      push({ kind: 'record', text: recordText(record), complete: true, record });
      continue;
    }
    let prose: string[] = [];
    const flush = () => {
      for (const sentence of splitSentences(inlineText(prose.join(' ')))) {
        push({ kind: 'sentence', text: sentence, complete: SENTENCE_START.test(sentence) && TERMINAL.test(sentence) });
      }
      prose = [];
    };
    for (const [i, line] of lines.entries()) {
      const markdown = MARKDOWN_HEADING.exec(line);
      // A line of a definition list ("Settings: Lets you modify ...") is an item of its own.
      // A definition: a short term, and a neighbouring line that is one too.
      const definition =
        fields[i] && /^\p{Lu}/u.test(line) && TERMINAL.test(line) && fields[i]![1]!.split(' ').length <= 5 && Boolean(fields[i - 1] ?? fields[i + 1]);
      const item = LIST_ITEM.exec(line) ?? (definition ? ([line, line] as unknown as RegExpExecArray) : null);
      const next = lines[i + 1];
      if (markdown) {
        flush();
        const text = inlineText(markdown[2]!).replace(/[:.]$/, '');
        setHeading(text, markdown[1]!.length);
        push({ kind: 'heading', text, complete: false });
      } else if (item) {
        flush();
        const itemText = inlineText(item[1]!);
        push({ kind: 'item', text: itemText, complete: wordCount(itemText) >= 3 && !/[,;:(-]$/.test(itemText) && !/^\p{Ll}/u.test(next ?? '') });
      } else if (
        (prose.length === 0 || TERMINAL.test(prose.at(-1)!)) &&
        looksLikeHeading(line, lines.length === 1) &&
        (lines.length === 1 || (next !== undefined && SENTENCE_START.test(next)))
      ) {
        flush();
        const text = inlineText(line);
        // A plain heading opening the passage is taken as the document's title, above the rest.
        setHeading(text, units.length === 0 ? 1 : 7);
        push({ kind: 'heading', text, complete: false });
      } else {
        prose.push(line);
      }
    }
    flush();
  }
  return units;
}

/** Irregular forms a reader hears as the same word. */
const IRREGULAR: Record<string, string> = {
  grown: 'grow', grew: 'grow', knives: 'knife', leaves: 'leaf', wives: 'wife', lives: 'life', halves: 'half', shelves: 'shelf',
  loaves: 'loaf', wolves: 'wolf', calves: 'calf', thieves: 'thief', children: 'child', men: 'man', women: 'woman', mice: 'mouse',
  geese: 'goose', feet: 'foot', teeth: 'tooth', people: 'person', ran: 'run', ate: 'eat', eaten: 'eat', made: 'make', bought: 'buy',
  brought: 'bring', taught: 'teach', caught: 'catch', kept: 'keep', slept: 'sleep', written: 'write', wrote: 'write', chosen: 'choose',
  chose: 'choose', built: 'build', sown: 'sow', began: 'begin', begun: 'begin', drove: 'drive', driven: 'drive', rode: 'ride', ridden: 'ride',
  froze: 'freeze', frozen: 'freeze', fed: 'feed', led: 'lead', left: 'leave', spent: 'spend', sent: 'send', felt: 'feel', held: 'hold',
};

const VOWEL = /[aeiouy]/;

/**
 * A light English stemmer: inflections only (plural, -ing, -ed) and common irregular forms, so
 * "managers", "brewing" and "potted" meet "manager", "brew" and "pot", and "baking" meets
 * "bake" ("bak" + e: a short stem ending consonant-vowel-consonant had an e), but "management"
 * stays apart from "managers" (Porter would make both "manag", and a software manual about
 * content management "relevant" to managers), and "care" from "car", "cycle" from "cycling".
 */
export function lightStem(word: string): string {
  const irregular = IRREGULAR[word];
  if (irregular) return irregular;
  let w = word;
  if (w.length <= 3) return w;
  if (/ies$/.test(w) && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (/(?:sh|ch|x|z|ss)es$/.test(w) || (/[^aeiou]oes$/.test(w) && w.length > 5)) w = w.slice(0, -2);
  else if (/s$/.test(w) && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  let suffix = false;
  if (/ing$/.test(w) && w.length > 5 && VOWEL.test(w.slice(0, -3))) [w, suffix] = [w.slice(0, -3), true];
  else if (/ied$/.test(w) && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (/ed$/.test(w) && w.length > 4 && !/eed$/.test(w)) [w, suffix] = [w.slice(0, -2), true];
  if (suffix) {
    if (/([b-df-hj-np-tv-z])\1$/.test(w) && !/(?:ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
    // "mak" -> "make", "hop" -> "hope": one vowel, then a consonant that is not w, x or y;
    // "cycl" -> "cycle", "handl" -> "handle".
    else if (/^[^aeiouy]*[aeiouy][^aeiouywx]$/.test(w) || /[bcdfgkptz]l$/.test(w)) w = `${w}e`;
  }
  return w;
}

/** Lower-case words as the index splits them (Chinese and Japanese segmented). */
export function wordsOf(text: string): string[] {
  return separateWords(text.normalize('NFKC').toLowerCase(), ' ').match(/[\p{L}\p{N}\p{M}]+/gu) ?? [];
}

/** wordsOf(), lightly stemmed: one stem per word, in order. */
export function stemsOf(text: string): string[] {
  return wordsOf(text).map((word) => (/^[a-z]+$/.test(word) ? lightStem(word) : word));
}

/** Key for spotting the same sentence twice: letters and digits only, lower case. */
export function sentenceKey(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}
