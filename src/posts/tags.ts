import { validationError } from '../errors.js';
import { MAX_TAGS } from '../limits.js';

/** Trimmed, non-empty, de-duplicated case-insensitively (the first spelling wins). */
export function distinctTags(tags: readonly string[] | undefined): string[] {
  const seen = new Set<string>();
  const result: string[] = [];
  for (const raw of tags ?? []) {
    const tag = raw.trim();
    if (!tag || seen.has(tag.toLowerCase())) continue;
    seen.add(tag.toLowerCase());
    result.push(tag);
  }
  return result;
}

/** distinctTags(), refusing more than 20. */
export function cleanTags(tags: readonly string[] | undefined): string[] {
  const result = distinctTags(tags);
  if (result.length > MAX_TAGS) {
    throw validationError(`at most ${MAX_TAGS} distinct tags`, [{ path: '/body/tags', message: `must hold at most ${MAX_TAGS} distinct tags` }]);
  }
  return result;
}
