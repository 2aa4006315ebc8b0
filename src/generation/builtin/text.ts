/** Text helpers of the builtin writer: word counts, templates, casing, lists. */

/** Letters and digits, Latin and beyond; the General Punctuation block (— … “) is not a word. */
export const WORD_PATTERN = /[A-Za-z0-9\u00C0-\u1FFF\u2070-\uFFFF]+(?:['’-][A-Za-z0-9\u00C0-\u1FFF\u2070-\uFFFF]+)*/g;

/** Words as a reader counts them: Markdown markers and punctuation do not count. */
export function countWords(text: string): number {
  return text.match(WORD_PATTERN)?.length ?? 0;
}

export function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (placeholder, key: string) => vars[key] ?? placeholder);
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const SMALL_WORDS = new Set(['a', 'an', 'and', 'as', 'at', 'but', 'by', 'for', 'in', 'nor', 'of', 'on', 'or', 'the', 'to', 'vs', 'with']);

/**
 * Title case: small words lower case except at the start or after a colon; words with capitals
 * of their own beyond the first letter (API, iOS, McDonald) stay as written.
 */
export function titleCase(text: string): string {
  const words = text.split(' ');
  return words
    .map((word, i) => {
      const startsPhrase = i === 0 || words[i - 1].endsWith(':');
      if (!startsPhrase && SMALL_WORDS.has(word.toLowerCase())) return word.toLowerCase();
      if (/\p{Lu}/u.test(word.slice(1))) return word;
      return capitalize(word);
    })
    .join(' ');
}

const CONTRACTIONS: readonly [RegExp, string][] = [
  [/\b([Ii])t is\b/g, "$1t's"],
  [/\b([Tt])hat is\b/g, "$1hat's"],
  [/\b([Tt])here is\b/g, "$1here's"],
  [/\b([Yy])ou are\b/g, "$1ou're"],
  [/\b([Yy])ou have\b/g, "$1ou've"],
  [/\b([Yy])ou will\b/g, "$1ou'll"],
  [/\b([Ll])et us\b/g, "$1et's"],
  [/\b([Dd])o not\b/g, "$1on't"],
  [/\b([Dd])oes not\b/g, "$1oesn't"],
  [/\b([Ii])s not\b/g, "$1sn't"],
  [/\b([Aa])re not\b/g, "$1ren't"],
  [/\bcannot\b/g, "can't"],
  [/\bwill not\b/g, "won't"],
];

export function contract(text: string): string {
  return CONTRACTIONS.reduce((acc, [pattern, replacement]) => acc.replace(pattern, replacement), text);
}

/** FNV-1a: a stable, cheap seed so the same topic always picks the same phrasing. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export function pick<T>(items: readonly T[], index: number): T {
  return items[index % items.length];
}

/** "a", "a and b", "a, b and c". */
export function listOf(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

export function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
