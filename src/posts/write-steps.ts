import { randomUUID } from 'node:crypto';
import { ask, type Steps } from '../db/steps.js';
import { conflict, validationError } from '../errors.js';
import { MAX_SLUG_LENGTH, RESERVED_SLUGS } from '../limits.js';
import { slugify, uniqueSlug } from '../text/slug.js';
import {
  checkIfMatch,
  checkStorableText,
  cleanTitle,
  fitGenerated,
  found,
  nextCreatedAt,
  nextUpdatedAt,
  optional,
  requestedSlug,
  type PostInput,
  type PostOrigin,
  type PostPatch,
  type PostChange,
  type PostRow,
  type TextLimits,
} from './rules.js';
import { cleanTags } from './tags.js';
import { unknownImage } from '../media/rules.js';
// A patch of text clears the post's pending change (the revisions concern's table).
import type {} from '../revisions/port.js';

/*
 * The steps of every post write, written once for both databases (see src/db/steps.ts): the
 * rules between the database's answers (which slug, which times, what a patch changes). Each
 * ends with its result and the change it made; the store (store.ts) runs them under the site's
 * lock and tells the change on.
 */

/** A write's result and the change it made. */
export type Written<T> = { result: T; change: PostChange };

/**
 * A slug free on the site: the base, else `<base>-N` past the last N given to that base. The
 * last N is kept per site and base (slug_counters), so a title that collides costs one indexed
 * lookup however many posts share its base (a Chinese blog's titles all slug to "post"); a base
 * collided with before counters existed is counted once from the (site, slug) index. Near the
 * 80-character limit, where suffixes cut into the base, the first gap is searched instead.
 */
function* freeSlug(siteId: string, title: string, exceptPostId?: string, baseHolder?: { id: string | undefined }): Steps<string> {
  const base = slugify(title);
  function* takenByOther(slug: string): Steps<boolean> {
    const holder = yield* ask('posts', 'slugHolder', siteId, slug);
    return holder !== undefined && holder !== exceptPostId;
  }
  // A reserved word (`api`, `tag`, ...) is never a slug: it counts as taken. The base's holder may be known already (a create's first question).
  const baseTaken = baseHolder ? baseHolder.id !== undefined && baseHolder.id !== exceptPostId : yield* takenByOther(base);
  if (!RESERVED_SLUGS.has(base) && !baseTaken) return base;
  let n = (yield* ask('posts', 'slugCounter', siteId, base)) ?? (yield* ask('posts', 'highestSuffix', siteId, base));
  let next: string;
  // A slug set by hand may already hold the next number: step past it.
  do next = `${base}-${++n}`;
  while (next.length <= MAX_SLUG_LENGTH && (yield* takenByOther(next)));
  if (next.length <= MAX_SLUG_LENGTH) {
    yield* ask('posts', 'saveSlugCounter', siteId, base, n);
    return next;
  }
  const rows = yield* ask('posts', 'slugsStartingWith', siteId, base.slice(0, 70));
  return uniqueSlug(base, new Set(rows.filter((row) => row.id !== exceptPostId).map((row) => row.slug)));
}

/** A feature image the post may show: an image of the site's media library, or none. */
function* featureImageOf(siteId: string, mediaId: string | null | undefined): Steps<string | null> {
  if (mediaId === undefined || mediaId === null) return null;
  if (!(yield* ask('media', 'get', siteId, mediaId))) throw unknownImage(mediaId, '/body/featureImage');
  return mediaId;
}

/** Creates a post; `at` is now (the creation time may be a little later, see nextCreatedAt). */
export function* insertSteps(siteId: string, given: PostInput, origin: PostOrigin, at: Date, limits: TextLimits): Steps<Written<PostRow>> {
  const input = origin.generatorProvider ? fitGenerated(given, limits) : given;
  checkStorableText(input, limits);
  const title = cleanTitle(input.title);
  // The newest creation time and the holder of the title's slug, in one question.
  const { latest, holder } = yield* ask('posts', 'creationContext', siteId, slugify(title));
  const now = nextCreatedAt(latest, at);
  const tags = cleanTags(input.tags);
  // A time already past (a batch task written late) publishes at once, as of that time.
  const publishAt = input.publishAt ?? null;
  const due = publishAt !== null && publishAt.getTime() <= now.getTime();
  const isDraft = due ? false : (input.isDraft ?? true);
  const row: PostRow = {
    id: randomUUID(),
    siteId,
    slug: yield* freeSlug(siteId, title, undefined, { id: holder }),
    title,
    description: optional(input.description),
    content: optional(input.content),
    category: optional(input.category),
    tags,
    authorId: optional(input.authorId),
    isDraft,
    visibility: input.visibility ?? 'public',
    publishedAt: isDraft ? null : due ? publishAt : now,
    publishAt: isDraft ? publishAt : null,
    featureImage: yield* featureImageOf(siteId, input.featureImage),
    featureImageAlt: optional(input.featureImageAlt),
    commentsEnabled: input.commentsEnabled ?? true,
    generatorProvider: origin.generatorProvider ?? null,
    generatorModel: origin.generatorModel ?? null,
    sourceTaskId: origin.sourceTaskId ?? null,
    reviewRequestedAt: null,
    previewToken: null,
    html: null,
    readingTime: null,
    sendNewsletter: input.sendNewsletter ?? true,
    createdAt: now,
    updatedAt: now,
  };
  yield* ask('posts', 'insert', row);
  return { result: row, change: { siteId, before: null, after: row, at: now } };
}

/** PUT: a draft becomes published (now, whatever its schedule), a published post becomes a draft. */
export function* toggleSteps(siteId: string, postId: string, now: Date): Steps<Written<PostRow>> {
  const current = found(yield* ask('posts', 'find', siteId, postId));
  const isDraft = !current.isDraft;
  const changes: Partial<PostRow> = {
    isDraft,
    publishedAt: current.publishedAt ?? (isDraft ? null : now),
    publishAt: null,
    updatedAt: nextUpdatedAt(current.updatedAt, now),
  };
  if (!isDraft) Object.assign(changes, { reviewRequestedAt: null, previewToken: null });
  yield* ask('posts', 'update', postId, changes);
  const after = { ...current, ...changes };
  return { result: after, change: { siteId, before: current, after, at: now } };
}

/** What a patch must pass before its transaction starts: something to edit, in storable text. */
export function checkPatch(patch: PostPatch, limits: TextLimits): void {
  // Unknown fields are dropped before this point, so a body of only those edits nothing.
  if (Object.values(patch).every((value) => value === undefined)) {
    throw validationError('Nothing to edit: give at least one of title, slug, description, content, category, tags, authorId, isDraft, visibility, publishAt, featureImage, featureImageAlt, sendNewsletter, commentsEnabled');
  }
  checkStorableText(patch, limits);
}

/**
 * PATCH (after checkPatch): edits the given fields. A new title gets a new slug unless it slugs
 * the same, until the post is first published: from then on its URL stays put unless `slug` is
 * set explicitly, and the old slug then redirects to the post.
 */
export function* updateSteps(siteId: string, postId: string, patch: PostPatch, now: Date, ifMatch?: string): Steps<Written<PostRow>> {
  const current = found(yield* ask('posts', 'find', siteId, postId));
  // Checked under the site's lock: no save can land between the look and the write.
  checkIfMatch(current, ifMatch);
  const changes: Partial<PostRow> = {};
  // Text saved to the post itself supersedes edits waiting for "Update" (that is what Update does).
  if (patch.title !== undefined || patch.description !== undefined || patch.content !== undefined) yield* ask('revisions', 'clearPending', postId);
  if (patch.title !== undefined) {
    changes.title = cleanTitle(patch.title);
    if (!current.publishedAt && slugify(changes.title) !== slugify(current.title)) changes.slug = yield* freeSlug(siteId, changes.title, postId);
  }
  if (patch.slug !== undefined && patch.slug !== current.slug) {
    const slug = requestedSlug(patch.slug);
    if ((yield* ask('posts', 'slugHolder', siteId, slug)) !== undefined) throw conflict(`The slug "${slug}" is taken by another post of this site`);
    changes.slug = slug;
  }
  if (changes.slug && current.publishedAt) yield* ask('posts', 'keepRedirect', current, changes.slug, now);
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
  if (patch.featureImage !== undefined) changes.featureImage = yield* featureImageOf(siteId, patch.featureImage);
  if (patch.featureImageAlt !== undefined) changes.featureImageAlt = optional(patch.featureImageAlt);
  if (patch.sendNewsletter !== undefined) changes.sendNewsletter = patch.sendNewsletter;
  if (patch.commentsEnabled !== undefined) changes.commentsEnabled = patch.commentsEnabled;
  if (patch.isDraft !== undefined) {
    changes.isDraft = patch.isDraft;
    if (!patch.isDraft && !current.publishedAt) changes.publishedAt = now;
    // Published: no longer a draft to review, nor one to preview by a shared link.
    if (!patch.isDraft) Object.assign(changes, { reviewRequestedAt: null, previewToken: null });
  }
  // Publishing now, or a schedule set or cleared (checkSchedule saw that it lies ahead).
  if (patch.isDraft === false) changes.publishAt = null;
  else if (patch.publishAt !== undefined) {
    if (patch.publishAt !== null && !(changes.isDraft ?? current.isDraft)) throw conflict('A published post cannot be scheduled: unpublish it first');
    changes.publishAt = patch.publishAt;
  }
  changes.updatedAt = nextUpdatedAt(current.updatedAt, now);
  yield* ask('posts', 'update', postId, changes);
  const after = { ...current, ...changes };
  return { result: after, change: { siteId, before: current, after, at: now } };
}

/**
 * Publishes a scheduled post when its time has come (the `publish-post` job), as of its
 * `publishAt`: `publishedAt` is that time, however late the job runs. Nothing happens (null)
 * when the schedule has changed since the job was queued: the post was published, unpublished,
 * moved, cancelled or deleted meanwhile; a moved schedule has a job of its own.
 */
export function* publishScheduledSteps(siteId: string, postId: string, publishAt: Date, now: Date): Steps<Written<PostRow> | null> {
  const current = yield* ask('posts', 'find', siteId, postId);
  if (!current || !current.isDraft || current.publishAt?.getTime() !== publishAt.getTime()) return null;
  const changes = { isDraft: false, publishedAt: publishAt, publishAt: null, reviewRequestedAt: null, previewToken: null, updatedAt: nextUpdatedAt(current.updatedAt, now) };
  yield* ask('posts', 'update', postId, changes);
  const after = { ...current, ...changes };
  return { result: after, change: { siteId, before: current, after, at: now } };
}

/** "Submit for review": marks a draft for an editor (409 for a published post). */
export function* requestReviewSteps(siteId: string, postId: string, now: Date): Steps<Written<PostRow>> {
  const current = found(yield* ask('posts', 'find', siteId, postId));
  if (!current.isDraft) throw conflict('The post is published already: there is no draft to review');
  const changes = { reviewRequestedAt: now, updatedAt: nextUpdatedAt(current.updatedAt, now) };
  yield* ask('posts', 'update', postId, changes);
  const after = { ...current, ...changes };
  return { result: after, change: { siteId, before: current, after, at: now } };
}

/**
 * Sets (a new random token) or revokes (null) a draft's share-preview link. `updatedAt` stays:
 * the post as editors see it does not change, so an editor's open copy stays current.
 */
export function* previewTokenSteps(siteId: string, postId: string, token: string | null, now: Date): Steps<Written<PostRow>> {
  const current = found(yield* ask('posts', 'find', siteId, postId));
  if (token !== null && !current.isDraft) throw conflict('The post is published: share its public page instead of a preview');
  yield* ask('posts', 'update', postId, { previewToken: token });
  const after = { ...current, previewToken: token };
  return { result: after, change: { siteId, before: current, after, at: now } };
}

/** Deletes a post for good (its redirects with it). Tasks that made it keep their record; their postId then dangles on purpose. */
export function* deleteSteps(siteId: string, postId: string, now: Date): Steps<Written<void>> {
  const current = found(yield* ask('posts', 'find', siteId, postId));
  // What belongs to the post goes with it (the specification's 4.6): its comments and its stats.
  yield* ask('comments', 'removeForPost', postId);
  yield* ask('analytics', 'forgetPage', siteId, postId);
  yield* ask('posts', 'remove', postId);
  return { result: undefined, change: { siteId, before: current, after: null, at: now } };
}
