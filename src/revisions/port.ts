import type { PendingChangeRow, PostRevisionRow } from '../db/schema.js';

/** A revision as the API lists it: the row and the name of who saved it (display name, else email). */
export type RevisionListed = PostRevisionRow & { authorName: string | null };

/** What the revisions store (store.ts) asks its database (see src/db/steps.ts). */
export interface RevisionPort {
  insert(row: PostRevisionRow): void;
  /** Deletes the post's revisions older than its `keep` newest. */
  thin(postId: string, keep: number): void;
  /** The post's revisions, newest first, `limit` at most. */
  list(siteId: string, postId: string, limit: number): RevisionListed[];
  get(siteId: string, postId: string, revisionId: string): PostRevisionRow | undefined;
  /** The published post's edits waiting for "Update". */
  pending(siteId: string, postId: string): PendingChangeRow | undefined;
  /** Writes the post's pending change (one per post). */
  savePending(row: PendingChangeRow): void;
  /** Drops the post's pending change; whether there was one. */
  clearPending(postId: string): boolean;
  /** The name readers see for each of these users who has one (display name, else nothing). */
  displayNames(userIds: readonly string[]): { id: string; displayName: string | null; email: string }[];
}

declare module '../db/steps.js' {
  interface Ports {
    revisions: RevisionPort;
  }
}
