/**
 * Checks on text that clients and models send: well-formed UTF-16 (SQLite stores UTF-8, which
 * cannot hold a lone surrogate: it would come back as U+FFFD) and visible characters.
 */

// Without the `u` flag, the classes match UTF-16 code units, so halves of a pair are seen.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** False when `text` holds a lone UTF-16 surrogate (it cannot be stored as it is). */
export const isWellFormed = (text: string) => !LONE_SURROGATE.test(text);

/** Lone surrogates replaced by U+FFFD: what storing the text would do anyway, made explicit. */
export const toWellFormed = (text: string) => text.replace(LONE_SURROGATES, '\uFFFD');

/**
 * A character that shows: not whitespace, not a control or format character (zero-width
 * spaces and joiners, bidi controls, soft hyphen, BOM), not a lone combining mark, and none
 * of the fillers that render blank (Hangul fillers, Braille blank, variation selectors).
 */
const VISIBLE = /[^\p{White_Space}\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Mn}\p{Me}\u115F\u1160\u3164\uFFA0\u2800\u180E]/u;

export const hasVisibleCharacter = (text: string) => VISIBLE.test(text);

/**
 * Bidirectional controls (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI, LRM, RLM, ALM): they
 * reorder what a reader sees ("invoice\u202Efdp.exe" shows as "invoiceexe.pdf").
 */
export const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;

/**
 * `text` cut to at most `max` UTF-16 code units, at the last word boundary in its last
 * fifth when there is one, with an ellipsis; never through a surrogate pair.
 */
export function truncateAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  const lastSpace = cut.search(/\s\S*$/);
  if (lastSpace >= Math.floor(max * 0.8)) cut = cut.slice(0, lastSpace);
  return `${cut.trimEnd()}…`;
}
