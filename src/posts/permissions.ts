import { forbidden, type Role } from '../accounts/rules.js';
import type { PostInput, PostPatch, PostRow } from './rules.js';

/*
 * Who may do what to a post, by role (see accounts/rules.ts ROLES). Checked in the API before
 * the write; pure, so the rules read in one place. An API key acts as owner.
 */

/** Who is asking: the role on the site and, for a person, their user id (null for an API key). */
export interface Actor {
  role: Role;
  userId: string | null;
}

/** Owners and editors work on every post; authors and contributors on their own. */
export const worksOnEveryPost = (role: Role) => role === 'owner' || role === 'editor';

/** Whether the role may publish, schedule, unpublish or delete published posts (its own, for an author). */
export const mayPublish = (role: Role) => role !== 'contributor';

const notYours = () => forbidden('You can change only your own posts: an editor or owner of the site can change this one');
const cannotPublish = () => forbidden('A contributor cannot publish, schedule or unpublish: use "Submit for review", and an editor publishes it');
const publishedIsLocked = () => forbidden('A contributor cannot change or delete a published post: an editor can');

/** 403 unless the actor may change this post at all (edit, toggle, delete, restore, share). */
export function checkMayChange(actor: Actor, post: PostRow): void {
  if (worksOnEveryPost(actor.role)) return;
  if (post.authorId === null || post.authorId !== actor.userId) throw notYours();
  if (actor.role === 'contributor' && !post.isDraft) throw publishedIsLocked();
}

/**
 * A new post's fields as the actor may give them: a person's posts carry their user id as
 * `authorId` (an owner or editor may name another); a contributor's are drafts, unscheduled.
 */
export function createdBy(actor: Actor, input: PostInput): PostInput {
  if (actor.userId === null) return input;
  if (actor.role === 'contributor' && (input.isDraft === false || (input.publishAt ?? null) !== null)) throw cannotPublish();
  if (worksOnEveryPost(actor.role)) return { ...input, authorId: input.authorId ?? actor.userId };
  if (input.authorId != null && input.authorId !== actor.userId) throw forbidden('You can write posts only under your own name: an editor can name another author');
  return { ...input, authorId: actor.userId };
}

/** 403 for a patch the actor may not make of this post (after checkMayChange). */
export function checkPatchAllowed(actor: Actor, post: PostRow, patch: PostPatch): void {
  checkMayChange(actor, post);
  if (worksOnEveryPost(actor.role)) return;
  if (patch.authorId !== undefined && patch.authorId !== actor.userId) throw forbidden('Only an editor or owner can give a post to another author');
  if (actor.role === 'contributor' && (patch.isDraft === false || (patch.publishAt ?? null) !== null)) throw cannotPublish();
}

/** 403 unless the actor may publish or unpublish this post (PUT). */
export function checkMayToggle(actor: Actor, post: PostRow): void {
  checkMayChange(actor, post);
  if (!mayPublish(actor.role)) throw cannotPublish();
}
