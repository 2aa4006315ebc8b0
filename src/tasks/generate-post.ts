import { ask, type Steps } from '../db/steps.js';
import { writeGroundedPost, type GroundedPost, type GroundingDeps } from '../generation/grounded.js';
import type { JobHandler } from '../jobs/loop.js';
import type { PostInput, PostOrigin, PostRow } from '../posts/rules.js';
import { postStateFor, type TaskParams } from './batch.js';

export const GENERATE_POST = 'generate-post';

/** The payload of a batch task: the topic and the options merged over the batch's defaults. */
export interface GeneratePostPayload {
  topic: string;
  params: TaskParams;
}

/** What a succeeded task records: the post it made, the selected files that had gone, and the writer's notes. */
export interface GeneratePostResult {
  postId: string;
  missingFileIds: string[];
  /** What the writer says about its work (never part of the post). */
  notes?: string[];
  /** The post is an outline: no source covered the topic. */
  outline?: boolean;
  /** Kept as a draft although the batch asked for another status (an outline is not a post). */
  keptAsDraft?: boolean;
}

/** Where a task's post goes: the posts store's steps that create a post, inside the caller's transaction. */
export interface PostInserter {
  createSteps(siteId: string, input: PostInput, origin: PostOrigin, now: Date): Steps<PostRow>;
}

/**
 * A batch task: write the post with the same generator as the generate endpoint, then insert
 * it in the transaction that marks the task succeeded (the post's `sourceTaskId` is unique, so
 * a task never makes two posts).
 */
export function generatePostHandler(deps: GroundingDeps & { posts: PostInserter }): JobHandler<GeneratePostPayload, GroundedPost> {
  return {
    kind: GENERATE_POST,
    run: ({ topic, params }, signal, job) => writeGroundedPost(deps, job.siteId, { ...params, topic }, signal),
    *complete({ result, missingFileIds }, job): Steps<GeneratePostResult> {
      const { params } = job.payload;
      const generated = result.post;
      // An outline is for a person to write: it stays a draft, whatever the batch asked for.
      const outline = result.outline === true;
      const keptAsDraft = outline && (params.status !== 'DRAFT' || params.publishAt !== undefined);
      // An image deleted since the batch was scheduled is left out; the post is still written.
      const image = params.featureImage && (yield* ask('media', 'get', job.siteId, params.featureImage)) ? params.featureImage : null;
      const post = yield* deps.posts.createSteps(
        job.siteId,
        {
          title: generated.title,
          description: generated.description,
          content: generated.content,
          category: params.category ?? generated.category,
          tags: params.tags ?? generated.tags,
          authorId: params.authorId ?? null,
          ...postStateFor(outline ? 'DRAFT' : params.status),
          // Scheduled: a draft until then, published as the batch's status says (a time already past publishes now).
          ...(params.publishAt !== undefined && !outline && { isDraft: true, publishAt: new Date(params.publishAt) }),
          featureImage: image,
          featureImageAlt: image ? (params.featureImageAlt ?? null) : null,
        },
        { generatorProvider: result.provider, generatorModel: result.model, sourceTaskId: job.id },
        new Date(),
      );
      return { postId: post.id, missingFileIds, notes: result.notes ?? [], outline, keptAsDraft };
    },
  };
}
