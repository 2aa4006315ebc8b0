import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client.js';
import type { TaskRow } from '../db/schema.js';
import { validationError } from '../errors.js';
import { cleanTopic, type PostRequest } from '../generation/grounded.js';
import type { Tone } from '../generation/types.js';
import { existingFileIds } from '../knowledge/service.js';
import type { Visibility } from '../posts/service.js';
import { scheduleBatch } from './schedule.js';
import { createTasks } from './store.js';

export const MAX_BATCH_POSTS = 100;
export const BATCH_STATUSES = ['DRAFT', 'UNLISTED', 'PUBLISHED'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** Fields a batch's `defaults` may set and each post may override. */
export interface BatchPostFields extends Omit<PostRequest, 'topic'> {
  authorId?: string | null;
  category?: string | null;
  tags?: string[];
  status?: BatchStatus;
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

/**
 * Validates a batch and writes its tasks in one transaction. Unknown `selectedFileIds` and
 * bad scheduling are refused before anything is written.
 */
export function createBatch(db: Db, siteId: string, request: BatchRequest, maxAttempts: number, now = new Date()): { batchId: string; tasks: TaskRow[] } {
  const topics = request.posts.map((post, i) => cleanTopic(post.topic, `/body/posts/${i}/topic`));

  const params = request.posts.map((post) => mergeDefaults(request.defaults, post));
  // Ids in defaults count even where every post overrides them: a typo there is still a mistake.
  const requested = [...new Set([...(request.defaults?.selectedFileIds ?? []), ...params.flatMap((p) => p.selectedFileIds ?? [])])];
  const present = existingFileIds(db, siteId, requested);
  const unknown = requested.filter((id) => !present.has(id));
  if (unknown.length) {
    throw validationError(`Unknown knowledge file ids: ${unknown.join(', ')}`, unknown.map((id) => ({ path: '/body/selectedFileIds', message: `unknown file id ${id}` })));
  }

  const toDate = (value: string | undefined) => (value === undefined ? null : new Date(value));
  const dueTimes = scheduleBatch(
    request.posts.map((post) => ({ scheduledFor: toDate(post.scheduledFor) })),
    { startDate: toDate(request.startDate), endDate: toDate(request.endDate) },
    now,
  );
  const batchId = randomUUID();
  const tasks = createTasks(
    db,
    siteId,
    batchId,
    topics.map((topic, i) => ({ topic, params: params[i], scheduledFor: dueTimes[i] })),
    maxAttempts,
    now,
  );
  return { batchId, tasks };
}
