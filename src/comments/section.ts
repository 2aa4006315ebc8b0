import type { CommentRow } from '../db/schema.js';
import { commentHtml, visibleText } from './render.js';

/** What the comment form shows again after a submission: a notice, or the problems beside what was typed. */
export interface CommentFormState {
  notice?: string;
  values?: { name?: string; email?: string; body?: string; parentId?: string };
  /** Problem per field (`name`, `email`, `body`, `parentId`, `form`). */
  errors?: Record<string, string>;
}

export interface CommentItem {
  id: string;
  name: string;
  html: string;
  createdAt: Date;
  byStaff: boolean;
  replies: CommentItem[];
}

/** The comments below a post, as its page shows them. */
export interface CommentsSection {
  count: number;
  items: CommentItem[];
  /** `open`: the form; `closed`: "Comments are closed". */
  state: 'open' | 'closed';
  form: CommentFormState;
}

const item = (row: CommentRow): CommentItem => ({
  id: row.id,
  name: visibleText(row.authorName),
  html: commentHtml(row.body),
  createdAt: row.createdAt,
  byStaff: row.byStaff,
  replies: [],
});

/** Approved comments (oldest first) as threads one level deep: replies under their parent. */
export function commentThreads(rows: readonly CommentRow[]): CommentItem[] {
  const top: CommentItem[] = [];
  const byId = new Map<string, CommentItem>();
  for (const row of rows) if (row.parentId === null) byId.set(row.id, item(row));
  for (const row of rows) {
    if (row.parentId === null) top.push(byId.get(row.id)!);
    else byId.get(row.parentId)?.replies.push(item(row));
  }
  return top;
}
