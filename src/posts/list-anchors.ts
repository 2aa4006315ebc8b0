/**
 * Where deep list pages start, remembered per list so a deep page costs O(page), not O(offset).
 *
 * An offset makes the database step over every index entry before it (5,000 entries for page
 * 250 of 20). An anchor is the creation time of the entry at offset k·STRIDE (k >= 1), with the
 * number of entries before it that share that creation time (posts created in one millisecond
 * before creation times were unique per site). A page at `offset` then starts at its anchor:
 * "created_at <= anchor, skip ties + (offset - k·STRIDE)", fewer than STRIDE entries stepped
 * over. Anchors are found by reading creation times alone, once, as far as the deepest page
 * asked for, and hold while the list's version (the site's content version, moved by every
 * post write) stays the same.
 */
export const ANCHOR_STRIDE = 100;

/** The entry at offset k·STRIDE: its creation time, and how many entries before it share that time. */
export interface Anchor {
  createdAt: number;
  ties: number;
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
export type CreationTimes = (from: number, skip: number, count: number) => number[];

interface ListAnchorsEntry {
  version: number;
  /** A deep page of this version was read by its plain offset: the next one finds anchors. */
  deepRead: boolean;
  anchors: Anchor[];
  /** The list has no entry at the next anchor's offset. */
  ended: boolean;
}

/** Anchors of up to `maxLists` lists (a list: one site and filter), the least recently used forgotten first. */
export class ListAnchors {
  private readonly lists = new Map<string, ListAnchorsEntry>();

  constructor(private readonly maxLists = 1000) {}

  /**
   * Where the page at `offset` of list `key` starts, or null for a plain offset: within the
   * first stride (as cheap), and for the first deeper page of a version (see below). `version`
   * is asked only for a deeper page.
   */
  locate(key: string, version: () => number, offset: number, creationTimes: CreationTimes): PageStart | null {
    const wanted = Math.floor(offset / ANCHOR_STRIDE);
    if (wanted === 0) return null;
    const entry = this.entryOf(key, version());
    // The first deep page of a version steps over its offset in the database: that costs less
    // than reading the creation times down to it, and a write may move the version before the
    // next deep page. Anchors pay from the second deep page of a version on.
    if (!entry.deepRead) {
      entry.deepRead = true;
      return null;
    }
    return this.locateIn(entry, wanted, offset, creationTimes);
  }

  private entryOf(key: string, version: number): ListAnchorsEntry {
    let entry = this.lists.get(key);
    if (entry?.version !== version) entry = { version, deepRead: false, anchors: [], ended: false };
    // Most recently used last: Map keeps insertion order.
    this.lists.delete(key);
    this.lists.set(key, entry);
    if (this.lists.size > this.maxLists) this.lists.delete(this.lists.keys().next().value!);
    return entry;
  }

  private locateIn(entry: ListAnchorsEntry, wanted: number, offset: number, creationTimes: CreationTimes): PageStart | null {
    if (entry.anchors.length < wanted && !entry.ended) extend(entry, wanted, creationTimes);
    const known = Math.min(wanted, entry.anchors.length);
    if (known === 0) return null;
    const anchor = entry.anchors[known - 1];
    return { from: anchor.createdAt, skip: anchor.ties + (offset - known * ANCHOR_STRIDE) };
  }

  /** Lists remembered (tests). */
  get size(): number {
    return this.lists.size;
  }
}

/** Reads creation times from the last known anchor (or the top) on, until anchor `wanted` is known or the list ends. */
function extend(entry: ListAnchorsEntry, wanted: number, creationTimes: CreationTimes): void {
  const last = entry.anchors.at(-1);
  // From the last anchor's own entry (read again to carry its ties on), or the top, down to the wanted anchor's entry.
  let offset = entry.anchors.length * ANCHOR_STRIDE;
  const count = (wanted - entry.anchors.length) * ANCHOR_STRIDE + 1;
  const times = last ? creationTimes(last.createdAt, last.ties, count) : creationTimes(Number.MAX_SAFE_INTEGER, 0, count);
  let previous = last?.createdAt;
  let ties = last ? last.ties - 1 : -1;
  for (const createdAt of times) {
    ties = createdAt === previous ? ties + 1 : 0;
    previous = createdAt;
    if (offset > 0 && offset % ANCHOR_STRIDE === 0 && offset / ANCHOR_STRIDE > entry.anchors.length) entry.anchors.push({ createdAt, ties });
    offset++;
  }
  if (times.length < count) entry.ended = true;
}
