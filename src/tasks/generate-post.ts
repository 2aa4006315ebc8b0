import type { Executor } from '../db/client.js';
import { writeGroundedPost, type GroundedPost, type GroundingDeps } from '../generation/grounded.js';
import type { JobHandler } from '../jobs/loop.js';
import { then, type MaybePromise } from '../maybe.js';
import type { PostInput, PostOrigin, PostRow } from '../posts/store.js';
import { postStateFor, type TaskParams } from './batch.js';

export const GENERATE_POST = 'generate-post';

/** The payload of a batch task: the topic and the options merged over the batch's defaults. */
export interface GeneratePostPayload {
  topic: string;
  params: TaskParams;
}

/** What a succeeded task records: the post it made and the selected files that had gone. */
export interface GeneratePostResult {
  postId: string;
  missingFileIds: string[];
}

/**
 * Where a task's post goes: PostService (SQLite, inserting at once in its synchronous
 * transaction) or PgPostStore (PostgreSQL, answering a promise), inside the caller's transaction.
 */
export interface PostInserter<Tx> {
  insert(tx: Tx, siteId: string, input: PostInput, origin: PostOrigin): MaybePromise<PostRow>;
}

/**
 * A batch task: write the post with the same generator as the generate endpoint, then insert
 * it in the transaction that marks the task succeeded (the post's `sourceTaskId` is unique, so
 * a task never makes two posts).
 */
export function generatePostHandler<Tx = Executor>(deps: GroundingDeps & { posts: PostInserter<Tx> }): JobHandler<GeneratePostPayload, GroundedPost, Tx> {
  return {
    kind: GENERATE_POST,
    run: ({ topic, params }, signal, job) => writeGroundedPost(deps, job.siteId, { ...params, topic }, signal),
    complete(tx, { result, missingFileIds }, job) {
      const { params } = job.payload;
      const generated = result.post;
      const inserted = deps.posts.insert(
        tx,
        job.siteId,
        {
          title: generated.title,
          description: generated.description,
          content: generated.content,
          category: params.category ?? generated.category,
          tags: params.tags ?? generated.tags,
          authorId: params.authorId ?? null,
          ...postStateFor(params.status),
        },
        { generatorProvider: result.provider, generatorModel: result.model, sourceTaskId: job.id },
      );
      return then(inserted, (post): GeneratePostResult => ({ postId: post.id, missingFileIds }));
    },
  };
}
