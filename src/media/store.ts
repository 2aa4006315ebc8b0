import type { MediaRow } from '../db/schema.js';
import { ask, type StepDatabase } from '../db/steps.js';

/** A page of a site's images, newest first. */
export interface MediaPage {
  rows: MediaRow[];
  total: number;
}

/**
 * The rows of a site's media library, written once for both databases. Changes readers can see
 * (an alt text, an image gone from posts) move the site's content version, so no kept page
 * or post shows the old one.
 */
export class MediaStore {
  constructor(private readonly db: StepDatabase) {}

  insert(row: MediaRow): Promise<void> {
    return this.db.write(() => ask('media', 'insert', row));
  }

  get(siteId: string, id: string): Promise<MediaRow | undefined> {
    return this.db.read(() => ask('media', 'get', siteId, id));
  }

  byIds(siteId: string, ids: readonly string[]): Promise<MediaRow[]> {
    return this.db.read(() => ask('media', 'byIds', siteId, ids));
  }

  page(siteId: string, limit: number, offset: number): Promise<MediaPage> {
    return this.db.read(() => ask('media', 'page', siteId, limit, offset));
  }

  totalBytes(siteId: string): Promise<number> {
    return this.db.read(() => ask('media', 'totalBytes', siteId));
  }

  setAlt(siteId: string, id: string, alt: string, now = new Date()): Promise<MediaRow | undefined> {
    return this.db.write(function* () {
      const row = yield* ask('media', 'setAlt', siteId, id, alt);
      if (row) yield* ask('sites', 'touchContent', siteId, now);
      return row;
    });
  }

  /** Deletes the image's row and clears it from the posts showing it, in one transaction; the row it was. */
  remove(siteId: string, id: string, now = new Date()): Promise<MediaRow | undefined> {
    return this.db.write(function* () {
      const row = yield* ask('media', 'remove', siteId, id);
      if (!row) return undefined;
      yield* ask('media', 'clearFeatureImage', siteId, id);
      yield* ask('sites', 'touchContent', siteId, now);
      return row;
    });
  }
}
