/**
 * Word boundaries for scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer,
 * Myanmar). SQLite's `unicode61` tokenizer only splits at separators, so a run such as
 * `福島第一原子力発電所` would be one token and `原子力発電所` could never match inside it.
 * `Intl.Segmenter` (ICU's dictionaries) finds the words; the same function runs on indexed
 * text and on queries, so both sides agree on where the words are.
 */

/** An invisible word separator: unicode61 treats it as a separator, a reader does not see it. */
export const ZERO_WIDTH_SPACE = '\u200B';
const ZWSP_RUN = /\u200B/g;

/** A run of characters of the scripts that need a dictionary to find words. */
const UNSPACED_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}ー々〆]+/gu;
const UNSPACED_CHARACTER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

// A fixed locale: word breaks must not depend on the environment of the process.
const wordSegmenter = new Intl.Segmenter('ja', { granularity: 'word' });

export function hasUnspacedScript(text: string): boolean {
  return UNSPACED_CHARACTER.test(text);
}

/** The words of one run (no separators inside), in order. */
export function segmentRun(run: string): string[] {
  const words: string[] = [];
  for (const { segment } of wordSegmenter.segment(run)) words.push(segment);
  return words;
}

/**
 * `text` with `separator` inserted between the words of every unspaced-script run, and nowhere
 * else. Runs are segmented one at a time: segmenting only short runs keeps the cost linear
 * (Intl.Segmenter on one very long string is slow on Node 20).
 */
export function separateWords(text: string, separator = ZERO_WIDTH_SPACE): string {
  if (!hasUnspacedScript(text)) return text;
  return text.replace(UNSPACED_RUN, (run: string, offset: number) => {
    // A run touching Latin letters or digits ("测试nodejs") is a word boundary there too.
    const before = LETTER_OR_DIGIT.test(text.charAt(offset - 1)) ? separator : '';
    const after = LETTER_OR_DIGIT.test(text.charAt(offset + run.length)) ? separator : '';
    return before + segmentRun(run).join(separator) + after;
  });
}

/** Removes the separators `separateWords` inserted (what a reader is shown). */
export function withoutWordSeparators(text: string): string {
  return text.includes(ZERO_WIDTH_SPACE) ? text.replace(ZWSP_RUN, '') : text;
}
