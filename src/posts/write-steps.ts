import { randomUUID } from 'node:crypto';
import { conflict, validationError } from '../errors.js';
import { MAX_SLUG_LENGTH, RESERVED_SLUGS } from '../limits.js';
import { slugify, uniqueSlug } from '../text/slug.js';
import {
  checkStorableText,
  cleanTitle,
  fitGenerated,
  found,
  nextCreatedAt,
  nextUpdatedAt,
  optional,
  requestedSlug,
  type PostChange,
  type PostInput,
  type PostOrigin,
  type PostPatch,
  type PostRow,
  type TextLimits,
} from './rules.js';
import { cleanTags } from './tags.js';

/*
 * The steps of every post write, written once for both databases. A write is a generator: it
 * yields each question it has for the database (a PostStorage call) and is resumed with the
 * answer. SQLite answers synchronously, inside its synchronous transaction (runSteps);
 * PostgreSQL answers with promises (runStepsAsync). The rules between the questions (which
 * slug, which times, what a patch changes) are the same code on both.
 */

/** What a write asks the database about one site's posts (the site is bound by the storage). */
export interface PostStorage {
  /** The creation time of the site's newest post; null when it has none. */
  latestCreatedAt(): Date | null;
  /** The id of the site's post with this slug. */
  slugHolder(slug: string): string | undefined;
  /** The last N given to `<base>-N` on the site (slug_counters), if recorded. */
  slugCounter(base: string): number | undefined;
  /** The highest N among the site's slugs `<base>-N`; 1 when none. */
  highestSuffix(base: string): number;
  saveSlugCounter(base: string, last: number): void;
  /** The site's slugs starting with `prefix`, with their posts' ids. */
  slugsStartingWith(prefix: string): { slug: string; id: string }[];
  find(postId: string): PostRow | undefined;
  insert(row: PostRow): void;
  update(postId: string, changes: Partial<PostRow>): void;
  remove(postId: string): void;
  /** The published post's old slug redirects to it; any redirect from `newSlug` goes. */
  keepRedirect(post: PostRow, newSlug: string, now: Date): void;
  /** Moves the site's content version and counts and tells the listeners, in the write's transaction. */
  changed(change: PostChange): void;
}

/** PostStorage answered with promises. */
export type AsyncPostStorage = { [M in keyof PostStorage]: (...args: Parameters<PostStorage[M]>) => Promise<ReturnType<PostStorage[M]>> };

type Question = { [M in keyof PostStorage]: { method: M; args: Parameters<PostStorage[M]> } }[keyof PostStorage];

/** The steps of a write ending with a `T`. */
export type WriteSteps<T> = Generator<Question, T, unknown>;

/** Asks the database one question; the runner resumes the steps with its answer. */
function* ask<M extends keyof PostStorage>(method: M, ...args: Parameters<PostStorage[M]>): Generator<Question, ReturnType<PostStorage[M]>, unknown> {
  return (yield { method, args } as Question) as ReturnType<PostStorage[M]>;
}

const answer = (storage: PostStorage | AsyncPostStorage, question: Question) =>
  (storage[question.method] as (...args: unknown[]) => unknown).apply(storage, question.args);

/** Runs a write against a database that answers at once (inside a SQLite transaction). */
export function runSteps<T>(steps: WriteSteps<T>, storage: PostStorage): T {
  let step = steps.next();
  while (!step.done) step = steps.next(answer(storage, step.value));
  return step.value;
}

/** Runs a write against a database that answers with promises (inside a PostgreSQL transaction). */
export async function runStepsAsync<T>(steps: WriteSteps<T>, storage: AsyncPostStorage): Promise<T> {
  let step = steps.next();
  while (!step.done) step = steps.next(await answer(storage, step.value));
  return step.value;
}

/**
 * A slug free on the site: the base, else `<base>-N` past the last N given to that base. The
 * last N is kept per site and base (slug_counters), so a title that collides costs one indexed
 * lookup however many posts share its base (a Chinese blog's titles all slug to "post"); a base
 * collided with before counters existed is counted once from the (site, slug) index. Near the
 * 80-character limit, where suffixes cut into the base, the first gap is searched instead.
 */
function* freeSlug(title: string, exceptPostId?: string): WriteSteps<string> {
  const base = slugify(title);
  function* takenByOther(slug: string): WriteSteps<boolean> {
    const holder = yield* ask('slugHolder', slug);
    return holder !== undefined && holder !== exceptPostId;
  }
  // A reserved word (`api`, `tag`, ...) is never a slug: it counts as taken.
  if (!RESERVED_SLUGS.has(base) && !(yield* takenByOther(base))) return base;
  let n = (yield* ask('slugCounter', base)) ?? (yield* ask('highestSuffix', base));
  let next: string;
  // A slug set by hand may already hold the next number: step past it.
  do next = `${base}-${++n}`;
  while (next.length <= MAX_SLUG_LENGTH && (yield* takenByOther(next)));
  if (next.length <= MAX_SLUG_LENGTH) {
    yield* ask('saveSlugCounter', base, n);
    return next;
  }
  const rows = yield* ask('slugsStartingWith', base.slice(0, 70));
  return uniqueSlug(base, new Set(rows.filter((row) => row.id !== exceptPostId).map((row) => row.slug)));
}

/** Creates a post; `at` is now (the creation time may be a little later, see nextCreatedAt). */
export function* insertSteps(siteId: string, given: PostInput, origin: PostOrigin, at: Date, limits: TextLimits): WriteSteps<PostRow> {
  const now = nextCreatedAt(yield* ask('latestCreatedAt'), at);
  const input = origin.generatorProvider ? fitGenerated(given, limits) : given;
  checkStorableText(input, limits);
  const title = cleanTitle(input.title);
  const tags = cleanTags(input.tags);
  const isDraft = input.isDraft ?? true;
  const row: PostRow = {
    id: randomUUID(),
    siteId,
    slug: yield* freeSlug(title),
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
  yield* ask('insert', row);
  yield* ask('changed', { siteId, before: null, after: row, at: now });
  return row;
}

/** PUT: a draft becomes published, a published post becomes a draft. */
export function* toggleSteps(siteId: string, postId: string, now: Date): WriteSteps<PostRow> {
  const current = found(yield* ask('find', postId));
  const isDraft = !current.isDraft;
  const changes = {
    isDraft,
    publishedAt: current.publishedAt ?? (isDraft ? null : now),
    updatedAt: nextUpdatedAt(current.updatedAt, now),
  };
  yield* ask('update', postId, changes);
  const after = { ...current, ...changes };
  yield* ask('changed', { siteId, before: current, after, at: now });
  return after;
}

/** What a patch must pass before its transaction starts: something to edit, in storable text. */
export function checkPatch(patch: PostPatch, limits: TextLimits): void {
  // Unknown fields are dropped before this point, so a body of only those edits nothing.
  if (Object.values(patch).every((value) => value === undefined)) {
    throw validationError('Nothing to edit: give at least one of title, slug, description, content, category, tags, authorId, isDraft, visibility');
  }
  checkStorableText(patch, limits);
}

/**
 * PATCH (after checkPatch): edits the given fields. A new title gets a new slug unless it slugs
 * the same, until the post is first published: from then on its URL stays put unless `slug` is
 * set explicitly, and the old slug then redirects to the post.
 */
export function* updateSteps(siteId: string, postId: string, patch: PostPatch, now: Date): WriteSteps<PostRow> {
  const current = found(yield* ask('find', postId));
  const changes: Partial<PostRow> = {};
  if (patch.title !== undefined) {
    changes.title = cleanTitle(patch.title);
    if (!current.publishedAt && slugify(changes.title) !== slugify(current.title)) changes.slug = yield* freeSlug(changes.title, postId);
  }
  if (patch.slug !== undefined && patch.slug !== current.slug) {
    const slug = requestedSlug(patch.slug);
    if ((yield* ask('slugHolder', slug)) !== undefined) throw conflict(`The slug "${slug}" is taken by another post of this site`);
    changes.slug = slug;
  }
  if (changes.slug && current.publishedAt) yield* ask('keepRedirect', current, changes.slug, now);
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
  yield* ask('update', postId, changes);
  const after = { ...current, ...changes };
  yield* ask('changed', { siteId, before: current, after, at: now });
  return after;
}

/** Deletes a post for good (its redirects with it). Tasks that made it keep their record; their postId then dangles on purpose. */
export function* deleteSteps(siteId: string, postId: string, now: Date): WriteSteps<void> {
  const current = found(yield* ask('find', postId));
  yield* ask('remove', postId);
  yield* ask('changed', { siteId, before: current, after: null, at: now });
}
