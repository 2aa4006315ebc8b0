import { ask, type StepDatabase } from '../db/steps.js';
import { hasUnspacedScript, separateWords, withoutWordSeparators } from '../text/cjk.js';
import { STOPWORDS } from '../text/stopwords.js';

/** A knowledge-base excerpt: a search result, and what grounds a generated post. */
export interface Passage {
  fileId: string;
  fileName: string;
  text: string;
  score: number;
  /** Place of the passage in its file (0 for the first chunk), when known: for reading order. */
  ordinal?: number;
  /**
   * Hybrid search only (where `score` is the fused rank): the passage's BM25 score, or null when
   * only the vector ranking found it. Grounding's score floors compare BM25 scores.
   */
  lexicalScore?: number | null;
}

export interface SearchOptions {
  fileIds?: readonly string[];
  limit?: number;
}

const MAX_TERMS = 32;

// Chunks start with their file's name on a line of its own (it makes names searchable).
const FILE_HEADER = /^\[[^\n]*\]\n/;

/**
 * A word, or words joined by punctuation inside one token: `1:16`, `CL-101`, `v2.3`, `10:30`,
 * `pour-over`, `node.js`, `1,000` (a comma only between digits). Brackets, quotes, `*`, `^`
 * and the like are not joiners: `NEAR(coffee` is two words.
 */
const COMPOUND = /[\p{L}\p{N}\p{M}]+(?:(?:[-‐‑–.:/_'’@&+]|(?<=\p{N}),(?=\p{N}))[\p{L}\p{N}\p{M}]+)*/gu;
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const POSSESSIVE = /['’]s$/u;
/** Kana-only words of a Japanese run are particles and endings: a long run is split at them. */
const KANA_ONLY = /^[\p{Script=Hiragana}ー]{1,3}$/u;

/**
 * The terms of a free-text query, each a list of lower-case words: one word, or a phrase
 * whose words must appear next to each other. A token with inner punctuation is a phrase
 * (`1:16` -> `1 16`, as the index splits it), a run of Chinese or Japanese is segmented into
 * words as the indexed text is (Intl.Segmenter). Stopwords are dropped unless nothing else is
 * left; duplicates are dropped.
 */
export function queryTerms(text: string): string[][] {
  const all: string[][] = [];
  for (const compound of text.normalize('NFKC').toLowerCase().replace(/\u200B/g, ' ').match(COMPOUND) ?? []) {
    const word = compound.replace(POSSESSIVE, '');
    if (!hasUnspacedScript(word)) {
      all.push(word.match(WORD) ?? []);
      continue;
    }
    // Words of the run as the index sees them; a long Japanese run is split at its particles
    // (原子力発電所の現状 -> 原子力 発電 所 | 現状), so one particle cannot sink the whole query.
    let phrase: string[] = [];
    for (const part of separateWords(word, ' ').match(WORD) ?? []) {
      if (KANA_ONLY.test(part)) {
        if (phrase.length) all.push(phrase);
        phrase = [];
      } else phrase.push(part);
    }
    if (phrase.length) all.push(phrase);
  }
  const seen = new Set<string>();
  const unique = all.filter((term) => term.length > 0 && !seen.has(term.join(' ')) && seen.add(term.join(' ')));
  const meaningful = unique.filter((term) => term.length > 1 || !STOPWORDS.has(term[0]!));
  return (meaningful.length ? meaningful : unique).slice(0, MAX_TERMS);
}

/** What a knowledge search looks for, the same on either database. */
export interface SearchPlan {
  /** From queryTerms(): OR-ed, each a phrase. */
  terms: string[][];
  /** 1 to 50 passages (8 unless asked). */
  limit: number;
  /** Only these files' passages, when given (never empty). */
  fileIds?: readonly string[];
}

/** The search that `query` and `options` ask for, or null when nothing can match. */
export function planSearch(query: string, options: SearchOptions = {}): SearchPlan | null {
  const terms = queryTerms(query);
  if (terms.length === 0 || options.fileIds?.length === 0) return null;
  return { terms, limit: Math.min(Math.max(options.limit ?? 8, 1), 50), fileIds: options.fileIds };
}

/** A matched chunk as a passage: how either database's rows reach callers. */
export function toPassage(chunk: { fileId: string; fileName: string; text: string; ordinal: number }, score: number): Passage {
  return {
    fileId: chunk.fileId,
    fileName: chunk.fileName,
    // The index's word separators in Chinese and Japanese text are not part of the passage.
    text: withoutWordSeparators(chunk.text.replace(FILE_HEADER, '')),
    // Four significant digits: BM25 scores of a tiny corpus are small, not zero.
    score: Number(score.toPrecision(4)),
    ordinal: chunk.ordinal,
  };
}

/**
 * Search of a site's knowledge base on either database: the same terms (queryTerms), OR-ed,
 * each a phrase; the same filters (the site's chunks, of indexed files, of the files given); the
 * passages best first. Each database ranks by BM25 in its own way (FTS5's bm25(), PostgreSQL's
 * tsvectors with BM25 written out in SQL), so scores are close across databases without being
 * equal: compare them within one answer.
 */
export class KnowledgeSearch {
  constructor(private readonly db: StepDatabase) {}

  /**
   * The best passages of a site's indexed files for a query, best first (score: higher is
   * better). Files still being indexed are left out, so a half-written file never grounds a post.
   */
  async search(siteId: string, query: string, options: SearchOptions = {}): Promise<Passage[]> {
    const plan = planSearch(query, options);
    if (!plan) return [];
    const ranked = await this.db.read(() => ask('knowledgeSearch', 'rank', siteId, plan));
    return ranked.map((chunk) => toPassage(chunk, chunk.score));
  }
}
