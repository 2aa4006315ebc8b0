import { findLinks } from '../text/links.js';

/*
 * The spam guard's rules over what was submitted, free of HTTP and of the database: each
 * answers the reason a submission breaks it, or null.
 */

/** Most links a submission may carry before it waits for a person. */
export const MAX_LINKS = 3;
/** The hidden field a person never sees, so never fills; robots that fill every field do. */
export const HONEYPOT_FIELD = 'website';
/** The field the proof-of-work widget submits its solution in. */
export const PROOF_FIELD = 'altcha';
/** Most blocked words a site may list, and the longest one. */
export const MAX_BLOCKED_WORDS = 500;
export const MAX_BLOCKED_WORD_LENGTH = 100;

/** A filled honeypot. */
export function honeypotReason(value: string | undefined | null): string | null {
  return value !== undefined && value !== null && value.trim() !== '' ? 'honeypot field filled' : null;
}

/** More than `max` links over the texts together. */
export function linksReason(texts: readonly string[], max = MAX_LINKS): string | null {
  const count = texts.reduce((sum, text) => sum + findLinks(text).length, 0);
  return count > max ? `${count} links` : null;
}

/** Letters folded for comparison: case and accents ignored, compatibility forms unified. */
const fold = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase();

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The first blocked word or phrase found in the texts, as a whole word (`ass` does not block
 * `class`), case and accents ignored. Invisible format characters (zero-width joiners, bidi
 * controls) are dropped first, so they cannot hide a word.
 */
export function blockedWordReason(texts: readonly string[], blockedWords: readonly string[]): string | null {
  if (blockedWords.length === 0) return null;
  const haystack = fold(texts.join('\n').replace(/\p{Cf}/gu, ''));
  for (const word of blockedWords) {
    const needle = fold(word.trim());
    if (needle === '') continue;
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(needle)}(?![\\p{L}\\p{N}])`, 'u');
    if (pattern.test(haystack)) return `blocked word "${word.trim()}"`;
  }
  return null;
}

/** A form submitted sooner than a person could have filled it. */
export function fillTimeReason(shownAt: number, submittedAt: number, minimumMs: number): string | null {
  const elapsed = submittedAt - shownAt;
  return elapsed < minimumMs ? `submitted ${Math.max(0, Math.round(elapsed / 100) / 10)} s after the form was shown` : null;
}

/** Blocked words as a site stores them: trimmed, without empties or repeats (case-insensitive), in the order given. */
export function normaliseBlockedWords(words: readonly string[]): string[] {
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const raw of words) {
    const word = raw.trim();
    const key = fold(word);
    if (word === '' || seen.has(key)) continue;
    seen.add(key);
    kept.push(word);
  }
  return kept;
}
