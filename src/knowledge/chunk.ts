import { separateWords } from '../text/cjk.js';

export interface ChunkOptions {
  /** Target length of a chunk's text in UTF-16 code units, the file-name header excluded. */
  size?: number;
  /** How much of the end of a chunk the next one repeats, at most. */
  overlap?: number;
}

const DEFAULT_SIZE = 1000;
const DEFAULT_OVERLAP = 120;

const PARAGRAPH_BREAK = /\n[^\S\n]*\n/g;
const WHITESPACE = /\s/;
// Chinese and Japanese have no spaces; a break between two of these characters is a line
// break opportunity, like a space elsewhere.
const CJK_CHARACTER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const sentenceSegmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });

/**
 * Splits `text` into chunks of at most `size` characters, each repeating up to `overlap`
 * characters (whole words) from the end of the previous one, and each led by a
 * `[fileName]` line so a retrieved chunk says where it comes from.
 *
 * Chinese, Japanese and Thai text is stored with an invisible U+200B between its words
 * (Intl.Segmenter), so the full-text index, which only splits at separators, indexes words
 * rather than whole runs; search removes them from what it returns. `size` and `overlap`
 * count the text as written, without those separators.
 *
 * A chunk ends, in order of preference, at the last paragraph break or sentence end in the
 * second half of its window, else at the last word boundary, else (a single word longer than
 * `size`) exactly at `size`. Only windows of at most `size` characters are ever scanned or
 * segmented: on Node 20, Intl.Segmenter takes seconds on a few hundred kB in one string (worse
 * than quadratic), and a 10 MB text without blank lines is typical of PDFs.
 */
export function chunkText(
  fileName: string,
  text: string,
  { size = DEFAULT_SIZE, overlap = DEFAULT_OVERLAP }: ChunkOptions = {},
): string[] {
  if (!Number.isInteger(size) || size < 2 || !Number.isInteger(overlap) || overlap < 0 || overlap >= size / 2) {
    throw new RangeError(`Invalid chunk options: size ${size}, overlap ${overlap}`);
  }
  const header = `[${separateWords(fileName.replace(/[\u0000-\u001F\u007F-\u009F]+/g, ' '))}]\n`;
  const textEnd = text.trimEnd().length;
  const chunks: string[] = [];
  let start = skipWhitespace(text, 0);
  let previousEnd = start;
  while (start < textEnd) {
    let covered = skipWhitespace(text, previousEnd) - start;
    // An overlap followed by a long whitespace run would leave no room for new text: drop it.
    if (covered >= size / 2) {
      start += covered;
      covered = 0;
    }
    const cut = textEnd - start <= size ? textEnd : start + chunkLength(text, start, size, covered);
    const body = text.slice(start, cut).trimEnd();
    chunks.push(header + separateWords(body));
    if (cut >= textEnd) break;
    previousEnd = start + body.length;
    start = skipWhitespace(text, overlapStart(text, start, previousEnd, overlap));
  }
  return chunks;
}

/**
 * Length of the chunk starting at `start`, at most `size` and more than `covered` (the part
 * already in the previous chunk, up to the first new word), so every chunk brings new text.
 */
function chunkLength(text: string, start: number, size: number, covered: number): number {
  const window = text.slice(start, start + size + 1);
  const wellFilled = Math.max(Math.floor(size / 2), covered + 1);
  const paragraphEnd = lastParagraphBreak(window, wellFilled, size);
  if (paragraphEnd !== -1) return paragraphEnd;
  const sentenceEnd = lastSentenceEnd(window, wellFilled, size);
  if (sentenceEnd !== -1) return sentenceEnd;
  for (let length = size; length > covered; length--) {
    if (isBreakOpportunity(text, start + length)) return length;
  }
  // One word longer than the whole window: cut it, but never between a surrogate pair.
  return isHighSurrogate(text.charCodeAt(start + size - 1)) ? size - 1 : size;
}

function lastParagraphBreak(window: string, from: number, to: number): number {
  let last = -1;
  for (const { index } of window.matchAll(PARAGRAPH_BREAK)) {
    if (index >= from && index <= to) last = index;
  }
  return last;
}

function lastSentenceEnd(window: string, from: number, to: number): number {
  let last = -1;
  for (const { index } of sentenceSegmenter.segment(window)) {
    if (index >= from && index <= to) last = index;
  }
  return last;
}

/** Where the next chunk starts: the first word start within `overlap` of `end`, else `end`. */
function overlapStart(text: string, start: number, end: number, overlap: number): number {
  for (let position = Math.max(end - overlap, start + 1); position < end; position++) {
    if (isWordStart(text, position)) return position;
  }
  return end;
}

/** True when cutting before `position` keeps every word whole. */
function isBreakOpportunity(text: string, position: number): boolean {
  const before = text[position - 1] ?? '';
  const after = text[position] ?? '';
  return WHITESPACE.test(before) || WHITESPACE.test(after) || (CJK_CHARACTER.test(before) && CJK_CHARACTER.test(after));
}

function isWordStart(text: string, position: number): boolean {
  return !WHITESPACE.test(text[position] ?? ' ') && isBreakOpportunity(text, position);
}

function skipWhitespace(text: string, position: number): number {
  while (position < text.length && WHITESPACE.test(text[position]!)) position++;
  return position;
}

function isHighSurrogate(codeUnit: number): boolean {
  return codeUnit >= 0xd800 && codeUnit <= 0xdbff;
}
