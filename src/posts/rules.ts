import type { Column, SQL } from 'drizzle-orm';
import type { PostRow } from '../db/schema.js';
import { ifMatchHolds, notFound, preconditionFailed, validationError, type ErrorDetail } from '../errors.js';
import {
  MAX_AUTHOR_ID_LENGTH,
  MAX_CATEGORY_LENGTH,
  MAX_CONTENT_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_SLUG_LENGTH,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  MAX_TITLE_LENGTH,
  RESERVED_SLUGS,
  type PostListStatus,
  type Visibility,
} from '../limits.js';
import { foldText, slugify } from '../text/slug.js';
import { hasVisibleCharacter, isWellFormed, toWellFormed, truncateAtWord } from '../text/wellformed.js';
import { distinctTags } from './tags.js';
import { and, eq, isNotNull, or, sql } from '../db/orm.js';

/*
 * What both posts data layers share (SQLite's in service.ts, PostgreSQL's in pg-store.ts): the
 * types of their API and the rules that need no database. A post row has the same TypeScript
 * type on both databases (see pg-schema.ts). The steps of each write, which ask the database
 * questions between these rules, are shared too: see write-steps.ts.
 */

export type { PostRow };

export interface PostInput {
  title: string;
  description?: string | null;
  content?: string | null;
  category?: string | null;
  tags?: string[];
  authorId?: string | null;
  isDraft?: boolean;
  visibility?: Visibility;
  /**
   * When a draft is to be published (the post stays a draft until then). Null: no schedule.
   * Through the API it must lie ahead (checkSchedule); a job past it (a batch task written
   * late) publishes at once, with this time as `publishedAt`.
   */
  publishAt?: Date | null;
  /** An image of the site's media library (its id), shown with the post; null: none. */
  featureImage?: string | null;
  /** The feature image's alt text for this post (the image's own alt text when null). */
  featureImageAlt?: string | null;
  /** Whether the first publication mails the post to the site's subscribers (default true; only while the site's newsletters are on). */
  sendNewsletter?: boolean;
  /** Readers may comment (default true); false closes the post's comments, keeping those there are. */
  commentsEnabled?: boolean;
}

export interface PostOrigin {
  generatorProvider?: string;
  generatorModel?: string;
  sourceTaskId?: string;
}

export type PostPatch = Partial<PostInput> & { slug?: string };

/** A request's fields with `publishAt` as a time (the API takes it as ISO 8601 text, checked by the schema). */
export function withPublishTime<T extends { publishAt?: string | null }>(body: T): Omit<T, 'publishAt'> & { publishAt?: Date | null } {
  const { publishAt, ...rest } = body;
  return publishAt === undefined ? rest : { ...rest, publishAt: publishAt === null ? null : new Date(publishAt) };
}

/** A post before and after a change: `before` null for a create, `after` null for a delete. */
export interface PostChange {
  siteId: string;
  before: PostRow | null;
  after: PostRow | null;
  at: Date;
  /** Who made it: a user's id; null or absent for an API key or the service itself. */
  by?: string | null;
  /** A revision put back (its text is the change's): the revision kept says so. */
  restored?: boolean;
}

/** Who writes and how: the person (for revisions), the post's ETag the writer last saw (If-Match). */
export interface WriteContext {
  by?: string | null;
  ifMatch?: string;
  restored?: boolean;
}

/** A post's ETag: its `updatedAt`, which every change moves (strictly). */
export const postEtag = (updatedAt: Date) => `"${updatedAt.getTime().toString(36)}"`;

/** 412 unless `ifMatch` (an If-Match header) names the post's current ETag. */
export function checkIfMatch(post: PostRow, ifMatch: string | undefined): void {
  if (ifMatchHolds(ifMatch, postEtag(post.updatedAt))) return;
  throw preconditionFailed('The post changed since you opened it (someone saved it meanwhile, perhaps in another tab): reload it to see the other changes before saving', {
    etag: postEtag(post.updatedAt),
    updatedAt: post.updatedAt.toISOString(),
  });
}

export interface ListQuery {
  page: number;
  limit: number;
  /** draft | published (public) | unlisted | all; omitted lists drafts and public posts. */
  status?: PostListStatus;
  tag?: string;
  category?: string;
  q?: string;
}

/** The members of a list query that are not filters: a filter added to ListQuery is one without anyone listing it. */
const NOT_FILTERS = new Set<string>(['page', 'limit', 'status'] satisfies (keyof ListQuery)[]);

/**
 * Whether a list is by status alone (no filter given): its total is kept, its pages prepared.
 * Scheduled posts are counted among drafts, not apart: their list is a filter.
 */
export const isByStatus = (query: ListQuery) =>
  query.status !== 'scheduled' && Object.entries(query).every(([name, value]) => NOT_FILTERS.has(name) || value === undefined || value === '');

/**
 * What the API asks of a schedule: a time ahead of `now`, on a draft. `isDraft: false` with a
 * time ahead says two things at once. Errors name the field.
 */
export function checkSchedule(input: Pick<PostInput, 'publishAt' | 'isDraft'>, now: Date): void {
  const { publishAt } = input;
  if (!publishAt) return;
  if (publishAt.getTime() <= now.getTime()) {
    throw validationError('publishAt must lie in the future', [{ path: '/body/publishAt', message: 'must be a time after now' }]);
  }
  if (input.isDraft === false) {
    throw validationError('isDraft: false publishes now; publishAt schedules for later: give one of them', [
      { path: '/body/publishAt', message: 'cannot be given with isDraft: false' },
    ]);
  }
}

/** What a database can keep in a text (or JSON) column beyond well-formed Unicode. */
export interface TextLimits {
  /** SQLite stores U+0000 like any character; PostgreSQL refuses it in text and jsonb. */
  storesNul: boolean;
}

export const SQLITE_TEXT: TextLimits = { storesNul: true };
export const POSTGRES_TEXT: TextLimits = { storesNul: false };

export function cleanTitle(title: string): string {
  const trimmed = title.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_TITLE_LENGTH) {
    throw validationError(`title must be 1-${MAX_TITLE_LENGTH} characters`, [
      { path: '/body/title', message: `must be 1-${MAX_TITLE_LENGTH} characters after trimming` },
    ]);
  }
  // Zero-width spaces, bidi controls or lone combining marks alone make no title (nor a slug).
  if (!hasVisibleCharacter(trimmed)) {
    throw validationError('title must have visible characters', [{ path: '/body/title', message: 'must have at least one visible character' }]);
  }
  return trimmed;
}

const TEXT_FIELDS = ['title', 'slug', 'description', 'content', 'category', 'authorId', 'featureImageAlt'] as const;

/** The text fields (tags included) of `input` that fail `isAcceptable`, as error details. */
function refusedText(input: PostPatch, isAcceptable: (text: string) => boolean, message: string): ErrorDetail[] {
  const refused: ErrorDetail[] = [];
  for (const field of TEXT_FIELDS) {
    const value = input[field];
    if (typeof value === 'string' && !isAcceptable(value)) refused.push({ path: `/body/${field}`, message });
  }
  input.tags?.forEach((tag, index) => {
    if (!isAcceptable(tag)) refused.push({ path: `/body/tags/${index}`, message });
  });
  return refused;
}

const pathsOf = (details: ErrorDetail[]) => details.map((detail) => detail.path).join(', ');

/**
 * Text a client sends must be stored exactly as it is echoed: a lone UTF-16 surrogate (which
 * JSON allows as `\ud800`) cannot be stored in UTF-8, and PostgreSQL cannot store U+0000, so
 * such text is refused, naming the field.
 */
export function checkStorableText(input: PostPatch, limits: TextLimits): void {
  const illFormed = refusedText(input, isWellFormed, 'must be well-formed Unicode (no lone surrogates)');
  if (illFormed.length) throw validationError(`Ill-formed text: ${pathsOf(illFormed)} holds a lone UTF-16 surrogate`, illFormed);
  if (limits.storesNul) return;
  const withNul = refusedText(input, (text) => !text.includes('\0'), 'must not contain the NUL character (U+0000)');
  if (withNul.length) throw validationError(`Unstorable text: ${pathsOf(withNul)} holds a NUL character (U+0000)`, withNul);
}

/** Text as the database can keep it: lone surrogates replaced (storing would do it anyway), NULs dropped where refused. */
const storable = (text: string, limits: TextLimits) => (limits.storesNul ? toWellFormed(text) : toWellFormed(text).replace(/\0/g, ''));

/**
 * A generated post held to the limits of one written through the API: what a model returns
 * is cut at a word boundary where it is too long (a misbehaving model once returned 40 MiB of
 * content), its tags trimmed to the allowed number and length, text made storable.
 */
export function fitGenerated(input: PostInput, limits: TextLimits): PostInput {
  const fit = (value: string | null | undefined, max: number) => (typeof value === 'string' ? truncateAtWord(storable(value, limits), max) : value);
  const title = fit(input.title.trim(), MAX_TITLE_LENGTH)!;
  return {
    ...input,
    title: hasVisibleCharacter(title) ? title : 'Untitled',
    description: fit(input.description, MAX_DESCRIPTION_LENGTH),
    content: fit(input.content, MAX_CONTENT_LENGTH),
    category: fit(input.category, MAX_CATEGORY_LENGTH),
    authorId: fit(input.authorId, MAX_AUTHOR_ID_LENGTH),
    tags: distinctTags((input.tags ?? []).map((tag) => fit(tag, MAX_TAG_LENGTH)!)).slice(0, MAX_TAGS),
  };
}

export const optional = (value: string | null | undefined) => (value === undefined || value === null ? null : value);

/** The post, or 404 when the site has none of that id. */
export function found<T = PostRow>(post: T | undefined): T {
  if (!post) throw notFound('post');
  return post;
}

/**
 * A post's creation time: now, or a millisecond past the site's newest post when that is not
 * earlier. No two posts of a site share a creation time, so "newest first" is a total order
 * the list index holds as it is (no sort to break ties, whatever the page's depth).
 */
export const nextCreatedAt = (latest: Date | null, now: Date) => (latest && latest.getTime() >= now.getTime() ? new Date(latest.getTime() + 1) : now);

/** `updatedAt` must strictly increase even when two changes land in the same millisecond. */
export const nextUpdatedAt = (previous: Date, now: Date) => new Date(Math.max(now.getTime(), previous.getTime() + 1));

/** A slug a client asks for: already in slug form, within 80 characters, not a reserved word. */
export function requestedSlug(slug: string): string {
  if (slug.length === 0 || slug.length > MAX_SLUG_LENGTH || slugify(slug) !== slug || RESERVED_SLUGS.has(slug)) {
    throw validationError(`slug must be 1-${MAX_SLUG_LENGTH} characters of a-z, 0-9 and inner hyphens, and not a reserved word`, [
      { path: '/body/slug', message: 'must be lower-case letters, digits and inner hyphens, and not a reserved word' },
    ]);
  }
  return slug;
}

type CountedState = 'drafts' | 'public' | 'unlisted';

/** Which count a post is in: drafts, public or unlisted (null: it does not exist). */
function stateOf(post: PostRow | null): CountedState | null {
  if (!post) return null;
  if (post.isDraft) return 'drafts';
  return post.visibility === 'public' ? 'public' : 'unlisted';
}

export type PostCountValues = Record<CountedState, number>;

/**
 * What a change does to the site's post counts: `delta` to add to an existing row, `initial`
 * for a site with no row yet (never negative). Null when the post stays in the same count.
 */
/** A change to a site's post counts: `delta` added to them, or `initial` for a site without counts yet. */
export type PostCountChange = { delta: PostCountValues; initial: PostCountValues };

export function countChangeOf(change: PostChange): PostCountChange | null {
  const before = stateOf(change.before);
  const after = stateOf(change.after);
  if (before === after) return null;
  const delta = { drafts: 0, public: 0, unlisted: 0 };
  if (before) delta[before] -= 1;
  if (after) delta[after] += 1;
  return { delta, initial: { drafts: Math.max(delta.drafts, 0), public: Math.max(delta.public, 0), unlisted: Math.max(delta.unlisted, 0) } };
}

/** How many posts a list by status alone holds, from the site's counts (none: no post yet). */
export function totalOf(counts: PostCountValues | undefined, status: PostListStatus | undefined): number {
  if (!counts) return 0;
  switch (status) {
    case 'draft':
      return counts.drafts;
    case 'scheduled':
      // Not a count of its own (isByStatus): a list of them counts its rows.
      throw new Error('scheduled posts have no count of their own');
    case 'published':
      return counts.public;
    case 'unlisted':
      return counts.unlisted;
    case 'all':
      return counts.drafts + counts.public + counts.unlisted;
    default:
      return counts.drafts + counts.public;
  }
}

/** The columns of a posts table (SQLite's or PostgreSQL's) that lists filter on. */
export interface ListedColumns {
  isDraft: Column;
  visibility: Column;
  publishAt: Column;
  category: Column;
  title: Column;
  description: Column;
}

/** Which posts a status lists: omitted, drafts and public posts. */
export function statusFilter(posts: ListedColumns, status: PostListStatus | undefined): SQL | undefined {
  switch (status) {
    case 'draft':
      return eq(posts.isDraft, true);
    case 'scheduled':
      return and(eq(posts.isDraft, true), isNotNull(posts.publishAt));
    case 'published':
      return and(eq(posts.isDraft, false), eq(posts.visibility, 'public'));
    case 'unlisted':
      return and(eq(posts.isDraft, false), eq(posts.visibility, 'unlisted'));
    case 'all':
      return undefined;
    default:
      return or(eq(posts.isDraft, true), eq(posts.visibility, 'public'));
  }
}

/** Whether a list by `status` alone holds the post: statusFilter, in JS. */
export function inStatusList(status: PostListStatus | undefined, post: Pick<PostRow, 'isDraft' | 'visibility'> & { publishAt?: Date | null }): boolean {
  switch (status) {
    case 'draft':
      return post.isDraft;
    case 'scheduled':
      return post.isDraft && post.publishAt != null;
    case 'published':
      return !post.isDraft && post.visibility === 'public';
    case 'unlisted':
      return !post.isDraft && post.visibility === 'unlisted';
    case 'all':
      return true;
    default:
      return post.isDraft || post.visibility === 'public';
  }
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Filters and search fold case and accents, like slugs do (`fold()` is an SQL function on both
 * databases). Each database reads a post's JSON tags its own way: `hasTag` says how.
 */
export function searchFilters(posts: ListedColumns, query: ListQuery, hasTag: (tag: string) => SQL): SQL[] {
  const filters: SQL[] = [];
  if (query.category) filters.push(sql`fold(${posts.category}) = fold(${query.category})`);
  if (query.tag) filters.push(hasTag(query.tag));
  if (query.q) {
    const pattern = `%${escapeLike(foldText(query.q))}%`;
    filters.push(sql`(fold(${posts.title}) like ${pattern} escape '\\' or fold(${posts.description}) like ${pattern} escape '\\')`);
  }
  return filters;
}
