import type { CommentRow } from '../db/schema.js';
import type { CommentWithPost } from './port.js';
import { commentHtml, visibleText } from './render.js';

/** A comment as readers (pages, content API, webhooks) see it: never its email, status or hold reason. */
export const publicComment = (row: CommentRow) => ({
  id: row.id,
  postId: row.postId,
  parentId: row.parentId,
  authorName: visibleText(row.authorName),
  body: row.body,
  html: commentHtml(row.body),
  byStaff: row.byStaff,
  createdAt: row.createdAt,
});

/** A comment as a reader's own submission is answered: what readers may see, and whether it waits. */
export const submittedComment = (row: CommentRow) => ({ ...publicComment(row), status: row.status === 'approved' ? ('approved' as const) : ('pending' as const) });

/** A comment as staff see it: with its status, why it was held, whether an email is kept, and its post. */
export const staffComment = (row: CommentWithPost | (CommentRow & { postTitle?: string; postSlug?: string })) => ({
  ...publicComment(row),
  status: row.status,
  heldFor: row.heldFor,
  authorEmail: row.authorEmail,
  post: { id: row.postId, title: row.postTitle ?? null, slug: row.postSlug ?? null },
});
