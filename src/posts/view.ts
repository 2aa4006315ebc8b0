import type { PostRow } from '../db/schema.js';
import { RawJson } from '../json.js';
import type { Pagination } from '../pagination.js';

/** How the API shows a column of a post: as it is, as JSON it holds, a flag, an ISO time, or not at all. */
export type MemberKind = 'text' | 'json' | 'boolean' | 'time' | 'hidden';

/**
 * A post as the API shows it (GET /api/v1/posts/:id), member by member in the order they are
 * written. Every column of a post is listed, shown or hidden: a new column does not compile
 * until someone decides. `cta` is a member no column holds (always null). Each response schema
 * picks its own subset; webhooks send the same; the databases' JSON is built from this list.
 */
export const POST_MEMBERS = {
  id: 'text',
  siteId: 'hidden',
  slug: 'text',
  title: 'text',
  description: 'text',
  content: 'text',
  category: 'text',
  tags: 'json',
  cta: 'null',
  authorId: 'text',
  isDraft: 'boolean',
  visibility: 'text',
  publishedAt: 'time',
  publishAt: 'time',
  featureImage: 'text',
  featureImageAlt: 'text',
  commentsEnabled: 'boolean',
  generatorProvider: 'text',
  generatorModel: 'text',
  sourceTaskId: 'hidden',
  reviewRequestedAt: 'time',
  previewToken: 'hidden',
  html: 'hidden',
  readingTime: 'hidden',
  sendNewsletter: 'boolean',
  createdAt: 'time',
  updatedAt: 'time',
} as const satisfies { [K in keyof PostRow]-?: MemberKind } & { cta: 'null' };

type Members = typeof POST_MEMBERS;
type ShownColumn = { [K in keyof PostRow]: Members[K] extends 'hidden' ? never : K }[keyof PostRow];
export type PostResource = { [K in ShownColumn]: PostRow[K] } & { cta: null };

/** The shown members in order: a column's name, or `cta` (null). */
export const RESOURCE_MEMBERS = Object.entries(POST_MEMBERS).filter(([, kind]) => kind !== 'hidden') as [ShownColumn | 'cta', Exclude<MemberKind, 'hidden'> | 'null'][];

export const postResource = (post: PostRow): PostResource => {
  const resource: Record<string, unknown> = {};
  for (const [name, kind] of RESOURCE_MEMBERS) resource[name] = kind === 'null' ? null : post[name as ShownColumn];
  return resource as PostResource;
};

/** A page of posts as the API shows them: one JSON array of `postResource`s, and its pagination. */
export interface PostsJsonPage {
  posts: RawJson;
  pagination: Pagination;
}

/** A JSON array of JSON texts. */
export const jsonArray = (items: readonly string[]) => new RawJson(`[${items.join(',')}]`);

/** `postResource` as JSON text (for a database that does not build it itself). */
export const postJsonText = (post: PostRow) => JSON.stringify(postResource(post));
