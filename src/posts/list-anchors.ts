import type { Steps } from '../db/steps.js';
import type { PostListStatus } from '../limits.js';
import { inStatusList, type PostChange } from './rules.js';

/**
 * Where deep list pages start, remembered per list so a deep page costs O(page), not O(offset).
 *
 * An offset makes the database step over every index entry before it (5,000 entries for page
 * 250 of 20). An anchor is an entry found at offset k·STRIDE (k >= 1): its creation time, the
 * number of entries before it that share that creation time (posts created in one millisecond
 * before creation times were unique per site), and its offset. A page at `offset` starts at the
 * last anchor at or before it: "created_at <= anchor, skip ties + (offset - anchor's offset)",
 * about a stride of entries stepped over. Anchors are found by reading creation times alone, as
 * far as the deepest page asked for.
 *
 * Anchors hold for one content version of the site. A post write of this process moves them
 * with it (`moved`): a post entering or leaving a list before an anchor moves the anchor's
 * offset by one, and new posts come first, so the anchors stay valid across writes. Anything
 * else (another connection's write, a rolled-back one, a gap grown past two strides) shows as
 * a version the anchors were not moved to, and they are found again.
 */
export const ANCHOR_STRIDE = 100;

/** Past this many entries between two anchors (or before the first), a list's anchors are found again. */
const MAX_GAP = 2 * ANCHOR_STRIDE;

/** An entry of the list: its creation time, how many entries before it share that time, and where it is. */
export interface Anchor {
  createdAt: number;
  ties: number;
  offset: number;
}

/** Where a page starts: `skip` entries into the list from the first entry with createdAt <= `from`. */
export interface PageStart {
  from: number;
  skip: number;
}

/**
 * Creation times of the list's entries in list order, `count` of them at most, starting with the
 * entry `skip` entries after the first one at or before `from`.
 */
export type CreationTimes = (from: number, skip: number, count: number) => Steps<number[]>;

interface ListAnchorsEntry {
  siteId: string;
  status: PostListStatus | undefined;
  version: number;
  /** A deep page of the list was read by its plain offset: the next one finds anchors. */
  deepRead: boolean;
  /** In list order. */
  anchors: Anchor[];
  /** The list has no entry at the next anchor's offset. */
  ended: boolean;
}

/** Anchors of up to `maxLists` lists (a list: one site and status), the least recently used forgotten first. */
export class ListAnchors {
  private readonly lists = new Map<string, ListAnchorsEntry>();

  constructor(private readonly maxLists = 1000) {}

  /**
   * Where the page at `offset` of the list starts, or null for a plain offset: within the
   * first stride (as cheap), and for the first deep page of a list (one read of it costs less
   * by offset than finding the anchors down to it; they pay from the second on).
   */
  *locate(siteId: string, status: PostListStatus | undefined, version: number, offset: number, creationTimes: CreationTimes): Steps<PageStart | null> {
    if (offset < ANCHOR_STRIDE) return null;
    const entry = this.entryOf(siteId, status, version);
    if (!entry.deepRead) {
      entry.deepRead = true;
      return null;
    }
    const last = entry.anchors.at(-1);
    if (!entry.ended && (last?.offset ?? 0) + ANCHOR_STRIDE <= offset) yield* extend(entry, offset, creationTimes);
    const anchor = lastAtOrBefore(entry.anchors, offset);
    return anchor ? { from: anchor.createdAt, skip: anchor.ties + (offset - anchor.offset) } : null;
  }

  /**
   * Moves the anchors of the change's site with a post write that took its content version to
   * `version` (inside the write's transaction: should it roll back, the database's version is
   * not the anchors', and they are found again).
   */
  moved(change: PostChange, version: number | null): void {
    const post = change.after ?? change.before;
    if (!post) return;
    const createdAt = post.createdAt.getTime();
    for (const [key, entry] of this.lists) {
      if (entry.siteId !== change.siteId) continue;
      if (version === null || entry.version !== version - 1 || !shift(entry, createdAt, change)) {
        this.lists.delete(key);
        continue;
      }
      entry.version = version;
    }
  }

  private entryOf(siteId: string, status: PostListStatus | undefined, version: number): ListAnchorsEntry {
    const key = `${siteId}|${String(status)}`;
    let entry = this.lists.get(key);
    if (entry?.version !== version) entry = { siteId, status, version, deepRead: false, anchors: [], ended: false };
    // Most recently used last: Map keeps insertion order.
    this.lists.delete(key);
    this.lists.set(key, entry);
    if (this.lists.size > this.maxLists) this.lists.delete(this.lists.keys().next().value!);
    return entry;
  }

  /** Lists remembered (tests). */
  get size(): number {
    return this.lists.size;
  }
}

/**
 * Moves a list's anchors for a post (created at `createdAt`) entering or leaving it: those
 * after the post (older) move by one. False when they cannot be kept: the post shares an
 * anchor's creation time (the run of ties the anchor counts in changed, and anchors found on
 * from it could count theirs wrong), or a gap has grown past MAX_GAP.
 */
function shift(entry: ListAnchorsEntry, createdAt: number, change: PostChange): boolean {
  const before = change.before !== null && inStatusList(entry.status, change.before);
  const after = change.after !== null && inStatusList(entry.status, change.after);
  if (before === after) return true;
  const delta = after ? 1 : -1;
  let previous = 0;
  for (const anchor of entry.anchors) {
    if (anchor.createdAt === createdAt) return false;
    if (anchor.createdAt < createdAt) anchor.offset += delta;
    if (anchor.offset - previous > MAX_GAP) return false;
    previous = anchor.offset;
  }
  // The list grew or shrank: whether it reaches the next anchor is read again when asked.
  entry.ended = false;
  return true;
}

/** The last anchor at or before `offset` (anchors are in list order). */
function lastAtOrBefore(anchors: readonly Anchor[], offset: number): Anchor | undefined {
  let low = 0;
  let high = anchors.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (anchors[middle]!.offset <= offset) low = middle + 1;
    else high = middle;
  }
  return anchors[low - 1];
}

/** Reads creation times from the last anchor (or the top) on, until an anchor at or past `offset - STRIDE` is known or the list ends. */
function* extend(entry: ListAnchorsEntry, offset: number, creationTimes: CreationTimes): Steps<void> {
  const last = entry.anchors.at(-1);
  // From the last anchor's own entry (read again to carry its ties on), or the top, down to the wanted anchor's entry.
  let at = last?.offset ?? 0;
  const wanted = Math.floor((offset - at) / ANCHOR_STRIDE);
  const count = wanted * ANCHOR_STRIDE + 1;
  const times = last ? yield* creationTimes(last.createdAt, last.ties, count) : yield* creationTimes(Number.MAX_SAFE_INTEGER, 0, count);
  const first = at;
  let previous = last?.createdAt;
  let ties = last ? last.ties - 1 : -1;
  for (const createdAt of times) {
    ties = createdAt === previous ? ties + 1 : 0;
    previous = createdAt;
    if (at > first && (at - first) % ANCHOR_STRIDE === 0) entry.anchors.push({ createdAt, ties, offset: at });
    at++;
  }
  if (times.length < count) entry.ended = true;
}
