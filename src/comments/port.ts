import type { CommentRow } from '../db/schema.js';
import type { CommentStatus } from '../limits.js';

/*
 * What the comments store (store.ts) asks its database. A comment is a row of its site and
 * post; replies point at a parent (one level deep).
 */

/** A comment with the post it belongs to, as staff lists show it. */
export interface CommentWithPost extends CommentRow {
  postTitle: string;
  postSlug: string;
}

export interface CommentFilter {
  status?: CommentStatus;
  postId?: string;
}

export interface CommentsPort {
  insert(row: CommentRow): void;
  find(siteId: string, id: string): CommentRow | undefined;
  setStatus(id: string, status: CommentStatus, heldFor: string | null): void;
  /** Deletes a comment and its replies; answers the statuses of what went. */
  remove(id: string): CommentStatus[];
  /** Deletes every comment of a post. */
  removeForPost(postId: string): void;
  /** A post's approved comments, oldest first (`limit` of them from `offset`), and how many there are. */
  approved(postId: string, limit: number, offset: number): { rows: CommentRow[]; total: number };
  /** A site's comments, newest first, with their post, and how many match. */
  list(siteId: string, filter: CommentFilter, limit: number, offset: number): { rows: CommentWithPost[]; total: number };
  /** How many of a site's comments have `status`, per post when `postId` is given. */
  count(siteId: string, status: CommentStatus, postId?: string): number;
  /** Whether the site has an approved comment by this (folded) email. */
  knownAuthor(siteId: string, email: string): boolean;
  /** Forgets a (folded) email on every comment of the site; answers how many comments held it. */
  eraseEmail(siteId: string, email: string): number;
  /** Claims the post's mail to staff: true (noted at `now`) when none was sent since `since`. */
  claimNotice(siteId: string, postId: string, now: Date, since: Date): boolean;
  /** The addresses of the site's owners and editors who take mail about pending comments (owners unless they said no, editors if they said yes). */
  noticeRecipients(siteId: string): string[];
  /** A person's own choice of that mail on a site; undefined when they made none. */
  mailChoice(userId: string, siteId: string): boolean | undefined;
  setMailChoice(userId: string, siteId: string, enabled: boolean): void;
}

declare module '../db/steps.js' {
  interface Ports {
    comments: CommentsPort;
  }
}
