import type { WebhookEvent } from '../limits.js';
export { knowledgeResource } from '../knowledge/view.js';
export { postResource } from '../posts/view.js';
import type { PostChange, PostRow } from '../posts/rules.js';
import type { Task } from '../tasks/service.js';

/**
 * What a webhook delivers: `{ type, timestamp, data }` (the Standard Webhooks shape), where
 * `data` holds the resource as the API shows it (`post`, `task` or `knowledge`) and the `site`
 * ({ id, name }), as in the API's own answers.
 */
export interface EventPayload {
  type: WebhookEvent;
  timestamp: string;
  data: Record<string, unknown> & { site: { id: string; name: string } };
}

/** A task as GET /api/v1/tasks/:id shows it. */
export const taskResource = (task: Task) => ({ ...task });

/**
 * Which columns' change is an edit (a `post.updated` event), decided for every column of the
 * post row: a new column does not compile until someone decides. isDraft is publishing (its
 * own events); the rest is identity, provenance or bookkeeping that follows other changes.
 */
const EDITS: Record<keyof PostRow, boolean> = {
  id: false,
  siteId: false,
  title: true,
  slug: true,
  description: true,
  content: true,
  category: true,
  tags: true,
  authorId: true,
  isDraft: false,
  visibility: true,
  publishedAt: false,
  // Scheduling or moving a schedule is an edit; the publication it leads to is `post.published`.
  publishAt: true,
  featureImage: true,
  featureImageAlt: true,
  commentsEnabled: true,
  generatorProvider: false,
  generatorModel: false,
  sourceTaskId: false,
  // Marking a draft for review, or sharing its preview, changes nothing readers or integrations see.
  reviewRequestedAt: false,
  previewToken: false,
  html: false,
  readingTime: false,
  sendNewsletter: true,
  createdAt: false,
  updatedAt: false,
};
const EDITED_FIELDS = (Object.keys(EDITS) as (keyof PostRow)[]).filter((field) => EDITS[field]);

/** The fields an edit changed, with their values before it. */
export function changedFields(before: PostRow, after: PostRow): Partial<PostRow> {
  const previous: Record<string, unknown> = {};
  for (const field of EDITED_FIELDS) {
    const was = before[field];
    const is = after[field];
    if (Array.isArray(was) && Array.isArray(is) ? was.length !== is.length || was.some((tag, i) => tag !== is[i]) : was !== is) previous[field] = was;
  }
  return previous as Partial<PostRow>;
}

/**
 * The events one post change makes: a create (also `post.published` when it is created
 * published), a delete, publishing or unpublishing (isDraft flipped), and an edit of any
 * other field; an edit that also publishes makes both.
 */
export function postEvents(change: PostChange): { type: WebhookEvent; post: PostRow; previous?: Partial<PostRow> }[] {
  const { before, after } = change;
  if (!before && after) return [{ type: 'post.created', post: after }, ...(after.isDraft ? [] : [{ type: 'post.published' as const, post: after }])];
  if (before && !after) return [{ type: 'post.deleted', post: before }];
  if (!before || !after) return [];
  const events: { type: WebhookEvent; post: PostRow; previous?: Partial<PostRow> }[] = [];
  const previous = changedFields(before, after);
  if (Object.keys(previous).length > 0) events.push({ type: 'post.updated', post: after, previous });
  if (before.isDraft && !after.isDraft) events.push({ type: 'post.published', post: after });
  if (!before.isDraft && after.isDraft) events.push({ type: 'post.unpublished', post: after });
  return events;
}
