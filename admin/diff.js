// @ts-check
// A line diff for comparing a revision with the text now: the longest common subsequence of
// lines, which is exact and fast enough for a post (a few hundred lines).

/** Lines past this many on both sides are compared as one block each (the table would be too big). */
const MAX_LINES = 2000;

/**
 * The lines of `before` and `after` in order, each marked `=` (in both), `-` (only before) or
 * `+` (only after).
 * @param {string} before
 * @param {string} after
 * @returns {['=' | '-' | '+', string][]}
 */
export function lineDiff(before, after) {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length * b.length > MAX_LINES * MAX_LINES) return [...a.map((line) => /** @type {['-', string]} */ (['-', line])), ...b.map((line) => /** @type {['+', string]} */ (['+', line]))];
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lengths = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lengths[i][j] = a[i] === b[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
  }
  /** @type {['=' | '-' | '+', string][]} */
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push(['=', a[i]]);
      i++;
      j++;
    } else if (lengths[i + 1][j] >= lengths[i][j + 1]) out.push(['-', a[i++]]);
    else out.push(['+', b[j++]]);
  }
  while (i < a.length) out.push(['-', a[i++]]);
  while (j < b.length) out.push(['+', b[j++]]);
  return out;
}
