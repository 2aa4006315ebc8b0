import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, gte, inArray, lt, max, or, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { driverRow, placeholderRow, prepared, WRITE_TRANSACTION, type Executor } from '../db/client.js';
import { postCounts, postSlugRedirects, posts, slugCounters, type PostRow } from '../db/schema.js';
import { conflict, notFound, validationError } from '../errors.js';
import {
  MAX_AUTHOR_ID_LENGTH,
  MAX_CATEGORY_LENGTH,
  MAX_CONTENT_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_SLUG_LENGTH,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  MAX_TITLE_LENGTH,
  POST_LIST_STATUSES,
  RESERVED_SLUGS,
  type PostListStatus,
  type Visibility,
} from '../limits.js';
import { paginate, type Page } from '../pagination.js';
import { foldText, slugify, uniqueSlug } from '../text/slug.js';
import { hasVisibleCharacter, isWellFormed, toWellFormed, truncateAtWord } from '../text/wellformed.js';
import { cleanTags, distinctTags } from './tags.js';
import { touchSiteContent } from '../sites/settings.js';

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
}

export interface PostOrigin {
  generatorProvider?: string;
  generatorModel?: string;
  sourceTaskId?: string;
}

export type PostPatch = Partial<PostInput> & { slug?: string };

/** A post before and after a change: `before` null for a create, `after` null for a delete. */
export interface PostChange {
  siteId: string;
  before: PostRow | null;
  after: PostRow | null;
  at: Date;
}

/** Runs inside the transaction of the change it is told about. */
export type PostChangeListener = (tx: Executor, change: PostChange) => void;
type ChangeRecorder = PostChangeListener;

export interface ListQuery {
  page: number;
  limit: number;
  /** draft | published (public) | unlisted | all; omitted lists drafts and public posts. */
  status?: PostListStatus;
  tag?: string;
  category?: string;
  q?: string;
}

function cleanTitle(title: string): string {
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

const TEXT_FIELDS = ['title', 'slug', 'description', 'content', 'category', 'authorId'] as const;

/**
 * Text a client sends must be stored exactly as it is echoed: a lone UTF-16 surrogate (which
 * JSON allows as `\ud800`) cannot be stored in UTF-8, so it is refused, naming the field.
 */
function checkWellFormed(input: PostPatch): void {
  const bad: { path: string; message: string }[] = [];
  for (const field of TEXT_FIELDS) {
    const value = input[field];
    if (typeof value === 'string' && !isWellFormed(value)) bad.push({ path: `/body/${field}`, message: 'must be well-formed Unicode (no lone surrogates)' });
  }
  input.tags?.forEach((tag, index) => {
    if (!isWellFormed(tag)) bad.push({ path: `/body/tags/${index}`, message: 'must be well-formed Unicode (no lone surrogates)' });
  });
  if (bad.length) throw validationError(`Ill-formed text: ${bad.map((b) => b.path).join(', ')} holds a lone UTF-16 surrogate`, bad);
}

/**
 * A generated post held to the limits of one written through the API: what a model returns
 * is cut at a word boundary where it is too long (a misbehaving model once returned 40 MiB of
 * content), its tags trimmed to the allowed number and length, lone surrogates replaced.
 */
function fitGenerated(input: PostInput): PostInput {
  const fit = (value: string | null | undefined, max: number) => (typeof value === 'string' ? truncateAtWord(toWellFormed(value), max) : value);
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

const optional = (value: string | null | undefined) => (value === undefined || value === null ? null : value);

/** The highest N among the site's slugs `<base>-N`, read from the (site, slug) index; 1 when none. */
function highestSuffix(db: Executor, siteId: string, base: string): number {
  const start = base.length + 2;
  // '-' and '.' are adjacent characters, so the range is exactly "starts with <base>-".
  const row = db.get<{ n: number | null }>(sql`
    select max(cast(substr(${posts.slug}, ${start}) as integer)) as n from ${posts}
     where ${posts.siteId} = ${siteId} and ${posts.slug} > ${`${base}-`} and ${posts.slug} < ${`${base}.`}
       and substr(${posts.slug}, ${start}) not glob '*[^0-9]*'`);
  return row.n ?? 1;
}

// A post write runs these every time: each is prepared once (see `prepared`).
const selectSlugHolder = (db: Executor) =>
  db
    .select({ id: posts.id })
    .from(posts)
    .where(and(eq(posts.siteId, sql.placeholder('siteId')), eq(posts.slug, sql.placeholder('slug'))))
    .prepare();
const selectSlugCounter = (db: Executor) =>
  db
    .select({ last: slugCounters.last })
    .from(slugCounters)
    .where(and(eq(slugCounters.siteId, sql.placeholder('siteId')), eq(slugCounters.base, sql.placeholder('base'))))
    .prepare();
const saveSlugCounter = (db: Executor) =>
  db
    .insert(slugCounters)
    .values({ siteId: sql.placeholder('siteId'), base: sql.placeholder('base'), last: sql.placeholder('last') })
    .onConflictDoUpdate({ target: [slugCounters.siteId, slugCounters.base], set: { last: sql`excluded.last` } })
    .prepare();
// Every column from the row's field of the same name (Drizzle encodes each value for its column).
const insertPostRow = (db: Executor) =>
  db
    .insert(posts)
    .values(placeholderRow(posts))
    .prepare();

/**
 * A slug free on the site: the base, else `<base>-N` past the last N given to that base. The
 * last N is kept per site and base (slug_counters), so a title that collides costs one indexed
 * lookup however many posts share its base (a Chinese blog's titles all slug to "post"); a base
 * collided with before counters existed is counted once from the (site, slug) index. Near the
 * 80-character limit, where suffixes cut into the base, the first gap is searched instead.
 */
function freeSlug(db: Executor, siteId: string, title: string, exceptPostId?: string): string {
  const base = slugify(title);
  const takenByOther = (slug: string) => {
    const holder = prepared(db, selectSlugHolder).get({ siteId, slug });
    return holder !== undefined && holder.id !== exceptPostId;
  };
  // A reserved word (`api`, `tag`, ...) is never a slug: it counts as taken.
  if (!RESERVED_SLUGS.has(base) && !takenByOther(base)) return base;
  const counter = prepared(db, selectSlugCounter).get({ siteId, base });
  let n = counter?.last ?? highestSuffix(db, siteId, base);
  let next: string;
  // A slug set by hand may already hold the next number: step past it.
  do next = `${base}-${++n}`;
  while (next.length <= MAX_SLUG_LENGTH && takenByOther(next));
  if (next.length <= MAX_SLUG_LENGTH) {
    prepared(db, saveSlugCounter).run({ siteId, base, last: n });
    return next;
  }
  const prefix = base.slice(0, 70);
  const rows = db
    .select({ slug: posts.slug, id: posts.id })
    .from(posts)
    // '~' sorts after every slug character ([a-z0-9-]), so this is "starts with prefix".
    .where(and(eq(posts.siteId, siteId), gte(posts.slug, prefix), lt(posts.slug, `${prefix}~`)))
    .all();
  return uniqueSlug(base, new Set(rows.filter((r) => r.id !== exceptPostId).map((r) => r.slug)));
}

/**
 * Inserts a post. Runs inside a synchronous transaction so the slug check and the insert are
 * one step; callers that already hold a transaction pass it as `db`.
 */
const selectLatestCreatedAt = (db: Executor) =>
  db
    .select({ latest: max(posts.createdAt) })
    .from(posts)
    .where(eq(posts.siteId, sql.placeholder('siteId')))
    .prepare();

/**
 * A post's creation time: now, or a millisecond past the site's newest post when that is not
 * earlier. No two posts of a site share a creation time, so "newest first" is a total order
 * the list index holds as it is (no sort to break ties, whatever the page's depth).
 */
function nextCreatedAt(db: Executor, siteId: string, now: Date): Date {
  const latest = prepared(db, selectLatestCreatedAt).get({ siteId })?.latest;
  return latest && latest.getTime() >= now.getTime() ? new Date(latest.getTime() + 1) : now;
}

function insertPost(db: Executor, siteId: string, given: PostInput, origin: PostOrigin, changed: ChangeRecorder, at = new Date()): PostRow {
  const now = nextCreatedAt(db, siteId, at);
  const input = origin.generatorProvider ? fitGenerated(given) : given;
  checkWellFormed(input);
  const title = cleanTitle(input.title);
  const tags = cleanTags(input.tags);
  const isDraft = input.isDraft ?? true;
  const row: PostRow = {
    id: randomUUID(),
    siteId,
    slug: freeSlug(db, siteId, title),
    title,
    description: optional(input.description),
    content: optional(input.content),
    category: optional(input.category),
    tags,
    authorId: optional(input.authorId),
    isDraft,
    visibility: input.visibility ?? 'public',
    publishedAt: isDraft ? null : now,
    generatorProvider: origin.generatorProvider ?? null,
    generatorModel: origin.generatorModel ?? null,
    sourceTaskId: origin.sourceTaskId ?? null,
    html: null,
    readingTime: null,
    createdAt: now,
    updatedAt: now,
  };
  prepared(db, insertPostRow).run(driverRow(posts, row));
  changed(db, { siteId, before: null, after: row, at: now });
  return row;
}

const selectPost = (db: Executor) =>
  db
    .select()
    .from(posts)
    .where(and(eq(posts.id, sql.placeholder('postId')), eq(posts.siteId, sql.placeholder('siteId'))))
    .prepare();

function getPost(db: Executor, siteId: string, postId: string): PostRow {
  const row = prepared(db, selectPost).get({ postId, siteId });
  if (!row) throw notFound('post');
  return row;
}

/** `updatedAt` must strictly increase even when two changes land in the same millisecond. */
const nextUpdatedAt = (previous: Date, now: Date) => new Date(Math.max(now.getTime(), previous.getTime() + 1));

/** PUT: a draft becomes published, a published post becomes a draft. */
function togglePost(db: Executor, siteId: string, postId: string, changed: ChangeRecorder, now = new Date()): PostRow {
  return db.transaction((tx) => {
    const current = getPost(tx, siteId, postId);
    const isDraft = !current.isDraft;
    const changes = {
      isDraft,
      publishedAt: current.publishedAt ?? (isDraft ? null : now),
      updatedAt: nextUpdatedAt(current.updatedAt, now),
    };
    tx.update(posts).set(changes).where(eq(posts.id, postId)).run();
    const after = { ...current, ...changes };
    changed(tx, { siteId, before: current, after, at: now });
    return after;
  }, WRITE_TRANSACTION);
}

/** A slug a client asks for: already in slug form, within 80 characters, not a reserved word. */
function requestedSlug(slug: string): string {
  if (slug.length === 0 || slug.length > MAX_SLUG_LENGTH || slugify(slug) !== slug || RESERVED_SLUGS.has(slug)) {
    throw validationError(`slug must be 1-${MAX_SLUG_LENGTH} characters of a-z, 0-9 and inner hyphens, and not a reserved word`, [
      { path: '/body/slug', message: 'must be lower-case letters, digits and inner hyphens, and not a reserved word' },
    ]);
  }
  return slug;
}

/**
 * A published post's URL outlives a slug change: the old slug redirects to the post. Its
 * own earlier redirect to the new slug, if any, goes (the slug is live again).
 */
function keepRedirect(tx: Executor, post: PostRow, newSlug: string, now: Date): void {
  tx.delete(postSlugRedirects)
    .where(and(eq(postSlugRedirects.siteId, post.siteId), eq(postSlugRedirects.slug, newSlug)))
    .run();
  tx.insert(postSlugRedirects)
    .values({ siteId: post.siteId, slug: post.slug, postId: post.id, createdAt: now })
    .onConflictDoUpdate({ target: [postSlugRedirects.siteId, postSlugRedirects.slug], set: { postId: post.id, createdAt: now } })
    .run();
}

/**
 * PATCH: edits the given fields. A new title gets a new slug unless it slugs the same, until the
 * post is first published: from then on its URL stays put unless `slug` is set explicitly.
 */
function updatePost(db: Executor, siteId: string, postId: string, patch: PostPatch, changed: ChangeRecorder, now = new Date()): PostRow {
  // Unknown fields are dropped before this point, so a body of only those edits nothing.
  if (Object.values(patch).every((value) => value === undefined)) {
    throw validationError('Nothing to edit: give at least one of title, slug, description, content, category, tags, authorId, isDraft, visibility');
  }
  checkWellFormed(patch);
  return db.transaction((tx) => {
    const current = getPost(tx, siteId, postId);
    const changes: Partial<PostRow> = {};
    if (patch.title !== undefined) {
      changes.title = cleanTitle(patch.title);
      if (!current.publishedAt && slugify(changes.title) !== slugify(current.title)) changes.slug = freeSlug(tx, siteId, changes.title, postId);
    }
    if (patch.slug !== undefined && patch.slug !== current.slug) {
      const slug = requestedSlug(patch.slug);
      const holder = tx.select({ id: posts.id }).from(posts).where(and(eq(posts.siteId, siteId), eq(posts.slug, slug))).get();
      if (holder) throw conflict(`The slug "${slug}" is taken by another post of this site`);
      changes.slug = slug;
    }
    if (changes.slug && current.publishedAt) keepRedirect(tx, current, changes.slug, now);
    if (patch.description !== undefined) changes.description = optional(patch.description);
    if (patch.content !== undefined) {
      changes.content = optional(patch.content);
      // Rendered again for readers on the next view of this version.
      changes.html = null;
      changes.readingTime = null;
    }
    if (patch.category !== undefined) changes.category = optional(patch.category);
    if (patch.authorId !== undefined) changes.authorId = optional(patch.authorId);
    if (patch.tags !== undefined) changes.tags = cleanTags(patch.tags);
    if (patch.visibility !== undefined) changes.visibility = patch.visibility;
    if (patch.isDraft !== undefined) {
      changes.isDraft = patch.isDraft;
      if (!patch.isDraft && !current.publishedAt) changes.publishedAt = now;
    }
    changes.updatedAt = nextUpdatedAt(current.updatedAt, now);
    tx.update(posts).set(changes).where(eq(posts.id, postId)).run();
    const after = { ...current, ...changes };
    changed(tx, { siteId, before: current, after, at: now });
    return after;
  }, WRITE_TRANSACTION);
}

/** Deletes a post for good (its redirects with it). Tasks that made it keep their record; their postId then dangles on purpose. */
function deletePost(db: Executor, siteId: string, postId: string, changed: ChangeRecorder, now = new Date()): void {
  db.transaction((tx) => {
    const current = getPost(tx, siteId, postId);
    tx.delete(posts).where(eq(posts.id, postId)).run();
    changed(tx, { siteId, before: current, after: null, at: now });
  }, WRITE_TRANSACTION);
}

/** Which count a post is in: drafts, public or unlisted (null: it does not exist). */
function stateOf(post: PostRow | null): 'drafts' | 'public' | 'unlisted' | null {
  if (!post) return null;
  if (post.isDraft) return 'drafts';
  return post.visibility === 'public' ? 'public' : 'unlisted';
}

const addToCounts = (db: Executor) =>
  db
    .insert(postCounts)
    .values({ siteId: sql.placeholder('siteId'), drafts: sql.placeholder('initialDrafts'), public: sql.placeholder('initialPublic'), unlisted: sql.placeholder('initialUnlisted') })
    .onConflictDoUpdate({
      target: postCounts.siteId,
      set: {
        drafts: sql`${postCounts.drafts} + ${sql.placeholder('drafts')}`,
        public: sql`${postCounts.public} + ${sql.placeholder('public')}`,
        unlisted: sql`${postCounts.unlisted} + ${sql.placeholder('unlisted')}`,
      },
    })
    .prepare();

/** Keeps the site's post counts in the transaction of a change. */
function countChange(tx: Executor, change: PostChange): void {
  const before = stateOf(change.before);
  const after = stateOf(change.after);
  if (before === after) return;
  const delta = { drafts: 0, public: 0, unlisted: 0 };
  if (before) delta[before] -= 1;
  if (after) delta[after] += 1;
  prepared(tx, addToCounts).run({
    siteId: change.siteId,
    ...delta,
    initialDrafts: Math.max(delta.drafts, 0),
    initialPublic: Math.max(delta.public, 0),
    initialUnlisted: Math.max(delta.unlisted, 0),
  });
}

const selectCounts = (db: Executor) => db.select().from(postCounts).where(eq(postCounts.siteId, sql.placeholder('siteId'))).prepare();

function countByState(db: Executor, siteId: string, status: PostListStatus | undefined): number {
  const counts = prepared(db, selectCounts).get({ siteId });
  if (!counts) return 0;
  switch (status) {
    case 'draft':
      return counts.drafts;
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

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Which posts a status lists: omitted, drafts and public posts. */
function statusFilter(status: PostListStatus | undefined): SQL | undefined {
  switch (status) {
    case 'draft':
      return eq(posts.isDraft, true);
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

/** Filters and search fold case and accents, like slugs do. */
function searchFilters(query: ListQuery): SQL[] {
  const filters: SQL[] = [];
  if (query.category) filters.push(sql`fold(${posts.category}) = fold(${query.category})`);
  if (query.tag) filters.push(sql`exists (select 1 from json_each(${posts.tags}) where fold(json_each.value) = fold(${query.tag}))`);
  if (query.q) {
    const pattern = `%${escapeLike(foldText(query.q))}%`;
    filters.push(sql`(fold(${posts.title}) like ${pattern} escape '\\' or fold(${posts.description}) like ${pattern} escape '\\')`);
  }
  return filters;
}

// Newest first. Creation times are unique per site (see nextCreatedAt), so this is a total
// order the list index holds as it is: a page needs no sort however deep it is. (A tie-break
// term would make SQLite sort every row before the offset when a status fixes is_draft.)
// Posts created in one millisecond before creation times were unique keep the index's order.
const LIST_ORDER = [desc(posts.createdAt)];

/**
 * A page of posts in one statement: the page's rows are found in the list index first (a deep
 * offset skips index entries, not whole posts) and only those 20 are read whole.
 */
function listPage(db: Executor, where: SQL | undefined, limit: number | Placeholder, offset: number | Placeholder) {
  const page = db.select({ rowid: sql`rowid` }).from(posts).where(where).orderBy(...LIST_ORDER).limit(limit).offset(offset);
  // The page's rows in the page's order (the outer sort is of those rows only).
  return db.select().from(posts).where(inArray(sql`rowid`, page)).orderBy(...LIST_ORDER, desc(sql`rowid`));
}

/** Lists by status alone are the common case: one statement per status, prepared once. */
const listPageByStatus = Object.fromEntries(
  [undefined, ...POST_LIST_STATUSES].map((status) => [
    String(status),
    (db: Executor) =>
      listPage(db, and(eq(posts.siteId, sql.placeholder('siteId')), statusFilter(status)), sql.placeholder('limit'), sql.placeholder('offset')).prepare(),
  ]),
);

/** The statement a list query runs for one page (exported for the query-plan test). */
export function listPageQuery(db: Executor, siteId: string, query: ListQuery, offset: number) {
  return listPage(db, and(eq(posts.siteId, siteId), statusFilter(query.status), ...searchFilters(query)), query.limit, offset);
}

function listPosts(db: Executor, siteId: string, query: ListQuery): Page<PostRow> {
  const search = searchFilters(query);
  const filtered = search.length > 0;
  return paginate(
    query.page,
    query.limit,
    // Lists by state alone read their total from the counts every write keeps; filters count.
    () =>
      filtered
        ? db.select({ n: count() }).from(posts).where(and(eq(posts.siteId, siteId), statusFilter(query.status), ...search)).get()!.n
        : countByState(db, siteId, query.status),
    (offset, limit) =>
      filtered
        ? listPageQuery(db, siteId, { ...query, limit }, offset).all()
        : prepared(db, listPageByStatus[String(query.status)]).all({ siteId, limit, offset }),
  );
}

/**
 * Posts of a site. Methods answer promises, as a database that answers over the network
 * would; each one is a single synchronous statement or transaction underneath.
 */
export class PostService {
  private readonly listeners: PostChangeListener[] = [];

  constructor(private readonly db: Executor) {}

  /**
   * Calls `listener` inside the transaction of every change to a post (create, edit, publish,
   * unpublish, delete), so what it writes (an outbox row, a counter) commits with the change.
   */
  onChange(listener: PostChangeListener): void {
    this.listeners.push(listener);
  }

  /** Every change moves the site's content version (public pages are cached per version) and its counts, then tells the listeners. */
  private readonly changed: ChangeRecorder = (tx, change) => {
    touchSiteContent(tx, change.siteId, change.at);
    countChange(tx, change);
    for (const listener of this.listeners) listener(tx, change);
  };

  async create(siteId: string, input: PostInput, origin: PostOrigin = {}): Promise<PostRow> {
    return this.db.transaction((tx) => insertPost(tx, siteId, input, origin, this.changed), WRITE_TRANSACTION);
  }

  /** Inserts inside a caller's transaction (a job committing its post with its own success). */
  insert(tx: Executor, siteId: string, input: PostInput, origin: PostOrigin = {}): PostRow {
    return insertPost(tx, siteId, input, origin, this.changed);
  }

  async get(siteId: string, postId: string): Promise<PostRow> {
    return getPost(this.db, siteId, postId);
  }

  async toggle(siteId: string, postId: string): Promise<PostRow> {
    return togglePost(this.db, siteId, postId, this.changed);
  }

  async update(siteId: string, postId: string, patch: PostPatch): Promise<PostRow> {
    return updatePost(this.db, siteId, postId, patch, this.changed);
  }

  async delete(siteId: string, postId: string): Promise<void> {
    deletePost(this.db, siteId, postId, this.changed);
  }

  async list(siteId: string, query: ListQuery): Promise<Page<PostRow>> {
    return listPosts(this.db, siteId, query);
  }
}
