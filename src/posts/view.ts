import type { PostRow } from '../db/schema.js';
import { RawJson } from '../json.js';
import type { Pagination } from '../pagination.js';

/**
 * A post as the API shows it (GET /api/v1/posts/:id); each response schema picks its own subset.
 * Webhooks send the same. SQLite builds the same JSON itself for reads (`postJson` in
 * service.ts); a test holds the two equal.
 */
export const postResource = (post: PostRow) => ({
  id: post.id,
  slug: post.slug,
  title: post.title,
  description: post.description,
  content: post.content,
  category: post.category,
  tags: post.tags,
  cta: null,
  authorId: post.authorId,
  isDraft: post.isDraft,
  visibility: post.visibility,
  publishedAt: post.publishedAt,
  createdAt: post.createdAt,
  updatedAt: post.updatedAt,
});

/** A page of posts as the API shows them: one JSON array of `postResource`s, and its pagination. */
export interface PostsJsonPage {
  posts: RawJson;
  pagination: Pagination;
}

/** A JSON array of JSON texts. */
export const jsonArray = (items: readonly string[]) => new RawJson(`[${items.join(',')}]`);

/** `postResource` as JSON text (what SQLite builds itself, for a database that does not). */
export const postJsonText = (post: PostRow) => JSON.stringify(postResource(post));
