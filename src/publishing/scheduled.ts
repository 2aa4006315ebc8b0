import { ask, type Steps } from '../db/steps.js';
import type { JobHandler } from '../jobs/loop.js';
import { enqueueSteps } from '../jobs/store.js';
import type { PostChange, PostRow } from '../posts/rules.js';

/*
 * Scheduled publishing: a draft with a `publishAt` is published by a job of the queue, due at
 * that time, claimed once (one statement, leased) however many instances poll, and done again
 * after a crash. No timer in memory and no call to the service's own URL: a server that was
 * down at the time publishes at its next start, with the scheduled time as `publishedAt`.
 */

export const PUBLISH_POST = 'publish-post';

/** A publication job: which post, and the schedule it was queued for (a moved schedule queues another). */
export interface PublishPostPayload {
  postId: string;
  publishAt: string;
}

export interface PublishPostResult {
  postId: string;
  /** False when the post's schedule changed after the job was queued (nothing done). */
  published: boolean;
}

const sameTime = (a: Date | null | undefined, b: Date | null | undefined) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

/**
 * The posts store's change listener that keeps each post's publication job in step with its
 * schedule, inside the transaction of the change: a schedule set queues its job; moved,
 * cancelled (also by publishing or unpublishing now) or deleted, the pending job is cancelled
 * (and a moved one queued anew). A job groups under its post's id.
 */
export function publicationJobs(maxAttempts: number) {
  return function* keepInStep(change: PostChange): Steps<void> {
    const before = change.before?.publishAt ?? null;
    const after = change.after?.publishAt ?? null;
    if (sameTime(before, after)) return;
    const postId = (change.after ?? change.before)!.id;
    if (before) yield* ask('jobs', 'cancelPendingOfGroup', change.siteId, PUBLISH_POST, postId, change.at.getTime());
    if (after) {
      const payload: PublishPostPayload = { postId, publishAt: after.toISOString() };
      yield* enqueueSteps(change.siteId, [{ kind: PUBLISH_POST, payload, scheduledFor: after, groupId: postId }], maxAttempts, change.at);
    }
  };
}

/** What the job needs of the posts store. */
export interface ScheduledPublisher {
  publishScheduledSteps(siteId: string, postId: string, publishAt: Date, now?: Date): Steps<PostRow | null>;
}

/** The job: nothing slow to run; publishing is its completion, in the transaction that marks it succeeded. */
export function publishPostHandler(posts: ScheduledPublisher): JobHandler<PublishPostPayload, null> {
  return {
    kind: PUBLISH_POST,
    run: async () => null,
    *complete(_result, job): Steps<PublishPostResult> {
      const { postId, publishAt } = job.payload;
      const post = yield* posts.publishScheduledSteps(job.siteId, postId, new Date(publishAt));
      return { postId, published: post !== null };
    },
  };
}
