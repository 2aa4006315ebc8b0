import type { PostRow } from '../db/schema.js';

/** A post as the API shows it (GET /api/v1/posts/:id); each response schema picks its own subset. Webhooks send the same. */
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
