import { cleanTopic, type PostRequest } from '../generation/grounded.js';
import type { BatchStatus, Tone, Visibility } from '../limits.js';
import { validationError } from '../errors.js';
import { unknownFileIds } from '../knowledge/service.js';
import { scheduleBatch } from './schedule.js';

/** Fields a batch's `defaults` may set and each post may override. */
export interface BatchPostFields extends Omit<PostRequest, 'topic'> {
  authorId?: string | null;
  category?: string | null;
  tags?: string[];
  status?: BatchStatus;
  /** The post is generated as a draft when its task is due and published at this time (ISO 8601). */
  publishAt?: string;
  /** The post's feature image (an image of the site's media library) and its alt text. */
  featureImage?: string;
  featureImageAlt?: string;
}

/** As a request gives them: the spec's batch example also names tone `formal`, read as `authoritative`. */
export type BatchPostInput = Omit<BatchPostFields, 'tone'> & { tone?: Tone | 'formal' };

export interface BatchRequest {
  posts: (BatchPostInput & { topic: string; scheduledFor?: string })[];
  startDate?: string;
  endDate?: string;
  defaults?: BatchPostInput;
}

/** The options a task runs with: the defaults with the post's own fields over them. */
export type TaskParams = BatchPostFields & { status: BatchStatus };

/** Batch status to post state: DRAFT is a draft; PUBLISHED public; UNLISTED published but unlisted. */
export function postStateFor(status: BatchStatus): { isDraft: boolean; visibility: Visibility } {
  if (status === 'DRAFT') return { isDraft: true, visibility: 'public' };
  return { isDraft: false, visibility: status === 'UNLISTED' ? 'unlisted' : 'public' };
}

export function mergeDefaults(defaults: BatchPostInput | undefined, post: BatchPostInput & { topic: string; scheduledFor?: string }): TaskParams {
  const { topic: _topic, scheduledFor: _scheduledFor, ...own } = post;
  const merged: Record<string, unknown> = { status: 'DRAFT', ...defaults };
  for (const [key, value] of Object.entries(own)) {
    if (value !== undefined) merged[key] = value;
  }
  if (merged.tone === 'formal') merged.tone = 'authoritative';
  return merged as unknown as TaskParams;
}

/** A post of a batch as its task will write it. */
export interface PlannedPost {
  topic: string;
  params: TaskParams;
  scheduledFor: Date;
}

/**
 * Checks a batch and plans its posts: topics, options merged over the defaults, due times.
 * Unknown `selectedFileIds` (judged by `knownFileIds`) and bad scheduling are refused.
 */
export function planBatch(request: BatchRequest, knownFileIds: ReadonlySet<string>, now: Date): PlannedPost[] {
  const topics = request.posts.map((post, i) => cleanTopic(post.topic, `/body/posts/${i}/topic`));
  const params = request.posts.map((post) => mergeDefaults(request.defaults, post));
  const unknown = requestedFileIds(request).filter((id) => !knownFileIds.has(id));
  if (unknown.length) {
    throw unknownFileIds(unknown, '/body/selectedFileIds');
  }
  const toDate = (value: string | undefined) => (value === undefined ? null : new Date(value));
  const dueTimes = scheduleBatch(
    request.posts.map((post) => ({ scheduledFor: toDate(post.scheduledFor) })),
    { startDate: toDate(request.startDate), endDate: toDate(request.endDate) },
    now,
  );
  params.forEach((own, i) => {
    if (own.publishAt !== undefined && new Date(own.publishAt).getTime() < dueTimes[i]!.getTime()) {
      const path = request.posts[i]!.publishAt !== undefined ? `/body/posts/${i}/publishAt` : '/body/defaults/publishAt';
      throw validationError(`publishAt must not come before the post's task is due (${dueTimes[i]!.toISOString()}): the post is written then`, [
        { path, message: 'must be at or after the time the task is due' },
      ]);
    }
  });
  return topics.map((topic, i) => ({ topic, params: params[i]!, scheduledFor: dueTimes[i]! }));
}

/** Each feature image a batch names, with where it first appears (for the 400 that refuses an unknown one). */
export function requestedImages(request: BatchRequest): Map<string, string> {
  const images = new Map<string, string>();
  if (request.defaults?.featureImage) images.set(request.defaults.featureImage, '/body/defaults/featureImage');
  request.posts.forEach((post, i) => {
    if (post.featureImage && !images.has(post.featureImage)) images.set(post.featureImage, `/body/posts/${i}/featureImage`);
  });
  return images;
}

/** Every file id a batch names. Ids in defaults count even where each post overrides them: a typo there is still a mistake. */
export function requestedFileIds(request: BatchRequest): string[] {
  const ids = [...(request.defaults?.selectedFileIds ?? []), ...request.posts.flatMap((post) => post.selectedFileIds ?? [])];
  return [...new Set(ids)];
}
