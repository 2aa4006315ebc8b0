/** Analysis of the sources: what each file says, and the category and tags they suggest. */

import { MAX_PROMPT_PASSAGES, topPassages } from '../prompt.js';
import type { Passage } from '../types.js';
import { WORD_PATTERN, capitalize, clipWords, countWords, keywordsOf, plainText, rankByFrequency, splitSentences, unique } from './text.js';

const MAX_SENTENCE_WORDS = 40;
const MIN_SENTENCE_WORDS = 5;
/** A handful of tags per post, well under the posts service's MAX_TAGS (limits.ts). */
const MAX_TAGS = 6;
const MIN_TAGS = 3;

const CATEGORY_KEYWORDS: readonly [string, readonly string[]][] = [
  ['Technology', ['software', 'code', 'coding', 'programming', 'api', 'database', 'cloud', 'server', 'javascript', 'typescript', 'python', 'kubernetes', 'docker', 'web', 'app', 'apps', 'computer', 'network', 'security', 'ai', 'algorithm', 'devops', 'linux', 'developer', 'developers']],
  ['Food & Drink', ['coffee', 'tea', 'food', 'recipe', 'recipes', 'cooking', 'baking', 'brew', 'brewing', 'wine', 'beer', 'kitchen', 'meal', 'espresso', 'bread', 'beans']],
  ['Health & Fitness', ['health', 'fitness', 'exercise', 'workout', 'sleep', 'nutrition', 'diet', 'running', 'yoga', 'wellness', 'medical']],
  ['Business', ['business', 'marketing', 'sales', 'startup', 'management', 'leadership', 'strategy', 'customer', 'customers', 'product', 'revenue', 'company', 'work', 'remote', 'career', 'productivity', 'office', 'hiring']],
  ['Personal Finance', ['money', 'budget', 'budgeting', 'saving', 'savings', 'investing', 'debt', 'retirement', 'finance']],
  ['Science', ['science', 'research', 'physics', 'chemistry', 'biology', 'climate', 'space', 'experiment', 'study', 'energy']],
  ['Education', ['education', 'learning', 'teaching', 'school', 'student', 'students', 'course', 'university']],
  ['Travel', ['travel', 'trip', 'destination', 'flight', 'hotel', 'hiking', 'tourism', 'journey']],
  ['Home & Garden', ['garden', 'gardening', 'home', 'plant', 'plants', 'diy', 'furniture']],
];

export interface SourceDigest {
  fileName: string;
  /** Number in the References list (academic style). */
  ref: number;
  text: string;
  /** Content words in order of appearance. */
  words: string[];
  sentences: string[];
  quote: string;
  keySentences: string[];
  keywords: string[];
}

/** Passages grouped per file, best file first, each reduced to its quote and key sentences. */
export function digestSources(passages: readonly Passage[], topicWords: ReadonlySet<string>, keyCount: number): SourceDigest[] {
  const byFile = new Map<string, Passage[]>();
  for (const passage of topPassages(passages, MAX_PROMPT_PASSAGES)) {
    const group = byFile.get(passage.fileId);
    if (group) group.push(passage);
    else byFile.set(passage.fileId, [passage]);
  }
  const digests: SourceDigest[] = [];
  for (const group of byFile.values()) {
    const text = group.map((p) => plainText(p.text)).join(' ').trim();
    if (text === '') continue;
    const analysed = unique(splitSentences(text)).map((sentence) => {
      const words = sentence.match(WORD_PATTERN) ?? [];
      return { sentence, wordCount: words.length, keywords: keywordsOf(words, 3) };
    });
    const words = analysed.flatMap((a) => a.keywords);
    const frequency = new Map<string, number>();
    for (const word of words) frequency.set(word, (frequency.get(word) ?? 0) + 1);

    const candidates = analysed.filter((a) => a.wordCount >= MIN_SENTENCE_WORDS);
    const pool = candidates.length > 0 ? candidates : [{ sentence: text, wordCount: countWords(text), keywords: words }];
    // Sentences dense in the source's own vocabulary and the topic's words carry its message.
    const ranked = pool.map((a, index) => {
      const weight = a.keywords.reduce((sum, w) => sum + (frequency.get(w) ?? 0) + (topicWords.has(w) ? 3 : 0), 0);
      const sentence = a.wordCount > MAX_SENTENCE_WORDS ? clipWords(a.sentence, MAX_SENTENCE_WORDS) : a.sentence;
      return { sentence, index, score: weight / Math.sqrt(a.wordCount + 1) };
    });
    const sentences = ranked.map((r) => r.sentence);
    ranked.sort((a, b) => b.score - a.score || a.index - b.index);
    const keys = ranked.slice(1, 1 + keyCount).sort((a, b) => a.index - b.index);
    digests.push({
      fileName: group[0].fileName,
      ref: digests.length + 1,
      text,
      words,
      sentences,
      quote: ranked[0].sentence,
      keySentences: keys.map((k) => k.sentence),
      keywords: rankByFrequency(words).filter((w) => !topicWords.has(w)),
    });
  }
  return digests;
}

export function deriveCategory(topicWords: readonly string[], sourceWords: readonly string[]): string {
  const sourceCounts = new Map<string, number>();
  for (const word of sourceWords) sourceCounts.set(word, (sourceCounts.get(word) ?? 0) + 1);
  let best = { name: '', score: 0 };
  for (const [name, keywords] of CATEGORY_KEYWORDS) {
    let score = 0;
    for (const keyword of keywords) {
      if (topicWords.includes(keyword)) score += 3;
      score += Math.min(sourceCounts.get(keyword) ?? 0, 3);
    }
    if (score > best.score) best = { name, score };
  }
  if (best.score > 0) return best.name;
  const fallback = topicWords[0] ?? rankByFrequency(sourceWords)[0];
  return fallback ? capitalize(fallback) : 'General';
}

export function deriveTags(topicWords: readonly string[], sourceKeywords: readonly string[], category: string): string[] {
  const tags = unique([...topicWords, ...sourceKeywords]).slice(0, MAX_TAGS);
  for (const filler of [category.toLowerCase().replace(' & ', ' and '), 'guide', 'overview']) {
    if (tags.length >= MIN_TAGS) break;
    if (!tags.includes(filler)) tags.push(filler);
  }
  return tags;
}
