import type { MediaRow } from '../db/schema.js';

/** What the media store (store.ts) asks its database (see src/db/steps.ts). */
export interface MediaPort {
  insert(row: MediaRow): void;
  /** The site's image with this id. */
  get(siteId: string, id: string): MediaRow | undefined;
  /** The site's images with these ids (any order; unknown ids left out). */
  byIds(siteId: string, ids: readonly string[]): MediaRow[];
  /** The site's images, newest first: `limit` of them from `offset`, and how many in all. */
  page(siteId: string, limit: number, offset: number): { rows: MediaRow[]; total: number };
  /** Sets an image's alt text; the row after, or undefined when there is none. */
  setAlt(siteId: string, id: string, alt: string): MediaRow | undefined;
  /** Deletes the image's row; the row it was, or undefined when there was none. */
  remove(siteId: string, id: string): MediaRow | undefined;
  /** Clears the image from the site's posts that show it as their feature image; how many. */
  clearFeatureImage(siteId: string, id: string): number;
  /** Bytes of every stored file of the site's images. */
  totalBytes(siteId: string): number;
}

declare module '../db/steps.js' {
  interface Ports {
    media: MediaPort;
  }
}
